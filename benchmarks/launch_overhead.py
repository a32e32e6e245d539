"""What ``meshdoctor launch`` costs, and how fast it ends a failed job: a healthy 3-rank ring job
over loopback through plain mlx.launch, through ``launch --no-check`` and through ``launch``
(the default gate: the fleet check), side by side in one run, rounds alternating; then the time
from a rank's death to the exit, for launch and for mlx.launch alone, with survivors that obey
SIGTERM and with survivors that ignore it (MLX #3910, #4278: mlx.launch alone then waits for
them forever; the bound here is ``--stuck-after``).

Run (as root: each run is in private network and PID namespaces, so the ring ports and the
gate's process checks see only this benchmark): python benchmarks/launch_overhead.py
[--rounds 5] [--out DIR]. Prints medians, differences and ratios; saves them as text and JSON
under benchmarks/results/ (DIR). Targets (the project's, not asserted): the gate and supervision
add <= 1.5 s with the default check, <= 0.05 s with --no-check; a rank's death to launch's exit
<= 3 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

NS = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
JOB = r"""
import os, signal, sys, time
import mlx.core as mx
g = mx.distributed.init()
r = g.rank()
mode = os.environ.get("BENCH_MODE", "")
if mode == "ignore-term" and r != 1:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for step in range(3):
    mx.eval(mx.distributed.all_sum(mx.ones(1024), group=g))
    if step == 1 and mode and r == 1:
        with open(os.environ["BENCH_DEATH"], "w") as fh:
            fh.write(repr(time.time()))
        os._exit(255)
    if step == 1 and mode and r != 1:
        time.sleep(3600)  # a survivor: it never notices the dead rank, as one spinning would
    time.sleep(0.05)
print(f"rank {r} ok", flush=True)
"""


def _ns() -> List[str]:
    ok = os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip")
    return NS if ok else []


def _wrap(cmd: List[str], ns: List[str]) -> List[str]:
    if not ns:
        return cmd
    return ns + ["sh", "-c", "ip link set lo up && exec " + " ".join(map(shlex.quote, cmd))]


CPU: Dict[str, List[float]] = {}  # CPU seconds of each run's whole tree, by variant


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the reaped children, theirs included
    return ru.ru_utime + ru.ru_stime


def run_once(cmd: List[str], ns: List[str], env: Dict[str, str], limit: float, tag: str = ""):
    """(wall seconds, exit status or None when still running at ``limit``, end time.time());
    the CPU seconds of the run's process tree are added to :data:`CPU` under ``tag``."""
    c0 = _children_cpu()
    t0 = time.monotonic()
    p = subprocess.Popen(
        _wrap(cmd, ns),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        rc: Optional[int] = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        rc = None
        os.killpg(p.pid, 9)
        p.wait()
    if tag:
        CPU.setdefault(tag, []).append(_children_cpu() - c0)
    return time.monotonic() - t0, rc, time.time()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stuck-after", type=float, default=30.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    ns = _ns()
    tmp = Path(tempfile.mkdtemp(prefix="md-bench-launch-"))
    job = tmp / "job.py"
    job.write_text(JOB)
    hosts = tmp / "hosts.json"
    entry = {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}
    hosts.write_text(json.dumps({"backend": "ring", "hosts": [entry] * 3}))
    launcher = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    user = [sys.executable, str(job)]
    md = [sys.executable, "-m", "meshdoctor", "launch", "--hostfile", str(hosts)]
    variants = {
        "mlx.launch": [launcher, "--hostfile", str(hosts), "--", *user],
        # the floor of any meshdoctor command: a second interpreter starting, click and the CLI
        "meshdoctor --version": [sys.executable, "-m", "meshdoctor", "--version"],
        "launch --no-check": md + ["--no-check", "--", *user],
        "launch": md + ["--", *user],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    times: Dict[str, List[float]] = {k: [] for k in variants}
    codes: Dict[str, List[Optional[int]]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for name, cmd in variants.items():
            wall, rc, _ = run_once(cmd, ns, env, 300, tag=name)
            times[name].append(wall)
            codes[name].append(rc)
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["mlx.launch"]
    least = min(times["mlx.launch"])  # on a loaded box the quietest run is the clearest
    lines = [
        f"meshdoctor launch overhead, healthy 3-rank ring job over loopback, {args.rounds} "
        f"rounds alternating, {os.cpu_count()} CPUs, namespaces: {'yes' if ns else 'no'}",
    ]
    for name in variants:
        if name == "meshdoctor --version":
            lines.append(f"  {name:18s} median {med[name]:6.3f} s  (alone: the start-up floor)")
            continue
        low = min(times[name])
        lines.append(
            f"  {name:18s} median {med[name]:6.3f} s  (+{med[name] - base:6.3f} s, "
            f"x{med[name] / base:5.2f}); min {low:6.3f} s (+{low - least:6.3f} s)  "
            f"runs {', '.join(f'{t:.2f}' for t in times[name])}  exit {codes[name]}"
        )
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    lines.append(
        "CPU seconds of the whole tree (median; the box is shared: CPU says more than wall): "
        + ", ".join(f"{k} {v:.3f}" for k, v in cpu.items())
        + f"; launch --no-check - mlx.launch = {cpu['launch --no-check'] - cpu['mlx.launch']:+.3f} s"
        f" (meshdoctor --version alone {cpu['meshdoctor --version']:.3f} s)"
    )
    deaths: Dict[str, Dict[str, object]] = {}
    for mode in ("obey-term", "ignore-term"):
        for name in ("mlx.launch", "launch --no-check"):
            death = tmp / f"death-{mode}-{name.replace(' ', '_')}"
            e = dict(env, BENCH_MODE=mode, BENCH_DEATH=str(death))
            _, rc, t_end = run_once(variants[name], ns, e, args.stuck_after)
            died = float(death.read_text()) if death.exists() else None
            took = None if died is None or rc is None else t_end - died
            deaths[f"{name} / survivors {mode}"] = {"exit": rc, "death_to_exit_s": took}
    lines.append("time from rank 1's death (os._exit(255)) to the command's exit:")
    for key, d in deaths.items():
        took = d["death_to_exit_s"]
        shown = (
            f"{took:.3f} s" if took is not None else f"still running after {args.stuck_after:g} s"
        )
        lines.append(f"  {key:40s} {shown}  exit {d['exit']}")
    text = "\n".join(lines)
    print(text)
    out = (
        Path(args.out)
        if args.out
        else Path(__file__).parent
        / "results"
        / (f"{dt.date.today().isoformat()}-launch-overhead-{os.cpu_count()}core")
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "launch_overhead.txt").write_text(text + "\n")
    (out / "launch_overhead.json").write_text(
        json.dumps(
            {"times_s": times, "medians_s": med, "cpu_s": CPU, "exits": codes, "deaths": deaths},
            indent=2,
        )
        + "\n"
    )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
