"""all_max, all_min and sum_scatter through real MLX ranks over loopback (ring backend): exact
values, nccl-tests bus factors, and an op the backend lacks is a skip naming the MLX version that
adds it, never a usage error; all_gather over three ranks is labelled by the bytes it checked."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli
from tests.cli.test_one_rule import _probe_env


def env_of(clean_env):
    env = dict(clean_env)
    env.pop("MESHDOCTOR_PROBE_FAULT", None)
    return env


@pytest.mark.parametrize("op", ["all_max", "all_min"])
def test_all_max_and_all_min_are_exact_with_all_reduce_bus_factor(clean_env, op):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--op",
        op,
        "--size",
        "1MiB",
        "--iters",
        "2",
        "--json",
        env=env_of(clean_env),
        timeout=120,
    )
    assert r.rc == 0, (r.out, r.err)
    (o,) = r.doc["probe"]["ops"]
    assert o["op"] == op and o["wrong"] == 0
    assert o["checked"] == 3 * 3 * (1 << 18)  # 3 ranks x (1 warmup + 2 timed) x elements
    assert o["bus_factor"] == pytest.approx(4 / 3, abs=1e-4)
    assert o["busbw_gbs"] == pytest.approx(o["algbw_gbs"] * 4 / 3, rel=1e-3, abs=1e-4)
    assert r.doc["probe"]["skipped_ops"] == []


def test_corrupted_data_is_caught_by_all_max(clean_env):
    env = dict(env_of(clean_env), MESHDOCTOR_PROBE_FAULT="corrupt:1")
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--op",
        "all_max",
        "--size",
        "64KB",
        "--iters",
        "1",
        "--json",
        env=env,
        timeout=120,
    )
    assert r.rc == 1, (r.out, r.err)
    (o,) = r.doc["probe"]["ops"]
    assert o["wrong"] > 0  # rank 1's element 0 is one higher than the maximum expected


def test_sum_scatter_on_ring_is_a_skip_naming_the_versions_that_have_it(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--op",
        "sum_scatter",
        "--size",
        "64KB",
        "--json",
        env=env_of(clean_env),
        timeout=120,
    )
    assert r.rc == 3, (r.out, r.err)  # no collective ran: could not assess, not a usage error
    (s,) = r.doc["probe"]["skipped_ops"]
    assert s["op"] == "sum_scatter"
    assert s["reason"].startswith("the ring backend has no sum_scatter (MLX ")
    assert "jaccl has it from MLX 0.32.1, nccl has it" in s["reason"]
    (res,) = [x for x in r.doc["results"] if x["check"] == "probe.sum_scatter"]
    assert res["status"] == "skip" and "MLX 0.32.1" in res["summary"]
    (none,) = [x for x in r.doc["results"] if x["code"] == "MD511"]
    assert none["status"] == "error" and none["check"] == "probe.coverage"
    assert none["summary"].startswith("no collective ran")
    assert [o["op"] for o in none["evidence"]["skipped_ops"]] == ["sum_scatter"]


def test_probe_of_only_unsupported_ops_is_not_a_pass(clean_env):
    """`probe --op sum_scatter` on the ring backend ran no collective: a gate
    `probe --op X || exit 1` must not pass, and the user reads why."""
    r = run_cli("probe", "-n", "2", "--op", "sum_scatter", "--size", "4096", env=env_of(clean_env))
    assert r.rc == 3, (r.out, r.err)
    assert "UNKNOWN (exit 3)" in r.out and "GO (exit 0)" not in r.out
    assert "no collective ran" in r.out
    assert "the ring backend has no sum_scatter" in r.out and "MLX 0.32.1" in r.out


def test_op_all_runs_every_ring_op_and_lists_the_skipped_one(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "64KB",
        "--iters",
        "1",
        "--json",
        env=env_of(clean_env),
        timeout=120,
    )
    assert r.rc == 0, (r.out, r.err)
    ops = {o["op"]: o for o in r.doc["probe"]["ops"]}
    ran = {op for op, o in ops.items() if not o.get("skipped")}
    assert ran == {"all_sum", "all_max", "all_min", "all_gather", "send_recv"}
    assert [s["op"] for s in r.doc["probe"]["skipped_ops"]] == ["sum_scatter"]


def test_a_three_rank_probe_labels_all_gather_by_the_bytes_it_checked(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "4096",
        "--iters",
        "1",
        "--op",
        "all_gather",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert r.rc == 0, (r.out, r.err)
    bw = [x for x in r.doc["results"] if x["code"] == "MD505"][0]["summary"]
    fig = r.doc["probe"]["ops"][0]
    assert fig["size_bytes"] == 4092 and bw.startswith("all_gather 4092B: busbw ")
    assert fig["checked"] == 3 * 2 * (4092 // 4)  # ranks x (warmup + iters) x elements
    assert "0.000 GB/s" not in bw


def test_a_size_rounded_for_the_ranks_says_so_and_why(clean_env):
    # reported: `--op all_gather --size 1MiB -n 3` silently reported 1048572B
    r = run_cli(
        "probe", "--op", "all_gather", "--size", "1MiB", "-n", "3", "--iters", "1",
        env=env_of(clean_env), timeout=120,
    )  # fmt: skip
    assert r.rc == 0, (r.out, r.err)
    assert "size rounded from 1MiB to 1048572B: all_gather splits the message into 3 equal" in r.out
