"""Fault runs on a GPU host: one nccl rank killed (SIGKILL) or stopped (SIGSTOP) in the middle of
a stream of 256 MiB all_sums. Prints, per fault, the verdict's finding, how long after the
fault the launcher named it and how long until the verdict was ready, the per-step deadline,
what teardown left (processes with the run's marker, GPU memory charged to the ranks' pids,
each GPU's used memory read through NVML afterwards), and writes everything as JSON.

Run: python benchmarks/gpu/nccl_faults.py [--timeout 5] [--json faults.json]
Pass criteria (printed): the right rank named, SIGKILL within 1 s, SIGSTOP within the deadline
plus 1 s, nothing left behind.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from meshdoctor import nvml
from meshdoctor.model import Verdict
from meshdoctor.probe import report
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.launcher import run_probe


def one(kind: str, timeout: float, victim: int = 1) -> dict:
    sig = signal.SIGKILL if kind == "kill" else signal.SIGSTOP
    seen: dict = {}

    def hook(rank, ev, launch):
        # both ranks inside all_sum #3 (timed): hit the victim there
        if ev.get("ev") == "enter" and ev.get("op") == "all_sum" and \
                ev.get("phase") == "timed" and ev.get("iter") == 3:
            seen.setdefault("in", set()).add(rank)
            if len(seen["in"]) == 2 and "t" not in seen:
                os.kill(launch.procs[victim].pid, sig)
                seen["t"] = time.monotonic()

    cfg = ProbeConfig(hostfile=local_hostfile(2, "nccl"), backend="nccl", ops=["all_sum"],
                      size=256 << 20, iters=100000, timeout=timeout)
    run = run_probe(cfg, on_event=hook)
    v = report.build(run, Verdict(command="probe")).finish()
    t_verdict = time.monotonic()
    out = run.launches[-1]
    doc = v.to_dict()
    code = "MD502" if kind == "kill" else "MD503"
    found = [r for r in doc["results"] if r["code"] == code and r["status"] == "fail"]
    named = bool(found) and (f"rank {victim}" in found[0]["summary"])
    after = nvml.read_all()
    res = {
        "fault": f"SIG{kind.upper() if kind == 'kill' else 'STOP'} rank {victim} mid all_sum",
        "exit_code": v.exit_code, "finding": found[0]["summary"] if found else None,
        "named_right_rank": named, "deadline_s": out.deadline_s,
        "detect_after_fault_s": round(out.detected_at - seen["t"], 3)
        if out.detected_at and "t" in seen else None,
        "verdict_after_fault_s": round(t_verdict - seen["t"], 3) if "t" in seen else None,
        "teardown_s": doc["probe"].get("detect_s"),
        "leftover_processes": out.survivors, "gpu_after_teardown": out.gpu_after,
        "gpu_used_mib_after": [round(g["memory"]["used"] / 2**20) for g in after.get("gpus", [])
                               if g.get("memory")],
        "leftover_result": [r["summary"] for r in doc["results"] if r["code"] == "MD506"],
    }
    limit = 1.0 if kind == "kill" else out.deadline_s + 1.0
    res["pass"] = bool(named and res["detect_after_fault_s"] is not None
                       and res["detect_after_fault_s"] <= limit and not out.survivors
                       and not (out.gpu_after or {}).get("held"))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--json", dest="json_path", default=None)
    args = ap.parse_args()
    rows = [one("kill", args.timeout), one("stop", args.timeout)]
    for r in rows:
        print(f"{r['fault']}: {'PASS' if r['pass'] else 'FAIL'}; named after "
              f"{r['detect_after_fault_s']} s (deadline {r['deadline_s']} s), verdict after "
              f"{r['verdict_after_fault_s']} s; leftovers {len(r['leftover_processes'])}; GPU "
              f"memory after {r['gpu_used_mib_after']} MiB\n  {r['finding']}\n  "
              f"{r['leftover_result']}")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(rows, fh, indent=2, default=str)
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
