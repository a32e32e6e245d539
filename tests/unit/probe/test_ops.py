"""The probe's ops without a run: sum_scatter's expected values, the support table, bus factors."""

from __future__ import annotations

import pytest

from meshdoctor.probe import worker
from meshdoctor.probe.figures import bus_factor


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
