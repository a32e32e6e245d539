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
