"""What .ci/run keeps running beside the whole test run, in the machine's own namespaces: the
work of an unrelated user that the tests must neither see nor touch.

``start DIR``: starts, each in a session of its own,
* an unrelated MLX process holding memory (an evaluated 64 MiB array), as a notebook would;
* a running job: a launcher whose child carries ``MLX_RANK=0`` (a rank under a live parent);
each records the catchable signals it gets in ``DIR/signals.log`` and keeps running, and their
pids and start times go to ``DIR/state.json``. It also starts a watcher that runs the README's
main job the way its user would (``meshdoctor check --json --only MD301``, in this namespace)
every ``WATCH_S`` seconds and writes to ``DIR/seen.log`` every rank it fails on (a stale rank:
what a test planted where the user sees it).

``check DIR``: exit 1, saying why, unless both are alive, the same processes (start times),
not stopped, still parent and child, never signalled, and the watcher saw no stale rank.
``stop DIR``: stops all three. ``leftovers TOKEN``: the processes whose environment has
``MESHDOCTOR_CI_RUN=TOKEN`` (what the run started) still alive; exit 1 when there are any.
``netns-before FILE`` / ``netns-left FILE TOKEN``: the md* network namespaces made during the
run and left (not those where a process of another program still runs); exit 1 for any.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

WATCH_S = 20
CATCHABLE = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)

_RECORDER = """
import os, signal, sys, time
log = sys.argv[1]
def note(sig, _frame):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()} {sys.argv[2]} got signal {sig}\\n")
for s in (%s):
    signal.signal(s, note)
""" % ", ".join(str(int(s)) for s in CATCHABLE)

MLX_HOLDER = (
    _RECORDER
    + """
import mlx.core as mx
a = mx.ones((16 << 20,), dtype=mx.float32)  # 64 MiB
mx.eval(a)
while True:
    time.sleep(3600)
"""
)

LAUNCHER = (
    _RECORDER
    + """
import subprocess
env = dict(os.environ, MLX_RANK="0", MLX_WORLD_SIZE="1")
rank = subprocess.Popen([sys.executable, "-c", sys.argv[3], log, "rank"], env=env)
while True:
    time.sleep(3600)
"""
)

RANK = (
    _RECORDER
    + """
while True:
    time.sleep(3600)
