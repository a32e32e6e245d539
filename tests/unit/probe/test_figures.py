"""The probe's figures as pure functions (meshdoctor/probe/figures.py): known result events in,
exact algbw / busbw / times out, in nccl-tests convention (doc/PERFORMANCE.md)."""

from __future__ import annotations

import pytest

from meshdoctor.probe import figures as F


def _res(op, times, size=400_000_000, **kw):
    return dict({"op": op, "size": size, "dtype": "float32", "times": times}, **kw)


def test_bus_factors_follow_nccl_tests():
    assert F.bus_factor("all_sum", 4) == 1.5  # all-reduce 2(n-1)/n
    assert F.bus_factor("all_max", 4) == 1.5 and F.bus_factor("all_min", 2) == 1.0
    assert F.bus_factor("bare_all_sum", 8) == 1.75
    assert F.bus_factor("all_gather", 4) == 0.75  # (n-1)/n
    assert F.bus_factor("sum_scatter", 4) == 0.75  # reduce-scatter (n-1)/n
    assert F.bus_factor("send_recv", 4) == 1.0


def test_algbw_is_bytes_over_1e9_over_seconds():
    assert F.algbw_gbs(400_000_000, 0.2) == pytest.approx(2.0)
    assert F.algbw_gbs(1 << 30, 0.0) == 0.0  # a clock that did not move: no figure, no crash
    assert F.sig5(2.0 / 3) == 0.66667 and F.sig5(2.75e-05) == 2.75e-05


def test_slowest_rank_per_iteration_then_median():
    # per iteration the slowest rank counts: [0.2, 0.2, 0.4] -> median 0.2 s
    per_rank = {
        0: [_res("all_sum", [0.1, 0.2, 0.4], wrong=0, checked=10)],
        1: [_res("all_sum", [0.2, 0.1, 0.3], wrong=0, checked=10)],
        2: [_res("all_sum", [0.05, 0.05, 0.05], wrong=0, checked=10)],
        3: [_res("all_sum", [0.05, 0.05, 0.05], wrong=2, checked=10)],
    }
    (f,) = F.op_figures(per_rank, 4)
    # without a batch time (soak), the median of the slowest laps is the time
    assert f["time_s"] == {"min": 0.2, "median": 0.2, "max": 0.4, "mean": 0.2}
    assert f["algbw_gbs"] == 2.0  # 400e6 B / 1e9 / 0.2 s
    assert f["busbw_gbs"] == 3.0  # x 2(4-1)/4
    assert f["bus_factor"] == 1.5
    assert f["iters"] == 3 and f["ranks_reporting"] == [0, 1, 2, 3]
    assert f["wrong"] == 2 and f["checked"] == 40
    assert f["size_bytes"] == 400_000_000 and f["dtype"] == "float32"


def test_batch_time_is_the_slowest_ranks_average_per_call():
    # nccl-tests: each rank's batch over its iterations, then the maximum over ranks; the laps'
    # slowest-per-iteration (0.3, 0.3) would overstate it, since no rank spent 0.6 s
    per_rank = {
        0: [_res("all_sum", [0.1, 0.3], batch_s=0.4, batches=1, wrong=0, checked=10)],
        1: [_res("all_sum", [0.3, 0.1], batch_s=0.5, batches=1, wrong=0, checked=10)],
    }
    (f,) = F.op_figures(per_rank, 2)
    assert f["time_s"] == {"min": 0.3, "median": 0.3, "max": 0.3, "mean": 0.25}
    assert f["algbw_gbs"] == 1.6  # 400e6 B / 1e9 / 0.25 s
    assert f["busbw_gbs"] == 1.6  # x 2(2-1)/2
    assert "per call" in F.bandwidth_line(f) and "250.0 ms" in F.bandwidth_line(f)


def test_batches_keep_the_checked_outputs_within_the_cap():
    from meshdoctor.probe.worker import RETAIN_BYTES, batch_plan

    assert batch_plan(5, 128 << 20) == [(0, 3), (3, 2)]  # 4 per batch at most: 3 + 2
    assert batch_plan(20, 1 << 20) == [(0, 20)]
    assert batch_plan(40, 1 << 20) == [(0, 20), (20, 20)]  # at most BATCH_MAX_ITERS (32)
    assert batch_plan(3, 2 * RETAIN_BYTES) == [(0, 1), (1, 1), (2, 1)]
    assert batch_plan(0, 1) == []


def test_iterations_are_those_every_rank_reported():
    per_rank = {0: [_res("all_gather", [0.1, 0.2, 9.0])], 1: [_res("all_gather", [0.3, 0.1])]}
    (f,) = F.op_figures(per_rank, 2)
    assert f["iters"] == 2 and f["time_s"]["max"] == 0.3  # the 9 s third iteration is not counted
    assert f["algbw_gbs"] == F.sig5(0.4 / 0.25)
    assert f["busbw_gbs"] == F.sig5(1.6 * 0.5)  # all_gather (n-1)/n


