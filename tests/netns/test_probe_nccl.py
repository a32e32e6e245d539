"""The nccl environment contract over ssh: two network-namespace hosts (tests/netns/), each
rank started through ssh exactly as on a GPU cluster. The ranks' interpreter is a wrapper that
records the environment it was given, then runs Python; this MLX has no nccl, so the group
fails to form, and the verdict must say so and leave nothing behind."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests import netns
from tests.helpers import run_cli

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")


def test_nccl_environment_reaches_remote_ranks(tmp_path):
    with netns.TestBed(2) as tb:
        hf = tb.dir / "hosts.json"
        hf.write_text(
            json.dumps(
                {"backend": "nccl", "hosts": [{"ssh": h, "ips": [tb.ips[h]]} for h in tb.hosts]}
            )
        )
        wrapper = tmp_path / "python-wrapper"
        # rank 0 fails at once on this CPU build: it waits (at most 60 s) until rank 1 has
        # started, so the teardown after its failure never stops rank 1 before its environment
        # is read (a loaded box starts rank 1's ssh late)
        wrapper.write_text(
            f"#!/bin/sh\nenv > {tmp_path}/env-$MLX_RANK.txt\n"
            f'i=0; while [ "$MLX_RANK" = 0 ] && [ ! -s {tmp_path}/env-1.txt ] && [ $i -lt 600 ]; '
            "do sleep 0.1; i=$((i+1)); done\n"
            f'exec {sys.executable} "$@"\n'
        )
        wrapper.chmod(0o755)
        env = dict(
            os.environ,
            MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config),
            MESHDOCTOR_REMOTE_PYTHON=str(wrapper),
        )
        r = run_cli(
            "probe",
            "--hostfile",
            str(hf),
            "--op",
            "all_sum",
            "--size",
            "4096",
            "--port",
            "24680",
            "--no-check",
            "--json",
            env=env,
            timeout=180,
        )
        for h in tb.hosts:
            ps = tb.ssh(h, "ps -eo args=").stdout
            assert "md-probe-" not in ps, ps
    assert r.rc == 1, r.outcome()
    group = r.results("MD501")[0]
    assert group["status"] == "fail" and "group formation (nccl, 2 ranks)" in group["summary"]
    assert {m["code"] for rk in r.doc["probe"]["ranks"] for m in rk["signatures"]} >= {"MD623"}
    seen = []
    for rank in (0, 1):
        kv = dict(
            line.split("=", 1)
            for line in (tmp_path / f"env-{rank}.txt").read_text().splitlines()
            if "=" in line
        )
        seen.append(
            {
                k: kv.get(k)
                for k in (
                    "MLX_RANK",
                    "MLX_WORLD_SIZE",
                    "NCCL_HOST_IP",
                    "NCCL_PORT",
                    "CUDA_VISIBLE_DEVICES",
                )
            }
        )
    h0 = tb.ips[tb.hosts[0]]
    assert seen == [
        {
            "MLX_RANK": str(k),
            "MLX_WORLD_SIZE": "2",
            "NCCL_HOST_IP": h0,
            "NCCL_PORT": "24680",
            "CUDA_VISIBLE_DEVICES": "0",
        }
        for k in (0, 1)
    ]
