"""MD102 (mlx.runtime): known-bad MLX versions, and a hostfile backend the build lacks."""

from __future__ import annotations

import json
import sys

import pytest

from meshdoctor.checks.mlx_runtime import known_bad
from tests import fakemlx
from tests.helpers import run_cli, write


def test_known_bad_versions():
    assert known_bad((0, 32, 4), "ring") == []
    assert known_bad((0, 32, 4), "jaccl") == []
    ring = known_bad((0, 32, 0), "ring")
    # MLX PR #4281 (2 GiB transfers) and PR #4558 (cached non-strict init) join mlx #4060
    assert [b["fixed_in"] for b in ring] == ["0.32.1", "0.32.1", "0.32.4"]
    assert "hang forever" in ring[0]["reason"] and "errno 22" in ring[1]["reason"]
    j = {b["fixed_in"] for b in known_bad((0, 30, 3), "jaccl")}
    assert {"0.30.4", "0.32.0", "0.32.1"} <= j
    assert [b["fixed_in"] for b in known_bad((0, 29, 0), "jaccl")][0] == "0.30.1"
    assert known_bad((), "jaccl") == []


@pytest.mark.parametrize("backend", ["nccl", "mpi"])
def test_md102_fails_for_any_hostfile_backend_the_build_lacks(tmp_path, clean_env, backend):
    import mlx.core as mx

    if mx.distributed.is_available(backend=backend):
        pytest.skip(f"this MLX build has {backend}")
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            {
                "backend": backend,
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "m2", "ips": ["198.51.100.9"]},
                ],
            }
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD102", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    (res,) = r.results("MD102")
    assert res["status"] == "fail" and r.rc == 1
    assert f"backend {backend} is not available in this build" in res["summary"]


def _md102(tmp_path, env, backend, version, guard=False):
    env = dict(env, **fakemlx.install(tmp_path / "mlx", version, guard=guard))
    hosts = [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": "m2", "ips": ["198.51.100.9"]}]
    if backend.startswith("jaccl"):
        hosts[0]["rdma"], hosts[1]["rdma"] = [None, "rdma_en2"], ["rdma_en2", None]
    hf = write(tmp_path / "h.json", json.dumps({"backend": backend, "hosts": hosts}))
    r = run_cli(
        "check", "--json", "--only", "MD102", "--local-only", "--hostfile", str(hf), env=env
    )
    (res,) = r.results("MD102")
    return res


def test_md102_warns_of_jaccl_ring_all_gather_wrong_data_in_0_32_2(tmp_path, clean_env):
    # MLX PR #4443: 0.32.1-0.32.2 never sent the upper half of each peer's region
    res = _md102(tmp_path, clean_env, "jaccl-ring", "0.32.2")
    assert res["status"] == "warn"
    assert "all_gather returns wrong data" in res["summary"] and "MLX PR #4443" in res["summary"]
    assert "(fixed in 0.32.3)" in res["summary"]
    assert "Upgrade MLX to 0.32.4 or later" in res["remediation"]["text"]


def test_md102_warns_of_2_gib_ring_transfers_before_0_32_1(tmp_path, clean_env):
    res = _md102(tmp_path, clean_env, "ring", "0.31.1")
    assert res["status"] == "warn" and "2 GiB or more fails with errno 22" in res["summary"]


def test_md102_says_no_released_mlx_has_the_progress_guard(tmp_path, clean_env):
    res = _md102(tmp_path, clean_env, "jaccl", "0.32.4")
    assert res["status"] == "warn" and "no progress guard" in res["summary"]
    assert "no released MLX has the JACCL progress guard" in res["remediation"]["text"]
    assert "MLX PR #4530 is open" in res["remediation"]["text"]


def test_an_mlx_import_that_overran_a_short_deadline_is_not_assessed(clean_env, tmp_path):
    # reported: `MESHDOCTOR_MLX_CACHE=0 check --timeout 0.1 --only MD102` was a critical fail
    # with reboot advice; an overrun proves a slow machine, not a hang: error, exit 3. The
    # interpreter inspected starts 2 s late, so the import overruns its 45 ms whatever the
    # machine's speed (a warm import alone can finish inside it).
    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep 2\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    env = dict(clean_env, MESHDOCTOR_MLX_CACHE="0", MESHDOCTOR_PYTHON=str(slow))
    r = run_cli("check", "--timeout", "0.1", "--only", "MD102", env=env)
    assert r.rc == 3, r.out
    assert "did not finish in time (not assessed)" in r.out and "reboot" not in r.out
    assert "--timeout 45" in r.out and "UNKNOWN (exit 3)" in r.out


def test_an_mlx_import_that_overran_the_long_deadline_is_a_hang(monkeypatch):
    from meshdoctor import execute
    from meshdoctor.checks import mlx_runtime
    from meshdoctor.facts import mlx_build
    from meshdoctor.facts.context import HANG_PROOF_S, NodeContext

    hung = execute.CommandResult(["python"], None, "", "", HANG_PROOF_S + 0.1, timed_out=True)
    slow = execute.CommandResult(["python"], None, "", "", 4.5, timed_out=True)
    for res, status in ((hung, "fail"), (slow, "error")):
        ctx = NodeContext(platform="linux")
        monkeypatch.setattr(ctx, "command", lambda *a, res=res, **k: res)
        monkeypatch.setattr(mlx_build.mlx_cache, "enabled", lambda platform: False)
        (f,) = list(mlx_runtime.run(ctx))
        assert f.status == status, (res, f)