def test_small_bandwidth_keeps_five_significant_digits():
    (f,) = F.op_figures({0: [_res("send_recv", [3.0], size=1000)]}, 2)
    assert f["algbw_gbs"] == 3.3333e-07 and f["busbw_gbs"] == 3.3333e-07


def test_untimed_and_skipped_ops_have_no_bandwidth():
    per_rank = {
        0: [_res("all_sum", []), {"op": "sum_scatter", "skipped": "no", "unsupported": True}],
        1: [_res("all_sum", []), {"op": "sum_scatter", "skipped": "no", "unsupported": True}],
    }
    timed, skipped = F.op_figures(per_rank, 2)
    assert timed["iters"] == 0 and "busbw_gbs" not in timed and "time_s" not in timed
    assert skipped == {"op": "sum_scatter", "skipped": "no", "unsupported": True}


def test_pair_results_are_not_op_figures():
    pair = {"op": "pair", "src": 0, "dst": 1, "size": 8, "times": [1.0], "wrong": 0}
    assert F.op_figures({1: [pair]}, 2) == []


def test_all_gather_digests_name_the_slice_that_arrived_changed():
    per_rank = {
        0: [_res("all_gather", [0.1], own_digest="a", digests=["a", "b"])],
        1: [_res("all_gather", [0.1], own_digest="b", digests=["X", "b"])],
    }
    (f,) = F.op_figures(per_rank, 2)
    assert f["digests"] == {"0": "a", "1": "b"} and f["digests_ok"] is False
    assert f["digest_mismatches"] == [
        {"slice_of_rank": 0, "received_at_rank": 1, "sent": "a", "received": "X"}
    ]
    assert F.digest_check({0: {"own_digest": "a", "digests": ["a"]}})["digests_ok"] is True


def test_pair_matrix_missing_and_slowest():
    def pair(s, d, t, wrong=0):
        return {"op": "pair", "src": s, "dst": d, "size": 1_000_000, "times": t, "wrong": wrong}

    measured = [[0, 1], [1, 0], [1, 2], [2, 1], [0, 2], [2, 0]]
    results = {
        0: [pair(1, 0, [0.001, 0.002, 0.003]), pair(2, 0, [0.004])],
        1: [pair(0, 1, [0.002])],
        2: [pair(1, 2, [0.001], wrong=3)],
    }
    pf = F.pair_figures(results, 3, measured, [])
    assert pf["busbw_gbs"][1][0] == 0.5  # 1e6 B / 1e9 / 0.002 s (median), send/recv factor 1
    assert pf["busbw_gbs"][2][0] == 0.25 and pf["busbw_gbs"][0][0] is None
    assert pf["wrong"][1][2] == 3 and pf["wrong"][0][1] == 0
    assert pf["missing"] == [[2, 1], [0, 2]]
    assert pf["slowest"] == {
        "src": 2,
        "dst": 0,
        "busbw_gbs": 0.25,
        "time_s": {"min": 0.004, "median": 0.004, "max": 0.004, "mean": 0.004},
        "wrong": 0,
    }
    assert pf["note"] == "" and pf["unsupported"] == []
    ring = F.pair_figures({}, 3, [], [[0, 2]])
    assert ring["note"] == "ring backends connect ring neighbours only" and ring["slowest"] is None


def test_rates_and_the_bandwidth_line():
    assert F.format_rate(12.3456) == "12.346 GB/s" and F.format_rate(0.00275) == "2.750 MB/s"
    fig = {
        "op": "all_sum",
        "size_bytes": 64 << 20,
        "busbw_gbs": 1.5,
        "algbw_gbs": 0.75,
        "time_s": {"min": 0.0701, "median": 0.0725, "max": 0.08, "mean": 0.0715},
    }
    assert F.bandwidth_line(fig) == (
        "all_sum 64MiB: busbw 1.500 GB/s, algbw 750.000 MB/s, time 71.5 ms per call "
        "(laps min 70.1, median 72.5, max 80.0)"
    )


def test_small_bandwidths_keep_their_digits_and_sizes_match_the_elements():
    from meshdoctor.probe.figures import format_rate
    from meshdoctor.probe.sizes import format_size_exact

    assert format_rate(12.3456) == "12.346 GB/s" and format_rate(0.00275) == "2.750 MB/s"
    assert format_rate(2e-7) == "200 B/s" and format_rate(3e-6) == "3.000 KB/s"
    assert format_size_exact(4096) == "4KiB" and format_size_exact(4092) == "4092B"
