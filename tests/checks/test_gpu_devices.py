"""MD111 (gpu.devices) against the fake ``pynvml``: compute mode, MIG, persistence, count, a hung
NVML."""

from __future__ import annotations

import json

import pytest

from tests.checks.test_gpu_checks import results
from tests.helpers import run_cli


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


@pytest.mark.parametrize("backend", ["ring", "mpi"])
def test_ring_and_mpi_ranks_share_the_gpus(gpu_env, tmp_path, backend):
    # only mlx.launch's nccl backend gives each rank a GPU of its own (CUDA_VISIBLE_DEVICES)
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps({"backend": backend, "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 3})
    )
    r = run_cli("check", "--only", "MD111", "--hostfile", str(hf), "--json", env=gpu_env())
    assert r.rc == 0, r.out
    got = results(r, "MD111")[0]
    assert got["status"] == "ok" and "3 rank(s) here" in got["summary"], got
    assert f"the {backend} backend: ranks share the GPUs" in got["summary"], got


def test_nvml_that_hangs_is_an_error_not_a_hang(gpu_env):
    r = run_cli(
        "check", "--only", "MD111", "--timeout", "2", "--json", env=gpu_env("hang"), timeout=30
    )
    assert r.rc == 3, r.outcome()
    assert r.elapsed < 25, r.elapsed  # bounded: a verdict at all, not NVML's hang
    e = results(r, "MD111")[0]
    assert e["status"] == "error" and "NVML did not answer" in e["summary"]
