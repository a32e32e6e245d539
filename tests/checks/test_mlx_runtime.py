"""MD102 (mlx.runtime): known-bad MLX versions, and a hostfile backend the build lacks."""

from __future__ import annotations

import json

import pytest

from meshdoctor.checks.mlx_runtime import known_bad
from tests.helpers import run_cli, write


def test_known_bad_versions():
    assert known_bad((0, 32, 4), "ring") == []
    assert known_bad((0, 32, 4), "jaccl") == []
    ring = known_bad((0, 32, 0), "ring")
    assert [b["fixed_in"] for b in ring] == ["0.32.1"] and "hang forever" in ring[0]["reason"]
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
