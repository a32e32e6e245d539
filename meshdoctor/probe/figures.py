"""The probe's figures: pure functions from the ranks' ``result`` events to numbers (no
processes, no clock, no verdict).

Conventions are those of nccl-tests, doc/PERFORMANCE.md
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):

* time: each rank times its timed iterations as batches, back to back after one barrier
  (nccl-tests: the clock read once around ``iters`` calls, the average per call, then the
  maximum over ranks); that per-call time is ``time_s.mean``, the figure algbw uses. min,
  median and max are over the iterations' laps, the slowest rank's lap each (results without
  a batch time, as under --soak, use the median of those);
* algbw = size / 1e9 / time, in GB/s (1e9 bytes per second); ``size`` is the op's
  message size in bytes (all_gather: the gathered output, as nccl-tests counts it);
* busbw = algbw x :func:`bus_factor` (op, n): the rate each link had to carry, comparable across
  world sizes and with a link's rate.

The result events (``worker.py``) carry ``op``, ``size`` (bytes), ``dtype``, ``times`` (seconds per
timed iteration), ``wrong`` and ``checked`` (elements, nccl-tests ``#wrong``), all_gather's
``digests`` and ``own_digest``, pairs' ``src`` and ``dst``; a skipped op carries ``skipped``
(and ``unsupported``).
"""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence

from meshdoctor.probe.sizes import format_size_exact

PAIR = "pair"  # the op name of a --pairs result event


def bus_factor(op: str, n: int) -> float:
    """busbw / algbw for ``op`` at ``n`` ranks (nccl-tests doc/PERFORMANCE.md): all-reduce
    (all_sum, bare_all_sum, all_max, all_min) 2(n-1)/n, all-gather and reduce-scatter
    (sum_scatter) (n-1)/n, anything else (send/recv) 1."""
    if op in ("all_sum", "bare_all_sum", "all_max", "all_min"):
        return 2 * (n - 1) / n
    if op in ("all_gather", "sum_scatter"):
        return (n - 1) / n
    return 1.0


def algbw_gbs(size_bytes: int, seconds: float) -> float:
    """Algorithm bandwidth in GB/s (1e9 bytes/s): ``size_bytes`` / 1e9 / ``seconds``; 0.0 for a
    time that is not positive (a clock that did not move)."""
    return size_bytes / 1e9 / seconds if seconds > 0 else 0.0


def sig5(x: float) -> float:
    """``x`` to 5 significant digits (small bandwidths keep their digits: 2.75e-05 GB/s)."""
    return float(f"{x:.5g}")


def time_stats(times: Sequence[float]) -> Dict[str, float]:
    """``{"min", "median", "max"}`` of ``times`` (seconds, non-empty), rounded to 1 us."""
    return {
        "min": round(min(times), 6),
        "median": round(statistics.median(times), 6),
        "max": round(max(times), 6),
    }


def slowest_per_iteration(times_by_rank: Sequence[Sequence[float]]) -> List[float]:
    """Per timed iteration, the slowest rank's time (seconds), over the iterations every rank
    reported (the shortest list)."""
    if not times_by_rank:
        return []
    iters = min(len(t) for t in times_by_rank)
    return [max(t[i] for t in times_by_rank) for i in range(iters)]


def batch_time(results: Sequence[Mapping[str, Any]]) -> Optional[float]:
    """The per-call time in seconds of ranks' timed batches (nccl-tests): each rank's
    ``batch_s`` divided by its number of timed iterations, the maximum over ``results`` (one
    result event per rank); None when any rank has no batch time or no iteration."""
    per = []
    for r in results:
        batch, iters = r.get("batch_s"), len(r.get("times") or [])
        if batch is None or not iters:
            return None
        per.append(float(batch) / iters)
    return max(per) if per else None


def timing(results: Sequence[Mapping[str, Any]]) -> Optional[Dict[str, float]]:
    """``time_s`` of one op or pair from its ranks' result events: :func:`time_stats` of the
    slowest lap per iteration plus ``mean``, the time algbw uses (:func:`batch_time`, else the
    median lap); None without a timed iteration."""
    slowest = slowest_per_iteration([r.get("times") or [] for r in results])
    if not slowest:
        return None
    t = time_stats(slowest)
    mean = batch_time(results)
    t["mean"] = round(mean if mean is not None else statistics.median(slowest), 9)
    return t


def digest_check(per_rank: Mapping[int, Mapping[str, Any]]) -> Dict[str, Any]:
    """all_gather: each rank's slice, as every rank received it, must have the digest its sender
    computed (``own_digest``). Returns ``digests`` (rank -> own digest, keys as strings),
    ``digests_ok`` and ``digest_mismatches`` (slice_of_rank, received_at_rank, sent, received)."""
    own = {r: res.get("own_digest") for r, res in per_rank.items()}
    mismatches = []
    for seen_at, res in per_rank.items():
        for src, dg in enumerate(res.get("digests") or []):
            if src in own and own[src] and dg != own[src]:
                mismatches.append(
                    {
                        "slice_of_rank": src,
                        "received_at_rank": seen_at,
                        "sent": own[src],
                        "received": dg,
                    }
                )
    return {
        "digests": {str(r): own[r] for r in sorted(own)},
        "digests_ok": not mismatches,
        "digest_mismatches": mismatches,
    }


