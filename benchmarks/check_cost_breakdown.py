"""Where `meshdoctor check --json`'s CPU time goes: the least CPU seconds (wait4, of --runs
interleaved runs) of the bare interpreter, of importing what it cannot do without (click, psutil,
dataclasses, hashlib), of importing ``meshdoctor.commands.check``, of importing every check
(``all_checks()``), of ``--version`` and of ``check --json`` itself, each as a ratio to
``python -c pass``. The least of several runs says the most on a shared, loaded machine.

Run: python benchmarks/check_cost_breakdown.py [--runs 7] [NAME ...]. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

PY = sys.executable
CMDS = {
    "pass": [PY, "-c", "pass"],
    "click": [PY, "-c", "import click"],
    "psutil": [PY, "-c", "import psutil"],
    "hashlib": [PY, "-c", "import hashlib"],
    "dataclasses": [PY, "-c", "import dataclasses"],
    "cmd.check": [PY, "-c", "import meshdoctor.commands.check"],
    "all_checks": [PY, "-c", "from meshdoctor.checker.registry import all_checks; all_checks()"],
    "--version": [PY, "-m", "meshdoctor", "--version"],
    "check --json": [PY, "-m", "meshdoctor", "check", "--json"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("names", nargs="*", help=f"of {', '.join(CMDS)} (default: all)")
    a = ap.parse_args()
    sel = a.names or list(CMDS)
    best = {k: float("inf") for k in sel}
    for _ in range(a.runs):
        for k in sel:
            p = subprocess.Popen(CMDS[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            best[k] = min(best[k], ru.ru_utime + ru.ru_stime)
    print(f"# {PY}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, {a.runs} runs")
    for k in sel:
        print(f"{k:14s} {best[k] * 1000:7.1f} ms cpu  {best[k] / best.get('pass', best[k]):5.1f}x")


if __name__ == "__main__":
    main()
