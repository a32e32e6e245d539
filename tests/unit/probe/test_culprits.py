"""Which rank is at fault (meshdoctor/probe/culprits.py): the first cause against the ranks that
only lost a peer, on rank states written as the launcher would have recorded them."""

from __future__ import annotations

import signal
from collections import deque

from meshdoctor.probe import culprits as K
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome

PEER_LOST = "[ring] connection to a peer was lost"  # MLX ring backend, a consequence (MD613)


def _rank(rank, rc=None, exited_at=None, stderr=(), errors=(), done=False):
    st = RankState(rank, "localhost", pid=1000 + rank, returncode=rc, exited_at=exited_at)
    st.stderr = deque(stderr)
    st.errors = list(errors)
    st.done = done
    st.ready = {"mlx": "0.32.4"}
    st.last_step = {"op": "all_sum", "phase": "timed", "iter": 2, "seq": 9}
    return st


def _out(ranks, kind="dead", failure=None):
    early = {s.rank: s.returncode for s in ranks if s.returncode is not None}
    return LaunchOutcome(kind, "md-probe-t", ranks, {}, 5.0, early_exits=early, failure=failure)


def _err(message, type_="RuntimeError"):
    return {"where": "all_sum", "type": type_, "message": message}


def test_the_killed_rank_is_the_cause_and_its_peers_are_consequences():
    ranks = [
        _rank(0, 1, 2.0, [PEER_LOST], [_err(PEER_LOST)]),
        _rank(1, -signal.SIGKILL, 1.0),
        _rank(2, 1, 2.1, [PEER_LOST], [_err(PEER_LOST)]),
    ]
    out = _out(ranks)
    lead = K.culprits(out)
    assert [s.rank for s in lead] == [1]
    assert K.peers_lost(out, lead) == [0, 2]
    assert K.how(ranks[1], -signal.SIGKILL) == "was killed by SIGKILL"


def test_a_signal_makes_a_cause_even_when_it_printed_a_lost_peer():
    st = _rank(0, -signal.SIGSEGV, 1.0, [PEER_LOST])
    assert K.is_cause(st, -signal.SIGSEGV)
    assert not K.is_cause(_rank(1, 1, 1.0, [PEER_LOST]), 1)


def test_a_real_error_outranks_a_lost_peer_whatever_exits_first():
    ranks = [
        _rank(0, 1, 1.0, [PEER_LOST], [_err(PEER_LOST)]),  # exited first, but only lost a peer
        _rank(1, 1, 2.0, errors=[_err("[jaccl] Changing queue pair to RTR failed")]),
    ]
    assert [s.rank for s in K.culprits(_out(ranks))] == [1]


def test_causes_are_ordered_by_exit_time():
    ranks = [_rank(0, -signal.SIGKILL, 3.0), _rank(1, -signal.SIGTERM, 1.0), _rank(2)]
    assert [s.rank for s in K.culprits(_out(ranks))] == [1, 0]


def test_when_every_rank_only_lost_a_peer_the_first_failure_is_named():
    ranks = [_rank(0, 1, 1.0, [PEER_LOST]), _rank(1, 1, 1.5, [PEER_LOST])]
    out = _out(ranks, failure={"rank": 1, "kind": "exit", "at": 1.5})
    assert [s.rank for s in K.culprits(out)] == [1]
    assert K.culprits(_out(ranks)) == []  # no first failure recorded: nobody named


def test_a_rank_that_finished_and_exited_0_is_not_a_culprit():
    ranks = [_rank(0, 0, 1.0, done=True), _rank(1, 1, 2.0)]
    assert [s.rank for s in K.culprits(_out(ranks))] == [1]


def test_how_a_rank_failed_in_words():
    st = _rank(0, 1, 1.0, errors=[_err("boom", "ValueError")])
    assert K.how(st, 1) == "failed with ValueError: boom"
    bare = _rank(1, 3, 1.0, ["", "  last words  ", ""])
    assert K.how(bare, 3) == "exited with status 3 without reporting an error (stderr: last words)"
    assert K.how(_rank(2), None) == "failed"
    remote = _rank(3, 255, 1.0)
    remote.local = False  # reached through ssh: 255 is ssh's status, not the rank's
    assert K.how(remote, 255).startswith("ended without a word through ssh (exit status 255")
    assert "SIGKILL" in K.how(remote, 255)
    assert K.how(_rank(4, 255, 1.0), 255).startswith("exited with status 255 without")
    assert K.signal_name(-9) == "SIGKILL" and K.signal_name(0) is None
    assert K.signal_name(None) is None and K.signal_name(-99) == "signal 99"


def test_the_remedy_comes_from_the_cause_never_from_a_lost_peer():
    lost = _rank(0, 1, 1.0, [PEER_LOST])
    assert K.cause_remedy([lost]) is None
    assert K.cause_remedy([lost, _rank(1, -signal.SIGKILL, 1.0)]) == K.OUTSIDE_SIGKILL
    oom = _rank(2, 1, 1.0, ["CUDA error: out of memory"])
    assert K.cause_remedy([lost, oom]).startswith("MD651 ")


def test_a_hang_blames_the_silent_rank_first():
    hang = {
        "not_arrived": [{"rank": 1}, {"rank": 2}],
        "no_heartbeat": [{"rank": 2, "silent_s": 4.0, "state": "stopped"}],
        "waiting": [{"rank": 0, "waited_s": 3.0}],
    }
    b = K.blame_hang(hang, 3)
    assert b.missing == [2, 1] and b.suspect == 2  # silent first, then the one merely behind
    assert b.waiting == [0] and not b.all_inside and b.silent_inside == []


def test_a_hang_with_every_rank_inside_blames_no_rank():
    hang = {"not_arrived": [], "no_heartbeat": [], "waiting": [{"rank": 0}, {"rank": 1}]}
    b = K.blame_hang(hang, 2)
    assert b.all_inside and b.missing == [] and b.suspect == 0
    assert not K.blame_hang({"waiting": [{"rank": 0}]}, 2).all_inside  # rank 1 not inside
    assert K.blame_hang({}, 2).suspect == 0
