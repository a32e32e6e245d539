"""MD112 (gpu.memory_held) against the fake ``pynvml``: GPU memory held by a process that is not a
rank."""

from __future__ import annotations

import subprocess

from tests.checks.test_gpu_checks import results
from tests.helpers import run_cli


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
