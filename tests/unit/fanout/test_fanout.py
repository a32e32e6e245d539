"""meshdoctor.fanout: reaching every host, and the interpreter run on remote hosts."""

from __future__ import annotations

import time

from meshdoctor.fanout import run_meshdoctor


def test_fan_out_reports_each_host_and_never_raises():
    t0 = time.monotonic()
    got = run_meshdoctor(
        ["here", "-oProxyCommand=x", "nosuch.invalid"],
        ["check", "--local-only", "--json", "--only", "MD103"],
        timeout=20,
        local=lambda h: h == "here",
    )
    assert time.monotonic() - t0 < 20 + 30  # bounded: the per-host deadline, generously
    assert got["here"].doc and got["here"].doc["command"] == "check"
    assert got["here"].via == "local"
    assert (
        got["-oProxyCommand=x"].doc is None and "ssh destination" in got["-oProxyCommand=x"].error
    )
    assert not got["nosuch.invalid"].reachable and got["nosuch.invalid"].error


def test_fix_and_fleet_run_the_same_interpreter_on_remote_hosts(monkeypatch):
    """Fleet mode, the fixes and the probe reach other hosts with one interpreter rule, like
    mlx.launch's --python: MESHDOCTOR_REMOTE_PYTHON, else this interpreter."""
    import sys

    from meshdoctor import fanout

    from meshdoctor.hostfile.load import from_list
    from meshdoctor.probe.config import ProbeConfig

    monkeypatch.delenv("MESHDOCTOR_REMOTE_PYTHON", raising=False)
    assert fanout.remote_python() == sys.executable
    assert ProbeConfig(hostfile=from_list("a,b")).remote_python == sys.executable
    monkeypatch.setenv("MESHDOCTOR_REMOTE_PYTHON", "/opt/py/bin/python3")
    assert fanout.remote_python() == "/opt/py/bin/python3"
    assert ProbeConfig(hostfile=from_list("a,b")).remote_python == "/opt/py/bin/python3"


def test_a_deadline_overrun_after_ssh_got_through_is_slow_not_unreachable():
    """ssh ends a connection that does not come up at its connect timeout (exit 255); a call
    still running at a deadline well past it reached the host: no verdict, but reachable. A
    short deadline proves nothing either way unless the host answered before."""
    from meshdoctor import execute
    from meshdoctor.fanout import _reply

    hung = execute.run(["sleep", "30"], timeout=0.3)
    slow = _reply("h1", "ssh", hung, 20.0)
    assert slow.reachable and "slow, not unreachable" in slow.error and slow.doc is None
    assert not _reply("h1", "ssh", hung, 2.0).reachable
    assert _reply("h1", "ssh", hung, 2.0, answered=True).reachable
    assert _reply("here", "local", hung, 2.0).reachable  # this machine is never unreachable


def test_a_large_fleet_is_reached_in_waves_of_at_most_parallel_hosts(monkeypatch):
    """--max-parallel: never more than ``parallel`` hosts at once, and every host answered."""
    import threading

    from meshdoctor import execute, fanout

    now = {"n": 0, "most": 0}
    lock = threading.Lock()

    def fake_run(host, argv, timeout, **kw):
        with lock:
            now["n"] += 1
            now["most"] = max(now["most"], now["n"])
        try:
            return execute.run(["sh", "-c", 'sleep 0.2; echo "{}"'], timeout=timeout)
        finally:
            with lock:
                now["n"] -= 1

    monkeypatch.setattr(fanout.remote, "run", fake_run)
    hosts = [f"h{i}" for i in range(9)]
    got = run_meshdoctor(hosts, ["--version"], timeout=30, parallel=3)
    assert list(got) == hosts and all(r.doc == {} for r in got.values())
    assert now["most"] <= 3
