"""Harness overhead of the probe: its all_sum busbw against a bare MLX all_sum loop on the same
ranks, size and run (target ratio >= 0.95).

Run: python benchmarks/probe_overhead.py [-n 3] [--size 64MiB] [--iters 10] [--rounds 3].
One launch of ``n`` local ring ranks alternates, ``rounds`` times, the probe's own all_sum
(enter/leave events, heartbeat, exact check of every result) with the worker's ``bare_all_sum``
(the same collective in a tight loop: no events, no checks). busbw uses the slowest rank per
iteration, as the probe's figures do; the medians over all rounds are compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Dict, List

from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.figures import algbw_gbs, bus_factor, slowest_per_iteration
from meshdoctor.probe.launcher import run_probe
from meshdoctor.probe.sizes import parse_size

TARGET = 0.95


def busbw_per_iteration(results: List[List[dict]], n: int) -> List[float]:
    """busbw (GB/s) of every iteration: ``results[k]`` are the ranks' result events of round k."""
    out = []
    for per_rank in results:
        size = int(per_rank[0]["size"])
        for t in slowest_per_iteration([r["times"] for r in per_rank]):
            out.append(algbw_gbs(size, t) * bus_factor("all_sum", n))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--size", default="64MiB")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cfg = ProbeConfig(
        hostfile=local_hostfile(args.n),
        size=parse_size(args.size),
        iters=args.iters,
        warmup=2,
        ops=["all_sum", "bare_all_sum"] * args.rounds,
    )
    run = run_probe(cfg)
    out = run.launches[-1]
    if out.kind != "ok":
        print(f"probe did not finish: {out.kind} {out.failure}", file=sys.stderr)
        return 1
    rounds: Dict[str, List[List[dict]]] = {"all_sum": [], "bare_all_sum": []}
    for k in range(len(cfg.ops)):
        per_rank = [st.results[k] for st in out.ranks]
        rounds[per_rank[0]["op"]].append(per_rank)
    wrong = sum(r["wrong"] for per in rounds["all_sum"] for r in per)
    probe = statistics.median(busbw_per_iteration(rounds["all_sum"], args.n))
    bare = statistics.median(busbw_per_iteration(rounds["bare_all_sum"], args.n))
    ratio = probe / bare
    print(
        f"ranks {args.n}, size {args.size}, {args.iters} iterations x {args.rounds} rounds, "
        f"#wrong {wrong}"
    )
    print(f"probe all_sum busbw median : {probe:.4f} GB/s")
    print(f"bare  all_sum busbw median : {bare:.4f} GB/s")
    print(f"ratio probe/bare           : {ratio:.3f} (target >= {TARGET})")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
