"""Fault runs on a GPU host: one nccl rank killed (SIGKILL) or stopped (SIGSTOP) inside a 1 GiB
all_sum (the worker's test-only kill-in / stop-in fault, a few ms after the step started). Prints, per fault, the verdict's finding, how long after the
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
import sys
import time

from meshdoctor.facts import nvml
from meshdoctor.model import Verdict
from meshdoctor.probe import report
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.launcher import run_probe
from meshdoctor.probe.worker import FAULT_ENV, FAULT_IN_DELAY_S

FAULT_SEQ = 11  # init 1, warmup barrier 2 + all_sum 3, then barrier/all_sum pairs: #3 is 11


def one(kind: str, timeout: float, victim: int = 1) -> dict:
    """One run: the victim signals itself FAULT_IN_DELAY_S after entering all_sum #3 (timed,
    step 11), i.e. inside a 1 GiB NCCL all_sum (about 4 ms on 2 H200s)."""
    seen: dict = {}

    def hook(rank, ev, launch):
        if rank == victim and ev.get("ev") == "enter" and ev.get("seq") == FAULT_SEQ:
            seen["t"] = time.monotonic() + FAULT_IN_DELAY_S  # when the signal is due

    os.environ[FAULT_ENV] = f"{kind}-in:{victim}:{FAULT_SEQ}"
    cfg = ProbeConfig(
        hostfile=local_hostfile(2, "nccl"),
        backend="nccl",
        ops=["all_sum"],
        size=1 << 30,
        iters=100000,
        timeout=timeout,
    )
    try:
        run = run_probe(cfg, on_event=hook)
    finally:
        del os.environ[FAULT_ENV]
    v = report.build(run, Verdict(command="probe")).finish()
    t_verdict = time.monotonic()
    out = run.launches[-1]
    doc = v.to_dict()
    code = "MD502" if kind == "kill" else "MD503"
    found = [r for r in doc["results"] if r["code"] == code and r["status"] == "fail"]
    named = bool(found) and (f"rank {victim}" in found[0]["summary"])
    after = nvml.read_all()
    res = {
        "fault": f"SIG{kind.upper()} rank {victim} inside 1 GiB all_sum #3",
        "exit_code": v.exit_code,
        "finding": found[0]["summary"] if found else None,
        "named_right_rank": named,
        # where the victim was: it entered all_sum #3 (step 11) and never left it; a stopped
        # rank's already-launched kernel still completes, so the survivor may block in the next
        # collective instead
        "victim_last_step": doc["probe"]["ranks"][victim]["last_step"],
        "deadline_s": out.deadline_s,
        "detect_after_fault_s": round(out.detected_at - seen["t"], 3)
        if out.detected_at and "t" in seen
        else None,
        "verdict_after_fault_s": round(t_verdict - seen["t"], 3) if "t" in seen else None,
        "teardown_s": doc["probe"].get("detect_s"),
        "leftover_processes": out.survivors,
        "gpu_after_teardown": out.gpu_after,
        "gpu_used_mib_after": [
            round(g["memory"]["used"] / 2**20) for g in after.get("gpus", []) if g.get("memory")
        ],
        "leftover_result": [r["summary"] for r in doc["results"] if r["code"] == "MD506"],
    }
    limit = 1.0 if kind == "kill" else out.deadline_s + 1.0
    res["pass"] = bool(
        named
        and (res["victim_last_step"] or {}).get("seq") == FAULT_SEQ
        and res["detect_after_fault_s"] is not None
        and res["detect_after_fault_s"] <= limit
        and not out.survivors
        and not (out.gpu_after or {}).get("held")
    )
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--json", dest="json_path", default=None)
    args = ap.parse_args()
    rows = [one("kill", args.timeout), one("stop", args.timeout)]
    for r in rows:
        print(
            f"{r['fault']}: {'PASS' if r['pass'] else 'FAIL'}; named after "
            f"{r['detect_after_fault_s']} s (deadline {r['deadline_s']} s), verdict after "
            f"{r['verdict_after_fault_s']} s; leftovers {len(r['leftover_processes'])}; GPU "
            f"memory after {r['gpu_used_mib_after']} MiB\n  {r['finding']}\n  "
            f"{r['leftover_result']}"
        )
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(rows, fh, indent=2, default=str)
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
