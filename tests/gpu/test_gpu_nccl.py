"""The nccl backend and the GPU checks on a real GPU host (2+ NVIDIA GPUs, MLX's CUDA build).

Marked ``gpu`` and skipped unless this interpreter's MLX is the CUDA build with CUDA available:
CI has no GPU. Run them on the GPU host: ``pytest -m gpu tests/gpu/``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import run_cli


def _cuda_mlx() -> bool:
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                "import mlx.core as mx, sys; sys.exit(0 if mx.cuda.is_available() else 1)",
            ],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _cuda_mlx(), reason="needs MLX's CUDA build and a GPU"),
]


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    e.setdefault("NCCL_NVLS_ENABLE", "0")
    e.update(kw)
    return e


def by_code(doc, code):
    return [r for r in doc["results"] if r["code"] == code]


def test_gpu_probe_every_op_exact_on_the_gpus():
    r = run_cli(
        "probe", "--backend", "nccl", "-n", "2", "--size", "16MiB", "--json", env=env(), timeout=180
    )
    assert r.rc == 0, (r.out, r.err)
    assert r.doc["probe"]["backend"] == "nccl"
    ops = {f["op"]: f for f in r.doc["probe"]["ops"]}
    for op in ("all_sum", "all_gather", "all_max", "all_min", "sum_scatter"):
        assert ops[op]["wrong"] == 0 and ops[op]["checked"] > 0 and ops[op]["busbw_gbs"] > 1
    assert "nccl backend has no send_recv" in ops["send_recv"]["skipped"]
    left = by_code(r.doc, "MD506")[0]
    assert left["status"] == "ok" and "no GPU memory held by the ranks" in left["summary"]


def test_gpu_default_backend_follows_mlx_launch():
    r = run_cli(
        "probe", "-n", "2", "--op", "all_sum", "--size", "1MiB", "--json", env=env(), timeout=180
    )
    assert r.rc == 0, (r.out, r.err)
    assert r.doc["probe"]["backend"] == "nccl"


# step 11 = all_sum #3 (timed) with one warmup; kill-in / stop-in land a few ms into it, inside
# the 1 GiB NCCL all_sum (about 4 ms on 2 H200s)
def test_gpu_sigkill_inside_all_sum_names_the_rank():
    r = run_cli(
        "probe",
        "--backend",
        "nccl",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "1GiB",
        "--iters",
        "200",
        "--json",
        env=env(MESHDOCTOR_PROBE_FAULT="kill-in:1:11"),
        timeout=180,
    )
    assert r.rc == 1, (r.out, r.err)
    dead = by_code(r.doc, "MD502")[0]
    assert dead["summary"].startswith("rank 1 ") and "SIGKILL" in dead["summary"]
    assert "during all_sum #3" in dead["summary"], dead["summary"]
    assert r.doc["probe"]["detect_s"] < 5 and r.doc["probe"]["leftovers"] == []
    assert "no GPU memory held by the ranks" in by_code(r.doc, "MD506")[0]["summary"]


def test_gpu_sigstop_inside_all_sum_is_a_hang_naming_the_rank():
    r = run_cli(
        "probe",
        "--backend",
        "nccl",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "1GiB",
        "--iters",
        "200",
        "--timeout",
        "4",
        "--json",
        env=env(MESHDOCTOR_PROBE_FAULT="stop-in:1:11"),
        timeout=180,
    )
    assert r.rc == 1, (r.out, r.err)
    hang = by_code(r.doc, "MD503")[0]
    assert "never arrived: rank 1 (process stopped" in hang["summary"], hang["summary"]
    # the kernel already launched finishes on the GPU without its stopped process, so the
    # survivor blocks in all_sum #3 or in the next collective; rank 1 never left step 11
    rank1 = [a for a in hang["evidence"]["hang"]["not_arrived"] if a["rank"] == 1][0]
    assert rank1["in_step"] and rank1["last_seq"] == 11, rank1
    assert "no GPU memory held by the ranks" in by_code(r.doc, "MD506")[0]["summary"]


def test_gpu_check_reads_the_gpus_through_nvml():
    r = run_cli(
        "check", "--only", "MD110,MD111,MD112,MD113,MD114", "--json", env=env(), timeout=120
    )
    assert r.rc in (0, 1), (r.out, r.err)
    assert {x["status"] for x in by_code(r.doc, "MD110")} == {"ok"}
    for code in ("MD111", "MD112", "MD113"):
        assert all(x["status"] not in ("skip", "error") for x in by_code(r.doc, code)), code
