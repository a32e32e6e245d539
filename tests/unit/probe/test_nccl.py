"""The probe's nccl backend where no GPU exists: mlx.launch's environment contract, the default
backend, ports, the worker's send/recv skip, and classification of what NCCL and CUDA print
(lines captured from MLX 0.32.4's nccl ranks on 2 H200s). Probes through the CLI are in
tests/cli/test_probe_nccl.py, the GPU runs themselves in tests/gpu/test_gpu_nccl.py (marked
gpu)."""

from __future__ import annotations

import json
import socket
from collections import deque

import pytest

from meshdoctor import signatures
from meshdoctor.hostfile.load import parse
from meshdoctor.probe import config, culprits, env as envmod, worker
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome
from meshdoctor.probe.ports import PreflightError, nccl_port
from meshdoctor.probe.setup import ProbeSetupError, default_backend
from tests.unit.probe.test_units import _cfg
from tests.helpers import require_cpu_mlx

TWO_BY_TWO = {
    "backend": "nccl",
    "envs": ["NCCL_NVLS_ENABLE=0"],
    "hosts": [
        {"ssh": "gpu-a", "ips": ["10.0.0.1"]},
        {"ssh": "gpu-a", "ips": ["10.0.0.1"]},
        {"ssh": "gpu-b", "ips": ["10.0.0.2"]},
        {"ssh": "gpu-b", "ips": ["10.0.0.2"]},
    ],
}

# Captured on 2x H200 with mlx 0.32.4 (mlx-cuda-13), NCCL_SOCKET_IFNAME set to a missing
# interface: MLX printed the first line to stderr and exited 1; NCCL wrote the second to stdout.
NCCL_ERROR_LINE = (
    "NCCL error /home/runner/work/mlx/mlx/mlx/distributed/nccl/nccl.cpp:146 "
    "'invalid usage (run with NCCL_DEBUG=WARN for details)'"
)
NCCL_WARN_LINE = (
    "[2026-11-30 03:02:24] vm:1042:1042 [0] bootstrap.cc:114 NCCL WARN "
    "Bootstrap : no socket interface found"
)


def test_nccl_environment_follows_mlx_launch():
    hf = parse(json.dumps(TWO_BY_TWO))
    env, files = envmod.backend_env(hf, "nccl", port=23456)
    assert env == {"NCCL_HOST_IP": "10.0.0.1", "NCCL_PORT": "23456", "MLX_WORLD_SIZE": "4"}
    assert files == {}
    plan = {"backend": "nccl"}
    per = [
        envmod.rank_env(hf, r, run_id="md-probe-x", plan=plan, shared_env=env, files=files)
        for r in range(4)
    ]
    assert [e["CUDA_VISIBLE_DEVICES"] for e in per] == ["0", "1", "0", "1"]
    assert [e["MLX_RANK"] for e in per] == ["0", "1", "2", "3"]
    assert all(e["NCCL_NVLS_ENABLE"] == "0" and e["MLX_WORLD_SIZE"] == "4" for e in per)
    assert envmod.backend_env(hf, "nccl")[0]["NCCL_PORT"] == "12345"  # mlx.launch default
    # the ring and jaccl contracts carry no CUDA_VISIBLE_DEVICES
    assert "CUDA_VISIBLE_DEVICES" not in envmod.rank_env(
        hf, 1, run_id="x", plan={"backend": "ring"}, shared_env={}, files={}
    )


def test_local_ranks_get_one_gpu_each_whatever_name_they_use():
    hf = parse(
        json.dumps(
            {
                "backend": "nccl",
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]},
                    {"ips": ["127.0.0.1"]},
                ],
            }
        )
    )
    assert [envmod.local_rank(hf, r) for r in range(3)] == [0, 1, 2]


def test_nccl_needs_rank0_ip():
    hf = parse(json.dumps({"backend": "nccl", "hosts": [{"ssh": "a"}, {"ssh": "b"}]}))
    with pytest.raises(envmod.EnvError, match="NCCL_HOST_IP"):
        envmod.backend_env(hf, "nccl")


def test_nccl_port_choice():
    hf = config.local_hostfile(2, "nccl")
    assert nccl_port(hf, [True, True], 4242) == 4242
    port = nccl_port(hf, [True, True], None)
    with socket.socket() as s:  # free when handed out
        s.bind(("127.0.0.1", port))
    assert 20000 <= nccl_port(parse(json.dumps(TWO_BY_TWO)), [False] * 4, None) < 60000
    mine = parse(
        json.dumps(
            {
                "backend": "nccl",
                "hosts": [
                    {"ssh": "localhost", "ips": ["192.0.2.77"]},
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                ],
            }
        )
    )
    with pytest.raises(PreflightError, match="NCCL_HOST_IP"):
        nccl_port(mine, [True, True], None)


