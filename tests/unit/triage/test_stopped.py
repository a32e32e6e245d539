"""Where a log stops (meshdoctor.triage.stopped), on the shapes NCCL, nccl-tests and a job's
own progress lines take (NCCL_DEBUG=INFO init lines; nccl-tests' README output)."""

from __future__ import annotations

from meshdoctor.triage import stopped

TESTS_HEAD = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
    "iters: 20 agg iters: 1 validation: 1 graph: 0"
)
ROW = "{:>12}  {:>12}     float     sum      -1    18.63    0.00    0.00      0    18.35    0.00    0.00      0"


def numbered(*lines: str):
    return list(enumerate(lines, 1))


def test_nccl_tests_table_short_of_max_bytes():
    got = stopped.where(numbered(TESTS_HEAD, ROW.format(8, 2), ROW.format(16, 4)))
    assert got.shape == "nccl-tests" and got.lineno == 3
    assert "16-byte row" in got.here and "NCCL_P2P_DISABLE=1" in got.hint


def test_nccl_tests_table_that_finished_is_no_stop():
    done = "# Avg bus bandwidth    : 0.00345"
    assert stopped.where(numbered(TESTS_HEAD, ROW.format(8, 2), done)) is None


def test_init_that_completed_is_no_stop():
    lines = numbered(
        "h1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "h1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
    )
    assert stopped.where(lines) is None


def test_init_that_stops_in_channel_setup_across_hosts():
    lines = numbered(
        "h1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "h2:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0",
    )
    got = stopped.where(lines)
    assert got.shape == "nccl-init" and "connecting each channel" in got.here
    assert "NCCL_IB_DISABLE=1" in got.hint


def test_every_rank_announcing_a_step_that_never_ended():
    got = stopped.where(numbered("rank 0 ready", "calling sum_scatter"))
    assert got.shape == "announced" and "'sum_scatter'" in got.here


def test_an_error_line_that_reads_like_a_step_is_no_announcement():
    """asyncio's 'Connect call failed (...)' holds 'call': an error, not a step begun."""
    last = "ClientConnectorError: Cannot connect to host 10.0.0.5:52415 [Connect call failed ('10.0.0.5', 52415)]"
    assert stopped.where(numbered("rank 0 ready", last)) is None


def test_output_after_the_announcement_is_no_stop():
    assert stopped.where(numbered("calling sum_scatter", "result: 6.0")) is None


def test_a_bare_command_across_continuation_lines():
    got = stopped.where(
        numbered("mpirun -np 2 \\", "  -x NCCL_DEBUG=INFO \\", "  ./all_reduce_perf")
    )
    assert got.shape == "command" and "NCCL's init lines" in got.here
