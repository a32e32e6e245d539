"""A command whose start returned but whose thread had not tracked it yet when meshdoctor was
interrupted (the thread descheduled between the two, then stopped with the interpreter) is
still killed by the sweep: its token is known from before its start. Seen once in CI: the
hung RDMA tool of an interrupted `check` outlived meshdoctor under load."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil

SCENARIO = textwrap.dedent(
    """
    import sys, threading, time
    from meshdoctor import execute

    ready = sys.argv[1]
    hold = threading.Event()
    real_track = execute._track

    def slow_track(proc):  # the thread stops right after Popen returned
        hold.wait()
        real_track(proc)

    execute._track = slow_track
    cmd = ["sh", "-c", f"sleep 300 & echo $$ $! > {ready}.tmp && mv {ready}.tmp {ready}; wait"]
    threading.Thread(target=execute.run, args=(cmd,), kwargs={"timeout": 120}, daemon=True).start()
    t_end = time.monotonic() + 60
    import os
    while not os.path.exists(ready) and time.monotonic() < t_end:
        time.sleep(0.02)
    execute.stop_all(final=True)  # the interrupt's sweep; the thread never tracks it
    """
)


def _gone(pid: int, within: float = 30.0) -> bool:
    t_end = time.monotonic() + within
    while time.monotonic() < t_end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_a_command_started_but_not_yet_tracked_is_killed_by_the_sweep(tmp_path):
    ready = tmp_path / "pids"
    p = subprocess.run(
        [sys.executable, "-c", SCENARIO, str(ready)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    shell, sleeper = (int(x) for x in ready.read_text().split())
    try:
        assert _gone(sleeper) and _gone(shell), (shell, sleeper)
    finally:
        for pid in (sleeper, shell):  # what this test started, if the sweep missed it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
