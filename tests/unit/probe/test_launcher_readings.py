"""The launcher's readings of its ranks without processes: the remote waiter's status line,
and which remote hosts went silent while the others were heard."""

from __future__ import annotations

import time

from meshdoctor.hostfile.load import parse
from meshdoctor.probe.config import ProbeConfig
from meshdoctor.probe.events import Tracker
from meshdoctor.probe.launcher import Launch, waited_status
from meshdoctor.probe.procs import RankProc


def test_the_waiters_status_line_gives_the_real_signal():
    assert waited_status("meshdoctor-rank-exit 137\n") == -9  # 128 + SIGKILL
    assert waited_status("meshdoctor-rank-exit 1\n") == 1
    assert waited_status("meshdoctor-rank-exit 0") == 0
    assert waited_status("meshdoctor-rank-exit x") is None
    assert waited_status("Traceback (most recent call last):") is None


class Running:
    """A local child that still runs (an ssh client whose session has not ended)."""

    pid = 4242

    def poll(self):
        return None


def _launch(hosts):
    hf = parse(
        '{"hosts": ['
        + ", ".join(f'{{"ssh": "{h}", "ips": ["10.0.0.{i + 1}"]}}' for i, h in enumerate(hosts))
        + "]}"
    )
    cfg = ProbeConfig(hostfile=hf, ops=["all_sum"], size=1 << 20)
    lc = Launch(cfg, "md-probe-test", {}, [False] * len(hosts), [])
    lc.tracker = Tracker(lc.states, time.monotonic() - 10)
    lc.procs = [RankProc(st, Running()) for st in lc.states]
    return lc


def test_a_host_silent_while_the_others_are_heard_is_singled_out():
    lc = _launch(["h0", "h1", "h2"])
    now = time.monotonic()
    for st, ago in zip(lc.states, (0.1, 0.2, 5.0)):
        st.last_event = now - ago
    silent = lc.silent_hosts()
    assert list(silent) == ["h2"] and silent["h2"] >= 5.0


def test_a_mesh_read_late_alike_singles_no_host_out():
    """A loaded control machine reads every host late: nobody is singled out."""
    lc = _launch(["h0", "h1", "h2"])
    now = time.monotonic()
    for st in lc.states:
        st.last_event = now - 6.0
    assert lc.silent_hosts() == {}


def test_a_host_whose_ranks_never_spoke_is_not_called_silent():
    """A rank still starting (a slow interpreter start) has said nothing yet: that is not a
    host gone silent."""
    lc = _launch(["h0", "h1"])
    lc.states[0].last_event = time.monotonic()
    assert lc.silent_hosts() == {}


def test_a_rank_that_never_said_its_pid_gets_the_state_found_by_the_marker():
    """The teardown's marker search on h1 found the stopped process of h1's only rank whose
    pid was never said (listed by both passes of its search, and beside the shell that
    started it): that rank is stopped. h0's rank said its pid: nothing is made up for it."""
    from meshdoctor.teardown import Report

    lc = _launch(["h0", "h1"])
    lc.states[0].pid = 311
    rep = Report(starting={("h1", 90): "stopped", ("h1", 88): "sleeping", ("h0", 7): "running"})
    assert lc.starting_states(rep) == {1: "stopped"}


class Exited:
    """A local child that has ended: an ssh client that exited with ``rc``."""

    pid = 4243

    def __init__(self, rc: int) -> None:
        self.rc = rc

    def poll(self):
        return self.rc


def test_an_ssh_that_exited_is_judged_only_after_its_own_words():
    """ssh refused by the host exits 255 and writes "ssh: connect to host ... refused" last on
    its stderr. On a loaded box the stderr reader can be scheduled after the exit is seen: the
    exit waits for that stream's end, so the host is read as unreachable, not as a rank that
    failed without a word."""
    lc = _launch(["h0", "hx"])
    lc.procs[1] = RankProc(lc.states[1], Exited(255))
    lc.eof[(1, "out")] = True
    lc._poll_exits()
    assert lc.states[1].returncode is None  # its stderr is not drained yet
    lc.q.put((1, "err", "ssh: connect to host 10.0.0.2 port 2222: Connection refused\n"))
    lc.q.put((1, "eof-err", None))
    lc._drain(0.1)
    lc._poll_exits()
    assert lc.states[1].returncode == 255
    assert any("Connection refused" in ln for ln in lc.states[1].stderr_tail(3))


def test_a_rank_whose_waiter_said_its_status_is_judged_without_its_stderr_end():
    """The waiter's status line came: the ssh session may linger (its stderr open), and the
    exit is judged from the status at once, so a killed rank is still the first failure."""
    lc = _launch(["h0", "h1"])
    lc.procs[1] = RankProc(lc.states[1], Running())
    lc.waited[1] = -9
    lc.eof[(1, "out")] = True
    lc._poll_exits()
    assert lc.states[1].returncode == -9