def op_figure(op: str, per_rank: Mapping[int, Mapping[str, Any]], n: int) -> Dict[str, Any]:
    """The figures of one op from each reporting rank's result event (``per_rank``: rank ->
    event) in a group of ``n`` ranks: a skipped op gives ``{op, skipped, unsupported}``; else
    ``op``, ``size_bytes``, ``dtype``, ``ranks_reporting``, ``iters``, ``wrong`` and ``checked``
    (summed over ranks), and when timed ``time_s``, ``algbw_gbs``, ``busbw_gbs`` (5
    significant digits) and ``bus_factor``; all_gather adds :func:`digest_check`."""
    any_r = next(iter(per_rank.values()))
    if any_r.get("skipped"):
        return {
            "op": op,
            "skipped": any_r["skipped"],
            "unsupported": bool(any_r.get("unsupported")),
        }
    slowest = slowest_per_iteration([r.get("times") or [] for r in per_rank.values()])
    size = int(any_r.get("size", 0))
    f: Dict[str, Any] = {
        "op": op,
        "size_bytes": size,
        "dtype": any_r.get("dtype"),
        "ranks_reporting": sorted(per_rank),
        "iters": len(slowest),
        "wrong": sum(int(r.get("wrong", 0)) for r in per_rank.values()),
        "checked": sum(int(r.get("checked", 0)) for r in per_rank.values()),
    }
    t = timing(list(per_rank.values()))
    if t is not None:
        algbw = algbw_gbs(size, t["mean"])
        f.update(
            {
                "time_s": t,
                "algbw_gbs": sig5(algbw),
                "busbw_gbs": sig5(algbw * bus_factor(op, n)),
                "bus_factor": round(bus_factor(op, n), 4),
            }
        )
    if op == "all_gather":
        f.update(digest_check(per_rank))
    return f


def op_figures(
    results_by_rank: Mapping[int, Sequence[Mapping[str, Any]]], n: int
) -> List[Dict[str, Any]]:
    """:func:`op_figure` for every op any rank reported (pair results excluded), in the order
    the ops first appear; ``results_by_rank``: rank -> its result events, in rank order."""
    by_op: Dict[str, Dict[int, Mapping[str, Any]]] = {}
    for rank, results in results_by_rank.items():
        for r in results:
            if r.get("op") != PAIR:
                by_op.setdefault(r["op"], {})[rank] = r
    return [op_figure(op, per_rank, n) for op, per_rank in by_op.items()]


def pair_figures(
    results_by_rank: Mapping[int, Sequence[Mapping[str, Any]]],
    n: int,
    measured: Sequence[Sequence[int]],
    unsupported: Sequence[Sequence[int]],
) -> Dict[str, Any]:
    """The --pairs matrix from the receivers' pair result events: ``busbw_gbs`` and ``wrong``
    (n x n, None where not measured; send/recv has bus factor 1, so busbw = algbw of the
    receiver's per-call batch time, :func:`timing`), ``cells`` (src, dst, busbw_gbs, time_s, wrong), ``unsupported`` (pairs the backend
    does not connect), ``missing`` (pairs of ``measured`` with no figure), ``slowest`` (the cell
    with the lowest busbw, or None) and a ``note``."""
    matrix: List[List[Optional[float]]] = [[None] * n for _ in range(n)]
    wrong: List[List[Optional[int]]] = [[None] * n for _ in range(n)]
    cells = []
    for results in results_by_rank.values():
        for r in results:
            if r.get("op") != PAIR or not r.get("times"):
                continue
            s, d = int(r["src"]), int(r["dst"])
            t = timing([r])
            bw = sig5(algbw_gbs(int(r["size"]), t["mean"]))
            matrix[s][d], wrong[s][d] = bw, int(r.get("wrong", 0))
            cells.append(
                {
                    "src": s,
                    "dst": d,
                    "busbw_gbs": bw,
                    "time_s": t,
                    "wrong": wrong[s][d],
                }
            )
    missing = [list(p) for p in measured if matrix[p[0]][p[1]] is None]
    slowest = min(cells, key=lambda c: c["busbw_gbs"]) if cells else None
    return {
        "busbw_gbs": matrix,
        "wrong": wrong,
        "cells": cells,
        "unsupported": [list(p) for p in unsupported],
        "missing": missing,
        "slowest": slowest,
        "note": "ring backends connect ring neighbours only" if unsupported else "",
    }


def format_rate(gbs: float) -> str:
    """A bandwidth given in GB/s (1e9 bytes/s, nccl-tests) in the unit that shows its digits:
    ``12.345 GB/s``, ``2.750 MB/s``, ``512.000 KB/s`` (decimal units, as nccl-tests)."""
    for unit, scale in (("GB/s", 1.0), ("MB/s", 1e-3), ("KB/s", 1e-6)):
        if abs(gbs) >= scale:
            return f"{gbs / scale:.3f} {unit}"
    return f"{gbs * 1e9:.0f} B/s"


def format_ms(seconds: float) -> str:
    """Seconds as milliseconds with one decimal: 0.01234 -> ``12.3``."""
    return f"{seconds * 1e3:.1f}"


def bandwidth_line(fig: Mapping[str, Any]) -> str:
    """One timed op's figures as people read them: ``all_sum 64MiB: busbw 1.234 GB/s, algbw
    925.500 MB/s, time 72.5 ms per call (laps min 70.1, median 72.0, max 80.0)``."""
    t = fig["time_s"]
    return (
        f"{fig['op']} {format_size_exact(fig['size_bytes'])}: busbw "
        f"{format_rate(fig['busbw_gbs'])}, algbw {format_rate(fig['algbw_gbs'])}, time "
        f"{format_ms(t.get('mean', t['median']))} ms per call (laps min {format_ms(t['min'])}, "
        f"median {format_ms(t['median'])}, max {format_ms(t['max'])})"
    )
