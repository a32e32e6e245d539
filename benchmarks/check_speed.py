"""Start-up and check speed: `meshdoctor check --json` and `--help` against `python -c pass`.

Run: python benchmarks/check_speed.py [--runs 15] [--no-compile] [--baseline REV]. Prints, side
by side, the median wall time of each command over the runs (interleaved, so load affects all
alike), its median CPU time (user + system, children included: what load changes least), its ratio
to the bare interpreter, and the median of the verdict's own ``duration_s`` (the checks' work,
without interpreter start-up and the imports before it). ``--baseline REV`` also runs the same
commands from git revision REV (extracted with ``git archive`` into a temporary folder) and from a
copy of this working tree, both through the same small launcher (the tree first on ``sys.path``,
an editable install's import hook set aside), interleaved, and prints the ratio of the two. Targets (on a 2-core box): check --json
<= 0.15 s, --help <= 0.08 s median. MD301 (a process-table scan) is included: this is what an
operator's gate runs.

Byte code: pip compiles a package's modules when it installs it, so a user's run never compiles
them. Where ``PYTHONDONTWRITEBYTECODE`` is set (as in some CI and sandbox shells) an editable
checkout would recompile every module on every run; the benchmark therefore byte-compiles the
package first (``python -m compileall``, into the ignored ``__pycache__`` folders), as an install
does. ``--no-compile`` skips that and measures whatever cache there is.

State: the runs use a fresh state directory (``XDG_STATE_HOME`` pointed at a temporary folder,
``MESHDOCTOR_STATE_DIR`` unset, so the default platformdirs path is what runs), so the MLX build
cache from an earlier run does not help; the first ``check --json`` run (the one that fills the
cache) is printed on its own line and is not part of the medians.

MD301 samples the CPU of every MLX rank it finds for 0.1 s (a spinning survivor is killed
differently): on a machine where other MLX jobs run, that adds 0.1 s to a check. The benchmark
prints in how many runs MD301 found ranks.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"check --json": 0.15, "--help": 0.08}
REPO = Path(__file__).resolve().parent.parent


def _compile(root: Path) -> None:
    dirs = [str(root / d) for d in ("meshdoctor", "checks", "fixes") if (root / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True, timeout=300)


def _extract(rev: str, into: Path) -> Path:
    """The tree of ``rev`` under ``into``, importable as ``meshdoctor`` from there (the checks
    and fixes packages live outside ``meshdoctor/`` in the checkout: linked into it)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True, timeout=120
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=120)
    for sub in ("checks", "fixes"):
        if (into / sub).is_dir() and not (into / "meshdoctor" / sub).exists():
            (into / "meshdoctor" / sub).symlink_to(into / sub)
    return into


def _copy_worktree(into: Path) -> Path:
    """This working tree's packages under ``into``, laid out like :func:`_extract`'s."""
    ignore = shutil.ignore_patterns("__pycache__")
    for sub in ("meshdoctor", "checks", "fixes"):
        if (REPO / sub).is_dir():
            shutil.copytree(REPO / sub, into / sub, ignore=ignore)
    for sub in ("checks", "fixes"):
        if (into / sub).is_dir() and not (into / "meshdoctor" / sub).exists():
            (into / "meshdoctor" / sub).symlink_to(into / sub)
    return into


