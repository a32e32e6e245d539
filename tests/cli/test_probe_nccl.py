"""``meshdoctor probe`` and the nccl backend where no GPU exists: the backend missing from a CPU
build, a rank stopped inside an all_sum (the ring stands in for nccl)."""

from __future__ import annotations

from tests.helpers import require_cpu_mlx, run_cli


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
    # the 2 ms after which stop-in stops rank 1, so it stops inside all_sum #3
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
        "--timeout",
        "3",
        "--json",
        env=dict(clean_env, MESHDOCTOR_PROBE_FAULT="stop-in:1:11"),
        timeout=120,
    )
    assert r.rc == 1, (r.out, r.err)
    hang = [x for x in r.doc["results"] if x["code"] == "MD503"][0]
    assert hang["summary"].startswith("all_sum #3 (timed, step 11) hung"), hang["summary"]
    assert "never arrived: rank 1 (process stopped" in hang["summary"]
    rank1 = [a for a in hang["evidence"]["hang"]["not_arrived"] if a["rank"] == 1][0]
    assert rank1["in_step"] and rank1["last_seq"] == 11
