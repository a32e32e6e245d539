"""GPU node checks (MD110-MD114) against a fake ``pynvml`` shaped like NVIDIA's own (tests/
fake_nvml/pynvml.py): a healthy pair of H200s, ECC errors, NVLink links down, an exclusive
compute mode, processes holding GPU memory; and no NVML import at all on a host without an
NVIDIA driver."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_cpu_mlx, run_cli

FAKE_DIR = Path(__file__).resolve().parents[1] / "fake_nvml"
GPU_CODES = "MD110,MD111,MD112,MD113,MD114"


@pytest.fixture
def gpu_env(tmp_path, clean_env):
    """``gpu_env("ecc", procs="0:123:456")`` -> an environment where a driver is loaded and
    ``pynvml`` is the fake, in that scenario."""
    drv = tmp_path / "nvidia-version"
    drv.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n")

    def make(scenario: str = "healthy", procs: str = "", **extra: str):
        env = {k: v for k, v in clean_env.items() if not k.startswith("NCCL_")}
        env.update(
            {
                "MESHDOCTOR_NVIDIA_DRIVER_FILE": str(drv),
                "FAKE_NVML": scenario,
                "FAKE_NVML_PROCS": procs,
                "PYTHONPATH": os.pathsep.join(
                    [str(FAKE_DIR)] + [p for p in [env.get("PYTHONPATH", "")] if p]
                ),
            }
        )
        env.update(extra)
        return env

    return make


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


def test_ecc_errors_fail_and_name_the_gpu(gpu_env):
    r = run_cli("check", "--only", "MD113", "--json", env=gpu_env("ecc"))
    assert r.rc == 1
    got = {x["status"]: x for x in results(r, "MD113")}
    assert "GPU 1 (NVIDIA H200): 3 volatile uncorrected ECC error(s)" in got["fail"]["summary"]
    assert "row remapping pending" in got["warn"]["summary"]


def test_nvlink_down_names_the_links(gpu_env):
    r = run_cli("check", "--only", "MD113", "--json", env=gpu_env("nvlink-down"))
    assert r.rc == 1
    f = results(r, "MD113")[0]
    assert f["status"] == "fail" and f["host"]
    assert "GPU 1 (NVIDIA H200): NVLink link(s) 4, 5 down (16 of 18 active)" in f["summary"]
    assert f["evidence"]["down"] == [4, 5]


def test_exclusive_compute_mode_warns(gpu_env):
    r = run_cli("check", "--only", "MD111", "--json", env=gpu_env("exclusive"))
    assert r.rc == 0
    w = results(r, "MD111")[0]
    assert (
        w["status"] == "warn"
        and "GPU 0 (NVIDIA H200) is in compute mode Exclusive_Process" in w["summary"]
    )
    assert "-c DEFAULT" in w["remediation"]["text"]
    assert (
        run_cli("check", "--only", "MD111", "--strict", "--json", env=gpu_env("exclusive")).rc == 1
    )


def test_mig_fails_and_persistence_off_warns(gpu_env):
    r = run_cli("check", "--only", "MD111", "--json", env=gpu_env("mig,no-persistence"))
    assert r.rc == 1
    text = " | ".join(f"{x['status']}: {x['summary']}" for x in results(r, "MD111"))
    assert "fail: GPU 1 (NVIDIA H200) has MIG mode on" in text, text
    assert "warn: GPU 0 (NVIDIA H200) has persistence mode off" in text, text


def test_more_ranks_than_gpus_fails(gpu_env, tmp_path):
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps({"backend": "nccl", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 3})
    )
    r = run_cli("check", "--only", "MD111", "--hostfile", str(hf), "--json", env=gpu_env())
    assert r.rc == 1
    assert "puts 3 ranks on this host but it has 2 GPU(s)" in results(r, "MD111")[0]["summary"]


def test_foreign_process_holding_gpu_memory_is_named(gpu_env):
    p = subprocess.Popen(["sleep", "60"])
    try:
        r = run_cli("check", "--only", "MD112", "--json", env=gpu_env(procs=f"0:{p.pid}:{2 << 30}"))
    finally:
        p.kill()
        p.wait()
    assert r.rc == 0
    w = results(r, "MD112")[0]
    assert w["status"] == "warn"
    assert f"GPU 0: pid {p.pid} (sleep) holds 2048 MiB and is not a rank" in w["summary"]
    assert w["remediation"]["command"] == f"kill {p.pid}"


def test_memory_held_by_a_gone_process_needs_a_reset(gpu_env):
    p = subprocess.Popen(["true"])
    p.wait()  # reaped: its pid no longer exists
    r = run_cli("check", "--only", "MD112", "--json", env=gpu_env(procs=f"1:{p.pid}:{1 << 30}"))
    from meshdoctor.checks.gpu_memory_held import in_init_pid_namespace

    f = results(r, "MD112")[0]
    if in_init_pid_namespace():
        assert r.rc == 1 and f["status"] == "fail"
        assert "that process is gone" in f["summary"] and f["evidence"]["needs_reset"]
        assert f["remediation"]["command"] == "sudo nvidia-smi --gpu-reset -i 1"
    else:  # in a container the pid may belong to another pid namespace
        assert f["status"] == "warn" and "not visible from this container" in f["summary"]


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


def test_nccl_variables_left_in_the_shell_warn_with_what_they_do(gpu_env):
    r = run_cli(
        "check",
        "--only",
        "MD114",
        "--json",
        env=gpu_env(
            NCCL_P2P_DISABLE="1",
            NCCL_SOCKET_IFNAME="eth9",
            NCCL_IB_DISABLE="0",
            NCCL_NVLS_ENABLE="0",
        ),
    )
    assert r.rc == 0
    got = {x["evidence"]["variable"]: x for x in results(r, "MD114")}
    assert set(got) == {"NCCL_P2P_DISABLE", "NCCL_SOCKET_IFNAME"}  # IB_DISABLE=0 acts not
    assert "peer-to-peer" in got["NCCL_P2P_DISABLE"]["summary"]
    assert got["NCCL_SOCKET_IFNAME"]["remediation"]["text"].startswith("unset NCCL_SOCKET")
    assert (
        run_cli("check", "--only", "MD114", "--strict", "--json", env=gpu_env(NCCL_DEBUG="INFO")).rc
        == 1
    )


def test_nvml_that_hangs_is_an_error_not_a_hang(gpu_env):
    r = run_cli(
        "check", "--only", "MD111", "--timeout", "2", "--json", env=gpu_env("hang"), timeout=30
    )
    assert r.rc == 3 and r.elapsed < 10
    e = results(r, "MD111")[0]
    assert e["status"] == "error" and "NVML did not answer" in e["summary"]


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


def _fake():
    spec = importlib.util.spec_from_file_location("fake_pynvml", FAKE_DIR / "pynvml.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_snapshot_shapes_from_the_nvml_calls(monkeypatch):
    from meshdoctor.facts import nvml

    monkeypatch.setenv("FAKE_NVML", "healthy,throttle")
    nv = _fake()
    nv.nvmlInit()
    snap = nvml.snapshot(nv)
    assert snap["driver_version"] == "580.159.04" and snap["cuda_driver_version"] == 13000
    g0 = snap["gpus"][0]
    assert g0["memory"] == {"total": 141 << 30, "used": 0, "reserved": 615 << 20}
    assert g0["retired_pages"] is None  # NOT_SUPPORTED is None, not an error
    assert len(g0["nvlink"]) == 18 and all(ln["active"] for ln in g0["nvlink"])
    assert nvml.throttle_names(g0["clock_event_reasons"]) == ["hardware thermal slowdown"]
    assert snap["errors"] == {}


def test_clocks_held_back_during_a_run_are_measured(monkeypatch, tmp_path):
    from meshdoctor.facts import nvml
    from meshdoctor.probe import report

    drv = tmp_path / "version"
    drv.write_text("NVRM\n")
    monkeypatch.setenv("MESHDOCTOR_NVIDIA_DRIVER_FILE", str(drv))
    monkeypatch.setenv("FAKE_NVML", "healthy,throttle")
    monkeypatch.setitem(sys.modules, "pynvml", _fake())
    before = nvml.violation_ns()
    after = nvml.violation_ns()
    assert set(before) == {0, 1} and set(before[0]) == {"power", "thermal"}
    assert nvml.slowdown(before, after) == [{"gpu": 0, "reason": "thermal", "ms": 5.0}]
    assert nvml.slowdown(None, after) == []
    res = report._slowdown_result(nvml.slowdown(before, after))
    assert res.status == "warn" and "GPU 0 thermal 5.0 ms" in res.summary
