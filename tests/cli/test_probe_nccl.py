"""``meshdoctor probe`` and the nccl backend where no GPU exists: the backend missing from a CPU
build, a rank stopped inside an all_sum (the ring stands in for nccl)."""

from __future__ import annotations

import os

from tests.helpers import FAKE_DIR, require_cpu_mlx, run_cli


def test_nccl_backend_unavailable_on_a_cpu_build(clean_env):
    require_cpu_mlx()
    r = run_cli(
        "probe",
        "--backend",
        "nccl",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "4096",
        "--json",
        env=clean_env,
        timeout=120,
        private_pids=True,  # beside no other job's rank (probe -n refuses those, MD411)
    )
    assert r.rc == 1, (r.out, r.err)
    group = [x for x in r.doc["results"] if x["code"] == "MD501"][0]
    assert (
        group["status"] == "fail" and "group formation (nccl, 2 ranks) failed" in group["summary"]
    )
    sigs = {m["code"] for rk in r.doc["probe"]["ranks"] for m in rk["signatures"]}
    assert "MD623" in sigs  # "Cannot initialize nccl distributed backend"
    assert r.doc["probe"]["leftovers"] == []


def test_rank_stopped_inside_an_all_sum_is_named(clean_env):
    # the ring stands in for nccl here: a 64 MiB all_sum over loopback takes far longer than
    # the 2 ms after which stop-in stops rank 1, so it stops inside all_sum #3 (step 8: init,
    # the warm-up's barrier and call, the timed batch's barrier, then timed #0 is step 5)
    r = run_cli(
        "probe",
        "--backend",
        "ring",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "64MiB",
        "--iters",
        "20",
        # waited out once, at the stopped step; every barrier before it must pass within it, which
        # took over 3 s beside three CPU burners on a 2-core box
        "--timeout",
        "15",
        "--json",
        env=dict(clean_env, MESHDOCTOR_PROBE_FAULT="stop-in:1:8"),
        timeout=120,
        private_pids=True,
    )
    assert r.rc == 1, (r.out, r.err)
    hang = [x for x in r.doc["results"] if x["code"] == "MD503"][0]
    assert hang["summary"].startswith("all_sum #3 (timed, step 8) hung"), hang["summary"]
    assert "never arrived: rank 1 (process stopped" in hang["summary"]
    rank1 = [a for a in hang["evidence"]["hang"]["not_arrived"] if a["rank"] == 1][0]
    # inside a timed batch a rank's step is known from its heartbeat (every 0.25 s): stopped
    # 2 ms into step 8, it was last seen in the batch, at step 8 at most
    assert rank1["in_step"] and 5 <= rank1["last_seq"] <= 8


def test_more_nccl_ranks_here_than_gpus_is_said_before_any_rank_starts(clean_env, tmp_path):
    # Seen on a one-GPU H200 host: `probe --backend nccl -n 2` started both ranks; rank 1, given
    # CUDA_VISIBLE_DEVICES=1, died in `import mlx.core` with "no CUDA-capable device is
    # detected". Here NVML (the fake: 2 GPUs) is asked first, and 3 local ranks never start.
    drv = tmp_path / "nvidia-version"
    drv.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n")
    env = {k: v for k, v in clean_env.items() if not k.startswith("NCCL_")}
    env.update(
        MESHDOCTOR_NVIDIA_DRIVER_FILE=str(drv),
        FAKE_NVML="healthy",
        PYTHONPATH=os.pathsep.join([str(FAKE_DIR)] + [p for p in [env.get("PYTHONPATH")] if p]),
    )
    r = run_cli(
        "probe", "--backend", "nccl", "-n", "3", "--json", env=env, timeout=120, private_pids=True
    )
    assert r.rc == 1, (r.out, r.err)
    group = [x for x in r.doc["results"] if x["code"] == "MD501"][0]
    assert group["status"] == "fail"
    assert group["summary"].startswith("3 nccl ranks run on this machine but it has 2 GPU(s)")
    assert "rank 2 would see no GPU" in group["summary"]
    assert group["evidence"]["where"] == "hosts[2]"
    assert r.doc["probe"]["outcome"] == "preflight" and r.doc["probe"]["launches"] == 0

    assert "Probe with -n 2 (one nccl rank per GPU)." in group["summary"]
    assert not group["remediation"].get("command")  # no re-run of the command that failed


def test_a_one_gpu_host_is_told_a_way_that_works_not_the_same_command_again(clean_env, tmp_path):
    drv = tmp_path / "nvidia-version"
    drv.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n")
    env = {k: v for k, v in clean_env.items() if not k.startswith("NCCL_")}
    env.update(
        MESHDOCTOR_NVIDIA_DRIVER_FILE=str(drv),
        FAKE_NVML="one-gpu",
        PYTHONPATH=os.pathsep.join([str(FAKE_DIR)] + [p for p in [env.get("PYTHONPATH")] if p]),
    )
    args = ("probe", "--backend", "nccl", "-n", "2", "--size", "4096", "--json")
    r = run_cli(*args, env=env, timeout=120, private_pids=True)
    assert r.rc == 1, (r.out, r.err)
    group = [x for x in r.doc["results"] if x["code"] == "MD501"][0]
    rem = group["remediation"]
    assert "--backend ring" in rem["text"] and "probe again" not in rem["text"], rem
    assert "of the hostfile" not in group["summary"]  # -n has no hostfile
    assert "probe -n 2 --backend nccl" not in (rem.get("command") or "")
