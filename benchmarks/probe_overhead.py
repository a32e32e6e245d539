"""Harness overhead of the probe: its all_sum busbw against a bare MLX all_sum loop on the same
ranks, size and launch (target ratio >= 0.97), for 2, 3, 4, 8 and 16 local ring ranks at 1 MiB,
16 MiB and 256 MiB, in one table from one run.

Run: python benchmarks/probe_overhead.py [--ranks 2,3,4,8,16] [--sizes 1MiB,16MiB,256MiB]
[--iters 10] [--rounds 3] [--out DIR]. 2, 3 and 4 ranks always run (a row whose ranks share
cores says so); 8 and 16 only where the box has a core per rank, else they are left out and the
output says so. ``--iters`` is cut, per size, to at most 1 GiB of messages per op and round
(at least 3 iterations).

Each (ranks, size) is one launch of local ring ranks that alternates, ``rounds`` times, the
probe's own all_sum (enter/leave events, heartbeat, warm-up, the exact check of every value
after each timed batch) with the worker's ``bare_all_sum`` (the same collective in a tight
loop: no events, no checks). Both are timed as nccl-tests times (doc/PERFORMANCE.md): after a
barrier, a batch of iterations between two clock readings per rank, the per-call average, the
maximum over ranks; busbw = algbw x 2(n-1)/n. The probe's figure is the one its verdict
reports (:func:`meshdoctor.probe.figures.op_figure`). probe/bare is the median over the rounds
of each round's probe busbw over the bare loop's that follows it (a shared box's load changes
from second to second; neighbours share it); the busbw columns are the medians over rounds.
The table is printed and saved (text and JSON) under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.figures import algbw_gbs, batch_time, bus_factor, op_figure
from meshdoctor.probe.launcher import run_probe
from meshdoctor.probe.sizes import format_size, parse_size

TARGET = 0.97
ALWAYS = 4  # world sizes run on any box
MAX_BYTES_PER_ROUND = 1 << 30  # --iters is cut so one op's round moves at most this per rank
RESULTS = Path(__file__).resolve().parent / "results"


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def one(n: int, size: int, iters: int, rounds: int) -> Dict[str, object]:
    """One launch of ``n`` ranks at ``size`` bytes: the median probe and bare busbw (GB/s) over
    ``rounds`` rounds, their ratio, #wrong and elements checked."""
    cfg = ProbeConfig(
        hostfile=local_hostfile(n),
        size=size,
        iters=iters,
        warmup=2,
        ops=["all_sum", "bare_all_sum"] * rounds,
    )
    t0 = time.monotonic()
    run = run_probe(cfg)
    out = run.launches[-1] if run.launches else None
    if out is None or out.kind != "ok":
        why = run.preflight or (out and (out.kind, out.failure))
        return {"ranks": n, "size": size, "error": f"probe did not finish: {why}"}
    probe: List[float] = []
    bare: List[float] = []
    wrong = checked = 0
    for k in range(len(cfg.ops)):
        per_rank = {st.rank: st.results[k] for st in out.ranks}
        op = per_rank[0]["op"]
        if op == "all_sum":
            fig = op_figure(op, per_rank, n)
            probe.append(fig["busbw_gbs"])
            wrong += fig["wrong"]
            checked += fig["checked"]
        else:
            t = batch_time(list(per_rank.values()))
            bare.append(algbw_gbs(int(per_rank[0]["size"]), t or 0.0) * bus_factor(op, n))
    p, b = statistics.median(probe), statistics.median(bare)
    # each round's probe against the bare loop right after it: load from elsewhere on the box
    # comes and goes in seconds, so neighbours share it; the median of those ratios
    paired = [x / y for x, y in zip(probe, bare) if y > 0]
    return {
        "ranks": n,
        "size": size,
        "probe_busbw_gbs": round(p, 5),
        "bare_busbw_gbs": round(b, 5),
        "ratio": round(statistics.median(paired), 4) if paired else None,
        "round_ratios": [round(x, 4) for x in paired],
        "wrong": wrong,
        "checked": checked,
        "wall_s": round(time.monotonic() - t0, 2),
    }


def table(rows: List[Dict[str, object]]) -> List[str]:
    """The rows as aligned text lines."""
    lines = [
        f"{'ranks':>5} {'size':>7} {'probe GB/s':>11} {'bare GB/s':>10} {'probe/bare':>10} "
        f"{'spread':>11} {'#wrong':>6} {'checked':>11} {'iters':>5} {'wall s':>7}"
    ]
    for r in rows:
        head = f"{r['ranks']:>5} {format_size(int(r['size'])):>7}"
        if "error" in r:
            lines.append(f"{head} {r['error']}")
            continue
        ratio = r["ratio"]
        mark = "" if ratio is None else ("  ok" if ratio >= TARGET else "  below target")
        rr = r.get("round_ratios") or []
        spread = f"{min(rr):.2f}-{max(rr):.2f}" if rr else "-"
        if r.get("cores_shared"):
            mark += " (more ranks than cores)"
        lines.append(
            f"{head} {r['probe_busbw_gbs']:>11.4f} {r['bare_busbw_gbs']:>10.4f} "
            f"{ratio if ratio is not None else '-':>10} {spread:>11} {r['wrong']:>6} {r['checked']:>11} "
            f"{r.get('iters', '-'):>5} {r['wall_s']:>7}{mark}"
        )
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="2,3,4,8,16")
    ap.add_argument("--sizes", default="1MiB,16MiB,256MiB")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None, help="results folder (default: benchmarks/results/)")
    args = ap.parse_args(argv)
    have = cores()
    asked = [int(x) for x in args.ranks.split(",") if x.strip()]
    # 2, 3 and 4 ranks always run (shared cores on a small box: marked in the table); larger
    # world sizes only where the box has a core per rank
    ranks = [n for n in asked if n <= max(have, ALWAYS)]
    left = [n for n in asked if n not in ranks]
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    head = [
        f"# python benchmarks/probe_overhead.py --ranks {args.ranks} --sizes {args.sizes} "
        f"--iters {args.iters} --rounds {args.rounds}",
        f"{have} CPU(s), load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"ring over loopback; {args.iters} timed iterations x {args.rounds} rounds, "
        f"busbw medians, probe/bare the median of the rounds' ratios; target >= {TARGET}",
    ]
    if left:
        head.append(
            f"left out: {', '.join(map(str, left))} ranks (this box has {have} CPU(s); beyond "
            f"{ALWAYS} ranks a world size runs only where it has a core per rank)"
        )
    print("\n".join(head), flush=True)
    rows = []
    for n in ranks:
        for size in sizes:
            iters = max(3, min(args.iters, MAX_BYTES_PER_ROUND // size))
            row = one(n, size, iters, args.rounds)
            row["iters"] = iters
            row["cores_shared"] = n > have
            rows.append(row)
            print(table(rows[-1:])[1], flush=True)
    lines = head + table(rows)
    print("\n" + "\n".join(table(rows)))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = Path(args.out) if args.out else RESULTS / f"{stamp}-probe-overhead-{have}core"
    out.mkdir(parents=True, exist_ok=True)
    (out / "probe_overhead.txt").write_text("\n".join(lines) + "\n")
    (out / "probe_overhead.json").write_text(
        json.dumps({"cpus": have, "left_out": left, "rows": rows}, indent=1) + "\n"
    )
    print(f"saved under {out}")
    ok = all(r.get("ratio") is not None and r["ratio"] >= TARGET for r in rows)
    return 0 if ok and all(r.get("wrong") == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