def test_setup_nccl_with_n_and_pairs_unsupported():
    cfg = _cfg(backend="nccl", nranks=2)
    assert cfg.backend == "nccl" and cfg.hostfile.backend == "nccl"
    assert cfg.ops == ["all_sum", "all_gather", "send_recv", "all_max", "all_min", "sum_scatter"]
    assert config.plan_pairs(3, "nccl") == ([], [[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]])
    with pytest.raises(ProbeSetupError, match="jaccl needs a hostfile"):
        _cfg(backend="jaccl", nranks=2)


def test_default_backend_follows_the_cuda_build(tmp_path, monkeypatch):
    drv = tmp_path / "version"
    drv.write_text("NVRM version: 580.159.04\n")
    cuda_py = tmp_path / "python-cuda"  # an interpreter whose packages include mlx-cuda-13
    cuda_py.write_text("#!/bin/sh\necho mlx-cuda-13\n")
    cuda_py.chmod(0o755)
    monkeypatch.setenv("MESHDOCTOR_NVIDIA_DRIVER_FILE", str(tmp_path / "absent"))
    assert default_backend(str(cuda_py)) == "ring"  # no driver: never nccl
    monkeypatch.setenv("MESHDOCTOR_NVIDIA_DRIVER_FILE", str(drv))
    assert default_backend(str(cuda_py)) == "nccl"
    require_cpu_mlx()
    assert default_backend() == "ring"  # this interpreter has the CPU build
    cfg = _cfg(python=str(cuda_py))
    assert cfg.backend == "nccl" and cfg.hostfile.backend == "nccl"
    ring = _cfg(python=str(cuda_py), backend="ring")
    assert ring.backend == "ring"


def test_worker_skips_send_recv_on_nccl_before_touching_the_group():
    import mlx.core as mx

    got = []
    w = worker.Worker(
        mx,
        {"backend": "nccl", "world_size": 2, "size": 1024},
        0,
        lambda ev, **f: got.append((ev, f)),
        [],
    )
    assert w.gpu and w.stream == mx.gpu
    w.run_op("send_recv")
    assert got[0][0] == "result" and "nccl backend has no send_recv" in got[0][1]["skipped"]
    assert worker.Worker(mx, {"backend": "ring"}, 0, lambda *a, **k: None, []).stream == mx.cpu


def test_nccl_messages_classified():
    codes = {m.code for m in signatures.classify(NCCL_WARN_LINE)}
    assert "MD653" in codes
    cases = {
        "NCCL error nccl.cpp:146 'unhandled system error (run with NCCL_DEBUG=INFO)'": "MD681",
        "NCCL error nccl.cpp:146 'unhandled cuda error (run with NCCL_DEBUG=INFO)'": "MD682",
        "NCCL error nccl.cpp:99 'remote process exited or there was a network error'": "MD683",
        "CUDA error: out of memory": "MD651",
    }
    for line, code in cases.items():
        assert code in {m.code for m in signatures.classify(line)}, line


def _rank(rank, rc, stderr=(), noise=()):
    st = RankState(rank, "localhost", pid=1000 + rank, returncode=rc, exited_at=float(rank))
    st.stderr = deque(stderr)
    st.noise = deque(noise)
    st.ready = {"mlx": "0.32.4"}
    st.last_step = {"op": "all_sum", "phase": "timed", "iter": 2, "seq": 9}
    return st


def test_silent_nccl_exit_is_named_from_its_output():
    st = _rank(0, 1, [NCCL_ERROR_LINE], [NCCL_WARN_LINE])
    assert "MD653" in [m.code for m in culprits.rank_signatures(st)]  # stdout is read
    assert "NCCL WARN Bootstrap : no socket interface found" in culprits.how(st, 1)
    bare = _rank(1, 1, [NCCL_ERROR_LINE])
    assert NCCL_ERROR_LINE in culprits.how(bare, 1)  # no signature: its last stderr line


def test_remote_error_is_a_consequence_the_cause_is_named():
    cause = _rank(1, 1, ["NCCL error nccl.cpp:146 'unhandled cuda error'"])
    peer = _rank(
        0, 1, ["NCCL error nccl.cpp:146 'remote process exited or there was a network error'"]
    )
    peer.exited_at = 5.0
    out = LaunchOutcome("dead", "md-probe-x", [peer, cause], {}, 5.0, early_exits={0: 1, 1: 1})
    assert [s.rank for s in culprits.culprits(out)] == [1]


def test_fault_switch_inside_a_step():
    assert worker.parse_faults("stop-in:1:11,kill-in:0:5,bogus:1") == [
        ("stop-in", 1, 11),
        ("kill-in", 0, 5),
    ]
