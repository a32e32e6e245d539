"""Detection latency of the probe: from SIGKILL of one rank to the verdict
(target <= 1 s), and from SIGSTOP of one rank to the verdict (target <= deadline + 1 s).

Run: python benchmarks/probe_detection.py [--runs 5] [-n 3] [--deadline 2]. Each run starts
``n`` local ring ranks doing 1 MiB all_sums; when rank 0 reports leaving timed iteration 5, the
launcher's event hook signals rank n-1 and notes the time. "Verdict" is when the verdict
document is built: teardown, the leftover check and the report included.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time

from meshdoctor.model import Verdict
from meshdoctor.probe import report
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.launcher import run_probe


def one(n: int, sig: int, deadline: float) -> float:
    """Seconds from sending ``sig`` to rank n-1 to the finished verdict; raises if the verdict
    does not blame that rank."""
    t = {}

    def hook(rank, ev, launch):
        if (
            not t
            and rank == 0
            and ev.get("ev") == "hb"  # inside a timed batch, the heartbeat carries the step
            and (ev.get("step") or {}).get("op") == "all_sum"
            and (ev.get("step") or {}).get("phase") == "timed"
            and (ev.get("step") or {}).get("iter", 0) >= 5
        ):
            os.kill(launch.procs[n - 1].pid, sig)
            t["sent"] = time.monotonic()

    cfg = ProbeConfig(
        hostfile=local_hostfile(n), ops=["all_sum"], size=1 << 20, iters=100000, timeout=deadline
    )
    run = run_probe(cfg, on_event=hook)
    v = report.build(run, Verdict(command="probe")).finish()
    latency = time.monotonic() - t["sent"]
    code = "MD502" if sig == signal.SIGKILL else "MD503"
    hit = [r for r in v.results if r.code == code and f"rank {n - 1}" in r.summary]
    if v.exit_code != 1 or not hit:
        raise RuntimeError(f"unexpected verdict: {[(r.code, r.summary) for r in v.results]}")
    return latency


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=2.0)
    args = ap.parse_args()
    kill = [one(args.n, signal.SIGKILL, args.deadline) for _ in range(args.runs)]
    stop = [one(args.n, signal.SIGSTOP, args.deadline) for _ in range(args.runs)]
    ok = max(kill) <= 1.0 and max(stop) <= args.deadline + 1.0
    print(f"ranks {args.n}, {args.runs} runs each, per-collective deadline {args.deadline} s")
    print(
        f"kill -9 -> verdict : median {statistics.median(kill):.3f} s, max {max(kill):.3f} s "
        f"(target <= 1.0 s)"
    )
    print(
        f"SIGSTOP -> verdict : median {statistics.median(stop):.3f} s, max {max(stop):.3f} s "
        f"(target <= {args.deadline + 1.0:.1f} s = deadline + 1 s)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
