"""MD110 (gpu.mlx_cuda) against the fake ``pynvml``: an MLX build without CUDA on a GPU host."""

from __future__ import annotations

import json

from tests.checks.test_gpu_checks import results
from tests.helpers import require_cpu_mlx, run_cli


def test_mlx_cpu_build_on_a_gpu_host(gpu_env, tmp_path):
    require_cpu_mlx()
    r = run_cli("check", "--only", "MD110", "--json", env=gpu_env())
    w = results(r, "MD110")[0]
    assert w["status"] == "warn" and "is not a CUDA build" in w["summary"], w
    assert "mlx[cuda13]" in w["remediation"]["text"]
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps({"backend": "nccl", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 2})
    )
    r = run_cli("check", "--only", "MD110", "--hostfile", str(hf), "--json", env=gpu_env())
    assert r.rc == 1 and results(r, "MD110")[0]["status"] == "fail"


def _cuda_build(tmp_path, available: bool) -> str:
    """A fake interpreter answering as MLX 0.32.4's CUDA build (mlx-cuda-13) does; with
    ``available`` False, as it does when no GPU is visible to the process."""
    import stat
    import sys

    answer = {
        "python": "3.12.0",
        "executable": sys.executable,
        "installed": True,
        "version": "0.32.4",
        "path": str(tmp_path),
        "libs": [],
        "backends": {"ring": True, "jaccl": False, "mpi": False, "nccl": True},
        "cuda": {"available": available, "packages": ["mlx-cuda-13==0.32.4"]},
    }
    exe = tmp_path / "python-mlx-cuda"
    exe.write_text("#!/bin/sh\ncat <<'JSON'\n" + json.dumps(answer) + "\nJSON\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_an_empty_cuda_visible_devices_is_named_not_a_missing_mlx(gpu_env, tmp_path):
    # measured on an H200 with MLX 0.32.4's CUDA build: CUDA_VISIBLE_DEVICES= (empty) made
    # MD110 say MLX is not a CUDA build / not importable, and MD111 count 1 GPU
    env = gpu_env(
        "one-gpu", CUDA_VISIBLE_DEVICES="", MESHDOCTOR_PYTHON=_cuda_build(tmp_path, False)
    )
    r = run_cli("check", "--only", "MD110,MD111", "--json", env=env)
    (cuda,) = results(r, "MD110")
    assert (
        cuda["status"] == "fail" and "CUDA_VISIBLE_DEVICES='' hides all 1 GPU(s)" in cuda["summary"]
    )
    assert "pip install" not in cuda["remediation"]["text"]
    assert "unset CUDA_VISIBLE_DEVICES" in cuda["remediation"]["text"]
    (dev,) = results(r, "MD111")
    assert dev["status"] == "warn" and "see 0 of the 1 GPU(s)" in dev["summary"]
    # the same build with the GPU visible is fine, and its count is the one the ranks see
    env = gpu_env(
        "one-gpu", CUDA_VISIBLE_DEVICES="0", MESHDOCTOR_PYTHON=_cuda_build(tmp_path, True)
    )
    r = run_cli("check", "--only", "MD110,MD111", "--json", env=env)
    assert results(r, "MD110")[0]["status"] == "ok", r.outcome()
    assert "CUDA_VISIBLE_DEVICES='0' shows all of them" in results(r, "MD111")[0]["summary"]
