"""Start-up and check speed: `meshdoctor check --json` and `--help` against `python -c pass`.

Run: python benchmarks/check_speed.py [--runs 15] [--no-compile]. Prints, side by side, the
median wall time of each command over the runs (interleaved, so load affects all alike), its ratio
to the bare interpreter, and the median of the verdict's own ``duration_s`` (the checks' work,
without interpreter start-up and module imports). Targets (on a 2-core box): check --json
<= 0.15 s, --help <= 0.08 s median. MD301 (a process-table scan) is included: this is what an
operator's gate runs.

Byte code: pip compiles a package's modules when it installs it, so a user's run never compiles
them. Where ``PYTHONDONTWRITEBYTECODE`` is set (as in some CI and sandbox shells) an editable
checkout would recompile every module on every run; the benchmark therefore byte-compiles the
package first (``python -m compileall``, into the ignored ``__pycache__`` folders), as an install
does. ``--no-compile`` skips that and measures whatever cache there is.

State: the runs use a fresh ``MESHDOCTOR_STATE_DIR`` (a temporary folder), so a cache kept there
from an earlier run does not help the first run; the first ``check --json`` run (the one that
fills the cache) is printed on its own line and is not part of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"check --json": 0.15, "--help": 0.08}
REPO = Path(__file__).resolve().parent.parent


def _compile() -> str:
    dirs = [str(REPO / d) for d in ("meshdoctor", "checks", "fixes") if (REPO / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True, timeout=300)
    return "byte-compiled first (as pip does at install)"


def _run(argv, env, json_out=False):
    t0 = time.perf_counter()
    r = subprocess.run(
        argv,
        stdout=subprocess.PIPE if json_out else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=120,
    )
    wall = time.perf_counter() - t0
    dur = None
    if json_out:
        try:
            dur = float(json.loads(r.stdout)["duration_s"])
        except (ValueError, KeyError, TypeError):
            dur = None
    return wall, dur


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile first")
    args = ap.parse_args()
    mode = "not byte-compiled first" if args.no_compile else _compile()
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "--help": [sys.executable, "-m", "meshdoctor", "--help"],
        "check --json": [sys.executable, "-m", "meshdoctor", "check", "--json"],
    }
    with tempfile.TemporaryDirectory(prefix="meshdoctor-bench-state-") as state:
        env = dict(os.environ, MESHDOCTOR_STATE_DIR=state)
        first_wall, first_dur = _run(cmds["check --json"], env, json_out=True)
        times = {k: [] for k in cmds}
        durations = []
        for _ in range(args.runs):
            for name, argv in cmds.items():
                wall, dur = _run(argv, env, json_out=name == "check --json")
                times[name].append(wall)
                if dur is not None:
                    durations.append(dur)
    base = statistics.median(times["python -c pass"])
    print(
        f"{args.runs} runs; {mode}; PYTHONDONTWRITEBYTECODE="
        f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
    )
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
    if durations:
        print(
            f"check duration_s (the verdict's own): median {statistics.median(durations):.3f} s, "
            f"min {min(durations):.3f}, max {max(durations):.3f}"
        )
    print(
        f"first check --json (fresh state dir, not in the medians): wall {first_wall:.3f} s, "
        f"duration_s {first_dur if first_dur is not None else '?'}"
    )


if __name__ == "__main__":
    main()
