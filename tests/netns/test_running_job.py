"""Hands off a live job, across three network-namespace hosts over real ssh (each host its own
PID namespace): a rank of a running job (its launcher shell alive) on h2 makes ``check`` say in
one line that the mesh is in use, ``probe`` refuse to launch naming the job, unless
``--beside-running-job``, and ``fix stale-ranks`` leave it alone without ``--include-running``."""

from __future__ import annotations

import json
import os
import sys
import uuid

import pytest

from tests import netns
from tests.fixes.test_stale_ranks import SLEEP
from tests.helpers import run_cli
from tests.netns.test_fix import _alive, _start

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

PROBE = ("--size", "1MiB", "--iters", "2", "--op", "all_sum", "--json")


@pytest.fixture
def bed(tmp_path):
    with netns.TestBed(3) as tb:
        hf = tmp_path / "hosts.json"
        hf.write_text(json.dumps([{"ssh": h, "ips": [tb.ips[h]]} for h in tb.hosts]))
        tb.hostfile = hf
        tb.token = f"t-{uuid.uuid4().hex[:10]}"
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env.update(
            MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config),
            MESHDOCTOR_REMOTE_PYTHON=sys.executable,
            MESHDOCTOR_FIX_SCOPE=tb.token,
            MESHDOCTOR_STATE_DIR=str(tmp_path / "state"),
        )
        yield tb


def test_a_running_job_on_one_host_keeps_probe_and_fix_off_it(bed):
    pytest.importorskip("mlx.core")
    job = _start(bed, "h2", SLEEP, "MLX_RANK=2", running=True)
    try:
        _hands_off(bed, job)
    finally:
        bed.ssh("h2", f"kill -KILL {job}")


def _hands_off(bed, job: int) -> None:
    chk = run_cli("check", "--hostfile", str(bed.hostfile), env=bed.env, timeout=180)
    lines = [ln for ln in chk.out.splitlines() if "the mesh is in use" in ln]
    assert len(lines) == 1, chk.out
    assert f"h2 (rank 2 pid {job}, launched by pid" in lines[0]

    r = run_cli("probe", "--hostfile", str(bed.hostfile), *PROBE, env=bed.env, timeout=240)
    assert r.rc == 1, r.outcome()
    assert "probe" not in r.doc  # nothing launched
    refused = r.results("MD411")
    assert refused and refused[0]["status"] == "fail", r.doc["results"]
    assert refused[0]["summary"].startswith("not launched: the mesh is in use")
    assert f"rank 2 pid {job}" in refused[0]["summary"]
    assert "--beside-running-job" in refused[0]["remediation"]["text"]
    assert _alive(bed, "h2", job)

    fix = run_cli(
        "fix",
        "stale-ranks",
        "--hostfile",
        str(bed.hostfile),
        "--yes",
        "--json",
        env=bed.env,
        timeout=180,
    )
    assert fix.rc == 0, fix.outcome()
    assert _alive(bed, "h2", job)  # a running job's rank: left alone without --include-running

    beside = run_cli(
        "probe",
        "--hostfile",
        str(bed.hostfile),
        "--beside-running-job",
        *PROBE,
        env=bed.env,
        timeout=240,
    )
    assert beside.rc == 0, beside.outcome()
    assert beside.doc["probe"]["world_size"] == 3
    assert _alive(bed, "h2", job)
