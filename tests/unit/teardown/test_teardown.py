"""meshdoctor.teardown (stopping processes: SIGTERM -> grace -> SIGKILL, leftovers by marker,
every host at once under one deadline), on real processes.

The remote side is a POSIX ``sh`` script fed to ``sh -s`` over ssh; here the same script runs
through ``sh -s`` on this machine (``ShellHosts``: the ssh transport replaced by a local call, the
script and the processes real). Over real ssh it runs in tests/netns/test_probe.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from meshdoctor import execute, remote, teardown

IGNORE_TERM = (
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('up', flush=True)\ntime.sleep(120)\n"
)
SLEEP = "import time\nprint('up', flush=True)\ntime.sleep(120)\n"


class ShellHosts(remote.Hosts):
    """:class:`meshdoctor.remote.Hosts` whose "remote" commands run here, without ssh."""

    def run(self, host, argv, timeout=5.0, *, input=None):
        if host in self.unreachable:
            return execute.CommandResult(list(argv), None, "", "skipped", 0.0)
        return execute.run(list(argv), timeout=timeout, input=input)


@pytest.fixture
def started():
    """Start python processes (killed after the test by pid); each carries a unique marker in
    its command line and (unless ``env_marker=False``: a process standing for one on another
    host, which this machine's leftover search must not see) in MESHDOCTOR_PROBE_ID."""
    procs = []

    def start(code: str, marker: str, env_marker: bool = True) -> subprocess.Popen:
        env = dict(os.environ, MESHDOCTOR_PROBE_ID=marker) if env_marker else dict(os.environ)
        p = subprocess.Popen(
            [sys.executable, "-c", code, marker],
            env=env,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert p.stdout.readline().strip() == b"up"  # its signal disposition is in place
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def stop_process(pid: int) -> None:
    """SIGSTOP ``pid`` and wait until the kernel shows it stopped (the signal is asynchronous)."""
    os.kill(pid, signal.SIGSTOP)
    proc = psutil.Process(pid)
    while proc.status() != psutil.STATUS_STOPPED:
        time.sleep(0.01)


def test_local_child_that_ignores_sigterm_gets_sigkill_after_the_grace(started):
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    p = started(IGNORE_TERM, marker)
    rep = teardown.stop(
        [teardown.Target("localhost", p.pid, "rank 0", True, p)],
        hosts=remote.Hosts(),
        budget_s=5,
        marker=marker,
    )
    assert p.poll() == -signal.SIGKILL
    assert [(a["action"].split()[0], a["outcome"]) for a in rep.actions] == [
        ("SIGTERM", "sent"),
        ("SIGKILL", "sent"),
    ]
    assert rep.found == [] and rep.unkillable == []


def test_stopped_local_child_gets_sigkill_at_once(started):
    p = started(SLEEP, f"md-test-{uuid.uuid4().hex[:8]}")
    stop_process(p.pid)
    rep = teardown.stop(
        [teardown.Target("localhost", p.pid, "rank 1", True, p)], hosts=remote.Hosts(), budget_s=5
    )
    assert p.poll() == -signal.SIGKILL
    assert (
        rep.actions[0]["action"].startswith("SIGKILL rank 1")
        and "(stopped)" in rep.actions[0]["action"]
    )


def test_local_leftover_found_by_its_marker_is_killed(started):
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    stray = started(SLEEP, marker)  # not a target: only the marker identifies it
    rep = teardown.stop([], hosts=remote.Hosts(), budget_s=5, marker=marker)
    # no local target: the local sweep is for runs that had local processes
    assert rep.found == [] and stray.poll() is None
    p = started(SLEEP, marker)
    rep = teardown.stop(
        [teardown.Target("localhost", p.pid, "rank 0", True, p)],
        hosts=remote.Hosts(),
        budget_s=5,
        marker=marker,
    )
    assert [f["pid"] for f in rep.found] == [stray.pid]
    assert stray.wait(timeout=30) == -signal.SIGKILL and rep.unkillable == []


def test_remote_script_escalates_sweeps_and_removes_temp_files(started, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    rank = started(IGNORE_TERM, marker)
    stray = started(SLEEP, marker)
    (tmp_path / f"{marker}-hostfile.json").write_text("{}")
    keep = tmp_path / "other-file"
    keep.write_text("")
    hosts = ShellHosts()
    rep = teardown.stop(
        [teardown.Target("h1", rank.pid, "rank 1", False)],
        hosts=hosts,
        budget_s=10,
        marker=marker,
        tmp_prefix=f"{marker}-",
    )
    acts = [(a["action"], a["outcome"]) for a in rep.actions]
    assert (f"SIGTERM rank 1 (h1, pid {rank.pid})", "sent") in acts
    assert (f"SIGKILL rank 1 (h1, pid {rank.pid})", "sent") in acts
    assert [(f["host"], f["pid"]) for f in rep.found] == [("h1", stray.pid)]
    assert marker in rep.found[0]["cmdline"] and rep.unkillable == []
    assert rank.wait(timeout=30) == -signal.SIGKILL
    assert stray.wait(timeout=30) == -signal.SIGKILL
    assert not (tmp_path / f"{marker}-hostfile.json").exists() and keep.exists()
    assert rep.unreachable == {}


def test_remote_pid_no_longer_carrying_the_marker_is_left_alone(started):
    other = started(SLEEP, "md-test-someone-else")
    rep = teardown.stop(
        [teardown.Target("h1", other.pid, "rank 0", False)],
        hosts=ShellHosts(),
        budget_s=10,
        marker=f"md-test-{uuid.uuid4().hex[:8]}",
    )
    assert other.poll() is None
    assert rep.actions[0]["outcome"].startswith("refused")


def test_signal_remote_reports_states_and_skips_a_stopped_process(started):
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    a, b = started(SLEEP, marker), started(SLEEP, marker)
    stop_process(b.pid)
    got = teardown.signal_remote(ShellHosts(), "h1", [a.pid, b.pid], None, marker=marker)
    assert got[a.pid] == ("sleeping", "read") and got[b.pid] == ("stopped", "read")
    got = teardown.signal_remote(ShellHosts(), "h1", [a.pid, b.pid], "USR2", marker=marker)
    assert got[a.pid][1] == "sent USR2" and got[b.pid][1] == "stopped"
    assert a.wait(timeout=30) == -signal.SIGUSR2 and b.poll() is None


def test_remote_processes_are_asked_first_in_the_same_call(started):
    """``ask`` (the probe's stack request) reaches each running remote process before SIGTERM;
    a stopped one is not asked (the signal would stay pending) and its state is reported."""
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    dumps = (
        "import faulthandler, signal, sys, time\n"
        "faulthandler.register(signal.SIGUSR1, file=sys.stderr)\n" + SLEEP
    )
    a, b = started(dumps, marker), started(SLEEP, marker)
    stop_process(b.pid)
    rep = teardown.stop(
        [
            teardown.Target("h1", a.pid, "rank 0", False),
            teardown.Target("h1", b.pid, "rank 1", False),
        ],
        hosts=ShellHosts(),
        budget_s=10,
        marker=marker,
        ask="USR1",
        ask_wait_s=0.2,
    )
    assert rep.asked == [("h1", a.pid)]
    assert rep.states[("h1", a.pid)] == "sleeping" and rep.states[("h1", b.pid)] == "stopped"
    assert a.wait(timeout=30) == -signal.SIGTERM and b.wait(timeout=30) == -signal.SIGKILL


def test_a_host_that_never_answered_is_unreachable_and_not_waited_on(started):
    """Every host at once under one deadline: the silent host costs the budget, not more, and
    the local target and the answering host are stopped all the same."""

    class Silent(ShellHosts):
        def run(self, host, argv, timeout=5.0, **kw):
            if host == "h9":  # a host behind a pulled cable: nothing comes back in time
                return execute.run(["sleep", "30"], timeout=timeout)
            return super().run(host, argv, timeout, **kw)

    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    loc, rem = started(SLEEP, marker), started(SLEEP, marker, env_marker=False)
    hosts = Silent()
    t0 = time.monotonic()
    rep = teardown.stop(
        [
            teardown.Target("localhost", loc.pid, "rank 0", True, loc),
            teardown.Target("h1", rem.pid, "rank 1", False),
            teardown.Target("h9", 4242, "rank 2", False),
        ],
        hosts=hosts,
        budget_s=1.5,
        marker=marker,
    )
    elapsed = time.monotonic() - t0
    # not waited on: bounded well inside the silent host's 30 s (the figure is in
    # benchmarks/teardown_latency.py)
    assert elapsed < 20, (elapsed, rep.actions)
    assert "h9" in rep.unreachable and "h1" not in rep.unreachable
    assert [a["outcome"] for a in rep.actions if "rank 2" in a["action"]][0].startswith("failed")
    assert loc.poll() == -signal.SIGTERM and rem.wait(timeout=30) == -signal.SIGTERM


class Slow(ShellHosts):
    """``h1`` answers, but its first ``slow_calls`` calls overrun their deadline (a loaded
    control machine); the calls are counted."""

    def __init__(self, slow_calls: int) -> None:
        super().__init__()
        self.slow_calls, self.calls = slow_calls, 0

    def run(self, host, argv, timeout=5.0, **kw):
        self.calls += 1
        if self.calls <= self.slow_calls:
            return execute.run(["sleep", "30"], timeout=timeout)
        return super().run(host, argv, timeout, **kw)


def test_a_slow_host_that_answered_is_asked_again_and_its_teardown_confirmed(started):
    """Slow is not unreachable: the first call overruns the budget, the retry within the
    confirm total stops the rank, and the host is neither unreachable nor unconfirmed."""
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    rem = started(SLEEP, marker, env_marker=False)
    hosts = Slow(slow_calls=1)
    hosts.mark_answered("h1")
    rep = teardown.stop(
        [teardown.Target("h1", rem.pid, "rank 1", False)],
        hosts=hosts,
        budget_s=1.0,
        confirm_s=15.0,
        marker=marker,
    )
    assert hosts.calls == 2, rep.actions
    assert rep.unreachable == {} and rep.unconfirmed == {}, rep.actions
    assert rem.wait(timeout=30) == -signal.SIGTERM


def test_a_host_that_answered_and_never_confirms_is_unconfirmed_not_unreachable(started):
    """A host whose ranks answered and whose teardown never confirms within the bounded total
    is reported as not confirmed (with how long it was tried), never as unreachable."""
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    hosts = Slow(slow_calls=1000)
    hosts.mark_answered("h1")
    t0 = time.monotonic()
    rep = teardown.stop(
        [teardown.Target("h1", 4242, "rank 1", False)],
        hosts=hosts,
        budget_s=1.0,
        confirm_s=3.0,
        marker=marker,
    )
    assert time.monotonic() - t0 < 20, rep.actions  # bounded, well inside the 30 s it hangs
    assert "h1" not in rep.unreachable and "h1" in rep.unconfirmed, rep.actions
    assert rep.unconfirmed["h1"]["within_s"] >= 1.0
    assert hosts.calls >= 2
    outcome = [a["outcome"] for a in rep.actions if "rank 1" in a["action"]][0]
    assert outcome.startswith("not confirmed"), rep.actions


def test_a_host_that_went_silent_is_not_asked_again(started):
    """A host the caller saw go silent while the others were heard (a link down) answered
    before, but asking again over a dead connection cannot confirm anything: one call, then
    reported as not confirmed with how long it had been silent, never unreachable."""
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    hosts = Slow(slow_calls=1000)
    hosts.mark_answered("h1")
    rep = teardown.stop(
        [teardown.Target("h1", 4242, "rank 1", False)],
        hosts=hosts,
        budget_s=1.0,
        confirm_s=60.0,  # never waited out: the silent host gets the first budget only
        marker=marker,
        silent={"h1": 4.2},
    )
    assert hosts.calls == 1, rep.actions
    assert "h1" not in rep.unreachable and rep.unconfirmed["h1"]["silent_s"] == 4.2, rep


SPAWN_IGNORING_TERM = (  # ignores SIGTERM, starts a child in a session of its own every 50 ms
    "import signal, subprocess, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('up', flush=True)\n"
    "while True:\n"
    "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],\n"
    "                     start_new_session=True)\n"
    "    time.sleep(0.05)\n"
)


def _carrying(marker: str) -> list:
    out = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("MESHDOCTOR_PROBE_ID") == marker:
                out.append(p)
        except psutil.Error:
            continue
    return out


def test_children_born_during_the_grace_period_are_killed_with_their_parent(started):
    """A local rank that ignores SIGTERM and keeps starting children (each in its own session,
    out of reach of a process-group kill): the ones born during the grace period get SIGKILL
    with it, and none is reported as a leftover that survived the teardown."""
    marker = f"md-test-{uuid.uuid4().hex[:8]}"
    p = started(SPAWN_IGNORING_TERM, marker)
    try:
        rep = teardown.stop(
            [teardown.Target("localhost", p.pid, "rank 0", True, p)],
            hosts=remote.Hosts(),
            budget_s=5,
            marker=marker,
        )
        assert p.poll() == -signal.SIGKILL
        assert rep.found == [] and rep.unkillable == [], rep.found
        born = [a for a in rep.actions if "started under them during the grace" in a["action"]]
        assert born and born[0]["outcome"] == "sent", rep.actions
        deadline = time.monotonic() + 30
        while _carrying(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _carrying(marker) == []
    finally:
        for q in _carrying(marker):
            q.kill()


def test_a_rank_whose_session_ends_while_its_host_refuses_ssh_ended_on_its_own():
    """A remote rank that had finished but whose ssh session was still closing when the
    teardown began: the call to signal it cannot connect (ssh's 255), and its session then
    ends by itself (exit 0). That rank ended on its own: only the search for leftovers is
    missing, never "ranks may remain"."""

    class Refusing(ShellHosts):
        def run(self, host, argv, timeout=5.0, **kw):
            if host == "h1":
                return execute.CommandResult(
                    list(argv), 255, "", "ssh: connect to host h1 port 1: Connection refused", 0.0
                )
            return super().run(host, argv, timeout, **kw)

    session = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    hosts = Refusing()
    hosts.mark_answered("h1")
    try:
        rep = teardown.stop(
            [teardown.Target("h1", 4242, "rank 1", False, session)],
            hosts=hosts,
            budget_s=2.0,
            sweep=False,
        )
    finally:
        session.wait(timeout=30)
    assert session.returncode == 0
    assert rep.unconfirmed["h1"]["ranks_ended"] is True, rep.unconfirmed