# Runs ``python -m meshdoctor ARGS`` from the tree in argv[1], not from an installed copy.
LAUNCH = (
    "import sys, runpy; tree = sys.argv[1]; sys.argv = ['meshdoctor'] + sys.argv[2:]; "
    "sys.path.insert(0, tree); "
    "sys.meta_path[:] = [f for f in sys.meta_path if not (getattr(f, '__module__', '') or "
    "type(f).__module__).startswith('__editable__')]; "
    "runpy.run_module('meshdoctor', run_name='__main__', alter_sys=True)"
)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run(argv, env, json_out=False):
    t0, c0 = time.perf_counter(), _children_cpu()
    r = subprocess.run(
        argv,
        stdout=subprocess.PIPE if json_out else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=120,
    )
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    dur, ranks = None, False
    if json_out:
        try:
            verdict = json.loads(r.stdout)
            dur = float(verdict["duration_s"])
            ranks = any(x["code"] == "MD301" and x["status"] != "ok" for x in verdict["results"])
        except (ValueError, KeyError, TypeError):
            dur = None
    return wall, cpu, dur, ranks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile first")
    ap.add_argument("--baseline", metavar="REV", help="also run git revision REV, side by side")
    args = ap.parse_args()
    md = [sys.executable, "-m", "meshdoctor"]
    with tempfile.TemporaryDirectory(prefix="meshdoctor-bench-") as tmp:
        state = Path(tmp) / "state"
        env = dict(os.environ, XDG_STATE_HOME=str(state))
        env.pop("MESHDOCTOR_STATE_DIR", None)
        trees = {"": md}
        if args.baseline:
            base_tree = _extract(args.baseline, Path(tmp) / "baseline")
            this_tree = _copy_worktree(Path(tmp) / "this")
            trees[" (copy)"] = [sys.executable, "-c", LAUNCH, str(this_tree)]
            trees[f" @{args.baseline}"] = [sys.executable, "-c", LAUNCH, str(base_tree)]
        if not args.no_compile:
            _compile(REPO)
            if args.baseline:
                _compile(base_tree)
                _compile(this_tree)
        cmds = {"python -c pass": ([sys.executable, "-c", "pass"], env)}
        for tag, pre in trees.items():
            cmds["--help" + tag] = (pre + ["--help"], env)
            cmds["check --json" + tag] = (pre + ["check", "--json"], env)
        first = {
            tag: _run(pre + ["check", "--json"], env, json_out=True) for tag, pre in trees.items()
        }
        walls = {k: [] for k in cmds}
        cpus = {k: [] for k in cmds}
        durations = {tag: [] for tag in trees}
        with_ranks = 0
        for _ in range(args.runs):
            for name, (argv, cenv) in cmds.items():
                is_check = name.startswith("check --json")
                wall, cpu, dur, ranks = _run(argv, cenv, json_out=is_check)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if is_check:
                    with_ranks += ranks and name == "check --json"
                    if dur is not None:
                        durations[name[len("check --json") :]].append(dur)
    base = statistics.median(walls["python -c pass"])
    print(
        f"{args.runs} runs; {'not ' if args.no_compile else ''}byte-compiled first"
        f"{'' if args.no_compile else ' (as pip does at install)'}; PYTHONDONTWRITEBYTECODE="
        f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
    )
    w = max(len(n) for n in cmds) + 1
    print(
        f"{'command':<{w}} {'median s':>9} {'min s':>7} {'max s':>7} {'cpu s':>7} "
        f"{'x python':>9} {'target s':>9}"
    )
    for name, ts in walls.items():
        med = statistics.median(ts)
        tgt = TARGETS.get(name)
        verdict = "" if tgt is None else ("  ok" if med <= tgt else "  OVER")
        print(
            f"{name:<{w}} {med:>9.3f} {min(ts):>7.3f} {max(ts):>7.3f} "
            f"{statistics.median(cpus[name]):>7.3f} {med / base:>9.1f} "
            f"{tgt if tgt else '':>9}{verdict}"
        )
    for tag, ds in durations.items():
        if ds:
            print(
                f"check{tag} duration_s (the verdict's own): median {statistics.median(ds):.3f} s,"
                f" min {min(ds):.3f}, max {max(ds):.3f}"
            )
    for tag, (wall, _, dur, _) in first.items():
        print(
            f"first check --json{tag} (fresh state dir, not in the medians): wall {wall:.3f} s,"
            f" duration_s {dur if dur is not None else '?'}"
        )
    if args.baseline:
        for cmd in ("--help", "check --json"):
            new = statistics.median(walls[f"{cmd} (copy)"])
            old = statistics.median(walls[f"{cmd} @{args.baseline}"])
            newc = statistics.median(cpus[f"{cmd} (copy)"])
            oldc = statistics.median(cpus[f"{cmd} @{args.baseline}"])
            print(
                f"{cmd}: this tree / @{args.baseline} = {new / old:.2f} (wall), "
                f"{newc / oldc:.2f} (cpu), both through the launcher"
            )
    print(f"MD301 found MLX ranks (+0.1 s CPU sample) in {with_ranks} of {args.runs} runs")


if __name__ == "__main__":
    main()
