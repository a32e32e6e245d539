"""Start-up of `meshdoctor check --json` against `python -c pass` on the same interpreter
(target: at most 5x, median of 15 interleaved runs), side by side in one run.

Run: python benchmarks/check_startup.py [--runs 15] [--no-compile] [--out DIR]. Rows: the bare
interpreter, importing what ``check`` imports before it runs a check (``import
meshdoctor.commands.check``: the start-up cost alone), and ``check --json`` itself (start-up plus
the checks). Each row's median wall and CPU time and its ratio to the bare interpreter; then the
modules ``check --json`` imports that cost the most (``python -X importtime``, the median of 5
runs, cumulative microseconds). Runs, byte-compiling and the fresh state directory are those of
``benchmarks/check_speed.py`` (its helpers are reused). Saved under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_speed import REPO, _compile, _run  # noqa: E402  (the benchmark's own helpers)

TARGET = 5.0
RESULTS = REPO / "benchmarks" / "results"


def import_costs(argv: List[str], env: Dict[str, str], runs: int = 5) -> List[tuple]:
    """``[(cumulative_us, self_us, depth, module), ...]`` of ``argv`` run under ``-X
    importtime``, the median over ``runs`` runs per module, the most costly first."""
    seen: Dict[tuple, List[tuple]] = {}
    for _ in range(runs):
        p = subprocess.run(
            [sys.executable, "-X", "importtime"] + argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
        for line in p.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
            if m:
                key = (m.group(4), len(m.group(3)) // 2)
                seen.setdefault(key, []).append((int(m.group(1)), int(m.group(2))))
    rows = [
        (statistics.median(c for _, c in v), statistics.median(s for s, _ in v), d, name)
        for (name, d), v in seen.items()
    ]
    return sorted(rows, reverse=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", default=None, help="results folder (default: benchmarks/results/)")
    args = ap.parse_args(argv)
    if not args.no_compile:
        _compile(REPO)
    lines = [
        f"# python benchmarks/check_startup.py --runs {args.runs}"
        + (" --no-compile" if args.no_compile else ""),
        f"{os.cpu_count()} CPU(s), load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {sys.executable} "
        f"(Python {sys.version.split()[0]}); {args.runs} interleaved runs; target check --json "
        f"<= {TARGET:g} x python -c pass",
    ]
    with tempfile.TemporaryDirectory(prefix="meshdoctor-bench-") as tmp:
        env = dict(os.environ, XDG_STATE_HOME=str(Path(tmp) / "state"))
        env.pop("MESHDOCTOR_STATE_DIR", None)
        cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "import meshdoctor.commands.check": [
                sys.executable,
                "-c",
                "import meshdoctor.cli, meshdoctor.commands.check",
            ],
            "check --json": [sys.executable, "-m", "meshdoctor", "check", "--json"],
        }
        _run(cmds["check --json"], env, json_out=True)  # fills the state dir's MLX cache
        walls: Dict[str, List[float]] = {k: [] for k in cmds}
        cpus: Dict[str, List[float]] = {k: [] for k in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                wall, cpu, _, _ = _run(cmd, env, json_out=name == "check --json")
                walls[name].append(wall)
                cpus[name].append(cpu)
        costs = import_costs(["-m", "meshdoctor", "check", "--json"], env)
    base = statistics.median(walls["python -c pass"])
    base_cpu = statistics.median(cpus["python -c pass"])
    w = max(map(len, cmds)) + 1
    lines.append(
        f"{'command':<{w}} {'median s':>9} {'min s':>7} {'cpu s':>7} {'x python':>9} "
        f"{'x python cpu':>13}"
    )
    for name in cmds:
        med, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        mark = ""
        if name == "check --json":
            mark = "  ok" if med / base <= TARGET else "  OVER"
        lines.append(
            f"{name:<{w}} {med:>9.3f} {min(walls[name]):>7.3f} {cpu:>7.3f} {med / base:>9.2f} "
            f"{cpu / base_cpu if base_cpu else 0:>13.2f}{mark}"
        )
    lines.append("costliest imports of check --json (cumulative ms, self ms, median of 5):")
    for cum, own, depth, name in [r for r in costs if r[2] <= 2][:15]:
        lines.append(f"  {cum / 1000:7.1f} {own / 1000:7.1f}  {'  ' * depth}{name}")
    print("\n".join(lines))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = Path(args.out) if args.out else RESULTS / f"{stamp}-check-startup-{os.cpu_count()}core"
    out.mkdir(parents=True, exist_ok=True)
    (out / "check_startup.txt").write_text("\n".join(lines) + "\n")
    print(f"saved under {out}")
    return 0 if statistics.median(walls["check --json"]) / base <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
