"""GPU node checks together (MD110-MD114) against a fake ``pynvml`` shaped like NVIDIA's own
(tests/fake_nvml/pynvml.py, through the ``gpu_env`` fixture of tests/checks/conftest.py): a
healthy pair of H200s, and no NVML import at all on a host without an NVIDIA driver. Each
check's own tests: tests/checks/test_gpu_<check>.py and test_nccl_environment.py."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import run_cli

GPU_CODES = "MD110,MD111,MD112,MD113,MD114"


def results(run, code):
    return [r for r in run.doc["results"] if r["code"] == code]


def test_healthy_gpus_pass(gpu_env):
    r = run_cli("check", "--only", "MD111,MD112,MD113,MD114", "--json", env=gpu_env())
    assert r.rc == 0, (r.out, r.err)
    assert all(x["status"] == "ok" for x in r.doc["results"]), r.doc["results"]
    assert "2 GPU(s) (NVIDIA H200)" in results(r, "MD111")[0]["summary"]
    health = results(r, "MD113")[0]["summary"]
    assert "NVLink 18 of 18 links active on each" in health, health
    # the driver's reserved memory is not "used" (NVML memory v2, as nvidia-smi shows it)
    assert "GPU 0 0 MiB, GPU 1 0 MiB" in results(r, "MD112")[0]["summary"]


def test_no_driver_never_imports_nvml(tmp_path, clean_env):
    poison = tmp_path / "poison"
    poison.mkdir()
    marker = tmp_path / "imported"
    (poison / "pynvml.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    env = dict(
        clean_env,
        MESHDOCTOR_NVIDIA_DRIVER_FILE=str(tmp_path / "absent"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(poison), clean_env.get("PYTHONPATH")])),
    )
    r = run_cli("check", "--only", GPU_CODES, "--json", env=env)
    assert r.rc == 0, (r.out, r.err)
    assert {x["code"]: x["status"] for x in r.doc["results"]} == {
        "MD110": "skip",
        "MD111": "skip",
        "MD112": "skip",
        "MD113": "skip",
        "MD114": "ok",
    }
    code = (
        "import sys, meshdoctor.facts.nvml as n; from meshdoctor.probe.setup import "
        "default_backend; assert n.read_all()['driver'] is False; "
        "assert n.memory_after([1]) is None; assert default_backend() == 'ring'; "
        "print('pynvml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr
    assert not marker.exists()