"""
)


def _spawn(argv, **kw) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "MESHDOCTOR_CI_RUN"}
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        env=kw.pop("env", env),
        **kw,
    )


def start(d: Path) -> int:
    """Start the MLX holder, the job and the watcher; record them in ``d/state.json``."""
    d.mkdir(parents=True, exist_ok=True)
    log = str(d / "signals.log")
    Path(log).touch()
    mlx = _spawn([sys.executable, "-c", MLX_HOLDER, log, "mlx-holder"])
    job = _spawn([sys.executable, "-c", LAUNCHER, log, "launcher", RANK])
    watcher = _spawn([sys.executable, __file__, "watch", str(d)])
    deadline = time.monotonic() + 120
    while True:  # the rank has started and the MLX array is evaluated (64 MiB resident)
        kids = psutil.Process(job.pid).children()
        if kids and psutil.Process(mlx.pid).memory_info().rss > 64 << 20:
            break
        if time.monotonic() > deadline or mlx.poll() is not None or job.poll() is not None:
            print("the processes beside the run did not start", file=sys.stderr)
            return 1
        time.sleep(0.2)
    state = {
        name: {"pid": p.pid, "create_time": psutil.Process(p.pid).create_time()}
        for name, p in (("mlx-holder", mlx), ("launcher", job), ("watcher", watcher))
    }
    state["rank"] = {"pid": kids[0].pid, "create_time": kids[0].create_time()}
    (d / "state.json").write_text(json.dumps(state))
    print(
        f"beside the run: an MLX process holding 64 MiB (pid {mlx.pid}) and a running job's "
        f"rank with MLX_RANK=0 (pid {kids[0].pid}, launcher pid {job.pid})"
    )
    return 0


def watch(d: Path) -> int:
    """Every WATCH_S seconds, the user's ``meshdoctor check --only MD301`` here; each stale rank
    (a fail) it names goes to ``d/seen.log``."""
    seen = d / "seen.log"
    me = [sys.executable, "-m", "meshdoctor", "check", "--json", "--only", "MD301"]
    while True:
        try:
            p = subprocess.run(me, capture_output=True, text=True, timeout=120)
            doc = json.loads(p.stdout)
            for r in doc.get("results", []):
                if r.get("status") == "fail":
                    with seen.open("a") as fh:
                        fh.write(f"{time.strftime('%H:%M:%S')} {r.get('summary')}\n")
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            with seen.open("a") as fh:
                fh.write(f"{time.strftime('%H:%M:%S')} the check did not run: {exc}\n")
        time.sleep(WATCH_S)


def check(d: Path) -> int:
    """Exit 1, saying why, unless what ``start`` began is alive, untouched and unbothered."""
    state = json.loads((d / "state.json").read_text())
    bad = []
    for name, rec in state.items():
        try:
            p = psutil.Process(rec["pid"])
            if abs(p.create_time() - rec["create_time"]) > 0.01:
                bad.append(f"{name} (pid {rec['pid']}) is gone: the pid is another process now")
            elif p.status() in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE, "tracing-stop"):
                bad.append(f"{name} (pid {rec['pid']}) is {p.status()}")
        except psutil.NoSuchProcess:
            bad.append(f"{name} (pid {rec['pid']}) is gone")
    try:
        if psutil.Process(state["rank"]["pid"]).ppid() != state["launcher"]["pid"]:
            bad.append("the rank is no longer its launcher's child")
    except psutil.NoSuchProcess:
        pass
    for line in (d / "signals.log").read_text().splitlines():
        bad.append(f"signalled: {line}")
    seen = d / "seen.log"
    for line in seen.read_text().splitlines() if seen.exists() else []:
        bad.append(f"the user's meshdoctor check beside the run saw: {line}")
    for line in bad:
        print(f"beside the run: {line}", file=sys.stderr)
    if not bad:
        print("beside the run: the MLX process and the job's rank ran untouched throughout")
    return 1 if bad else 0


def stop(d: Path) -> int:
    """SIGKILL everything ``start`` began (their handlers would only log a SIGTERM)."""
    try:
        state = json.loads((d / "state.json").read_text())
    except (OSError, ValueError):
        return 0
    for rec in state.values():
        try:
            p = psutil.Process(rec["pid"])
            if abs(p.create_time() - rec["create_time"]) <= 0.01:
                p.kill()
        except psutil.Error:
            pass
    return 0


def leftovers(token: str) -> int:
    """Exit 1, naming them, when processes the run started (marked by ``token``) live on."""
    marker = f"MESHDOCTOR_CI_RUN={token}"
    left = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        if p.pid == os.getpid() or p.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            env = p.environ()
        except psutil.Error:
            continue
        if env.get("MESHDOCTOR_CI_RUN") == token:
            test = env.get("PYTEST_CURRENT_TEST", "an unknown test")
            left.append(f"pid {p.pid} ({' '.join(p.info['cmdline'] or [])[:200]}) of {test}")
    for line in left:
        print(f"left behind by the run ({marker}): {line}", file=sys.stderr)
    return 1 if left else 0


def _netns() -> set:
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    return {line.split()[0] for line in p.stdout.splitlines() if line.strip()}


def netns_leftovers(before: Path, token: str) -> int:
    """Exit 1, naming them, for the md* network namespaces made since ``before`` (a file of
    ``ip netns list`` names) and still there, leaving out one with a live process that the run
    did not start (a bed of another program on this machine)."""
    had = set(before.read_text().split()) if before.exists() else set()
    left = []
    for name in sorted(_netns() - had):
        if not name.startswith("md"):
            continue
        pids = subprocess.run(
            ["ip", "netns", "pids", name], capture_output=True, text=True, timeout=30
        ).stdout.split()
        theirs = False
        for pid in pids:
            try:
                theirs |= psutil.Process(int(pid)).environ().get("MESHDOCTOR_CI_RUN") != token
            except (psutil.Error, ValueError):
                continue
        if not theirs:
            left.append(name)
    for name in left:
        print(f"network namespace left behind by the run: {name}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    if sys.argv[1] == "netns-before":
        Path(sys.argv[2]).write_text("\n".join(sorted(_netns())))
        sys.exit(0)
    if sys.argv[1] == "netns-left":
        sys.exit(netns_leftovers(Path(sys.argv[2]), sys.argv[3]))
    what, arg = sys.argv[1], sys.argv[2]
    fn = {"start": start, "watch": watch, "check": check, "stop": stop}.get(what)
    sys.exit(fn(Path(arg)) if fn else leftovers(arg))
