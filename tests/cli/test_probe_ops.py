"""all_max, all_min and sum_scatter through real MLX ranks over loopback (ring backend): exact
values, nccl-tests bus factors, and an op the backend lacks is a skip naming the MLX version that
adds it, never a usage error."""

from __future__ import annotations

import pytest

from meshdoctor.probe import worker
from meshdoctor.probe.figures import bus_factor
from tests.helpers import run_cli


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


def test_sum_scatter_expected_values_match_mlx_documented_semantics():
    """No backend on this machine has sum_scatter (ring lacks it), so the worker's expected
    values are checked against MLX's documented definition, all_sum(x)[rank*c:(rank+1)*c], with
    real MLX arrays: three ranks' workers in one process, the collective computed from their
    real inputs."""
    import types

    import mlx.core as mx

    n, size = 3, 4096 * 3 + 8  # not a multiple of n elements: the share is rounded down
    inputs = {}

    class Dist:
        def __init__(self, rank):
            self.rank = rank

        def sum_scatter(self, x, group=None, stream=None):
            inputs[self.rank] = x
            total = sum(worker_of[k].mine(x.size) for k in range(n))  # every rank's real input
            c = x.size // n
            return total[self.rank * c : (self.rank + 1) * c]

    worker_of = {}
    for r in range(n):
        fake = types.SimpleNamespace(
            **{k: getattr(mx, k) for k in dir(mx) if not k.startswith("__")}
        )
        fake.distributed = Dist(r)
        worker_of[r] = worker.Worker(
            fake, {"world_size": n, "size": size, "dtype": "float32"}, r, lambda *a, **k: None, []
        )
    for r in range(n):
        call, check, nbytes, _ = worker_of[r].case("sum_scatter")
        y = call()
        c = (size // 4) // n
        assert y.size == c and check(y) == 0
        assert nbytes == n * c * 4  # nccl-tests reduce_scatter: the whole input
        assert inputs[r].size == n * c
    # a wrong share is counted element by element
    call, check, _, _ = worker_of[1].case("sum_scatter")
    assert check(call() + 1) == (size // 4) // n


def test_support_table_and_bus_factors():
    assert worker.unsupported("sum_scatter", "ring", "0.32.4").startswith(
        "the ring backend has no sum_scatter (MLX 0.32.4)"
    )
    assert worker.unsupported("sum_scatter", "jaccl", "0.32.0") == (
        "the jaccl backend adds sum_scatter in MLX 0.32.1; this is MLX 0.32.0 (jaccl has it "
        "from MLX 0.32.1, nccl has it; ring and mpi do not)"
    )
    assert worker.unsupported("sum_scatter", "jaccl", "0.32.1") is None
    assert worker.unsupported("sum_scatter", "jaccl-ring", "0.32.4") is None
    assert worker.unsupported("sum_scatter", "nccl", "0.32.4") is None
    assert worker.unsupported("send_recv", "nccl", "0.32.4").startswith(
        "the nccl backend has no send_recv"
    )
    assert worker.unsupported("all_max", "ring", "0.30.1") is None
    assert bus_factor("sum_scatter", 4) == pytest.approx(0.75)
    assert bus_factor("all_min", 4) == pytest.approx(1.5)
