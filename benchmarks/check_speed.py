"""Start-up and check speed: `meshdoctor check --json` and `--help` against `python -c pass`.

Run: python benchmarks/check_speed.py [--runs 15]. Prints, side by side, the median wall time of
each command over the runs (interleaved, so load affects all alike) and its ratio to the bare
interpreter. Targets (on a 2-core box): check --json <= 0.6 s, --help <= 0.3 s median.
MD301 (a process-table scan) is included: this is what an operator's gate runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGETS = {"check --json": 0.6, "--help": 0.3}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": [sys.executable, "-m", "meshdoctor", "--help"],
        "check --json": [sys.executable, "-m", "meshdoctor", "check", "--json"],
    }
    times = {k: [] for k in cmds}
    for _ in range(args.runs):
        for name, argv in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["python -c pass"])
    print(
        f"{'command':<16} {'median s':>9} {'min s':>7} {'max s':>7} {'x python':>9} {'target s':>9}"
    )
    for name, ts in times.items():
        med = statistics.median(ts)
        tgt = TARGETS.get(name)
        verdict = "" if tgt is None else ("  ok" if med <= tgt else "  OVER")
        print(
            f"{name:<16} {med:>9.3f} {min(ts):>7.3f} {max(ts):>7.3f} {med / base:>9.1f} "
            f"{tgt if tgt else '':>9}{verdict}"
        )


if __name__ == "__main__":
    main()
