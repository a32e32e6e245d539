"""Which rank is at fault when a probe fails: the first cause, told apart from its consequences.

The data (no processes are touched here): each rank's :class:`~meshdoctor.probe.events.RankState`
(``returncode`` as :mod:`subprocess` gives it, negative = killed by that signal; ``errors``: the
worker's error events; ``stderr`` and ``noise``: its stderr and the stdout lines that were not
events; ``exited_at``: launcher monotonic seconds) and the launch's
:class:`~meshdoctor.probe.outcome.LaunchOutcome` (``early_exits``: rank -> returncode of the
ranks that exited before teardown; ``failure``: the first failure the tracker saw; ``hang``:
:meth:`~meshdoctor.probe.events.Tracker.hang_report`).

How the cause is told from the consequences:

* **A rank died or the group did not form** (:func:`culprits`). When one rank dies, its peers
  fail right after it, and what they print only says that a peer went away: ``[ring] connection
  to a peer was lost`` and the other ring socket errors (MD613, MD614, MD615), ``[jaccl] Recv
  failed with errno=2`` (MD606), NCCL's ``remote process exited or there was a network error``
  (MD683): :data:`LOST_PEER`. A rank whose only complaint is one of those is a consequence, with
  or without a Python error (NCCL ranks ``exit(1)`` with no exception, MLX nccl backend). A rank
  is a cause when a signal killed it (whatever it printed: a killed rank did not choose to
  stop), when it exited early without finishing, or when it reported an error that is not a
  lost peer. The causes are ordered by the time they exited: the first to go leads. When no rank
  qualifies (every one only lost a peer), the rank the tracker saw fail first is named.
* **A step hung** (:func:`blame_hang`). The tracker's report lists the ranks that never arrived
  at the furthest step, those waiting inside it, and those with no heartbeat (a stopped or wedged
  process). A rank that stopped heartbeating is the strongest suspect, and a rank merely one
  step behind is usually waiting on it: so the silent ones are named first. A rank silent while
  inside the step (stopped inside the collective) is a suspect too. When every rank is inside the
  step and all are still heartbeating, no rank is to blame: the collective itself made no
  progress, or the deadline was shorter than it takes.
"""

from __future__ import annotations


import signal
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor import signatures
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome

# Signatures that only say a peer went away: another rank failed first, never a cause by
# themselves (each is marked "consequence" in the signature catalogue, meshdoctor.signatures).
LOST_PEER = frozenset({"MD606", "MD613", "MD614", "MD615", "MD683"})
# a rank that could not connect to a peer during group formation (the ring's right-hand
# neighbour, JACCL's coordinator): a consequence when that peer is known to be stopped
PEER_UNREACHED = frozenset({"MD621", "MD637"})

OUTSIDE_SIGKILL = (
    "It got a SIGKILL that meshdoctor did not send: most often the kernel's "
    "out-of-memory killer (Linux: `dmesg | grep -i oom`; macOS: jetsam in the "
    "system log), else an operator or a supervisor. Probe with a smaller --size, "
    "fewer ranks per host, or with less running beside it."
)


def signal_name(returncode: Optional[int]) -> Optional[str]:
    """``SIGKILL`` for returncode -9 (subprocess convention), None for a normal exit or None."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def rank_signatures(st: RankState) -> List[signatures.Match]:
    """Signatures in the rank's stderr tail (last 80 lines), its stdout lines that were not
    events (NCCL writes its ``NCCL WARN`` lines to stdout) and error events, plus exit-status
    signatures (:func:`meshdoctor.signatures.classify_exit`)."""
    text = "\n".join(
        list(st.stderr)[-80:] + list(st.noise) + [e.get("message", "") for e in st.errors]
    )
    return signatures.classify(text) + signatures.classify_exit(st.returncode, text)


def is_cause(st: RankState, returncode: Optional[int]) -> bool:
    """True when this failed rank is a cause, not a consequence (module doc): killed by a
    signal, or not only complaining of a lost peer (:data:`LOST_PEER`)."""
    if returncode is not None and returncode < 0:
        return True
    return not ({m.code for m in rank_signatures(st)} & LOST_PEER)


def only_peer_trouble(st: RankState, returncode: Optional[int]) -> bool:
    """True when this failed rank's complaints are all about a peer (lost, or never reached:
    :data:`LOST_PEER`, :data:`PEER_UNREACHED`) and no signal killed it: when another rank is
    known to be stopped, this one only waited for it."""
    if returncode is not None and returncode < 0:
        return False
    codes = {m.code for m in rank_signatures(st)}
    return bool(codes) and codes <= (LOST_PEER | PEER_UNREACHED)


def culprits(out: LaunchOutcome) -> List[RankState]:
    """The ranks that failed first (module doc), the first to exit first: died by a signal,
    exited early without reporting an error, or reported an error that is not a lost peer;
    else the rank the tracker saw fail first; [] when nothing failed."""
    early = [
        st
        for st in out.ranks
        if st.rank in out.early_exits and not (st.done and out.early_exits[st.rank] == 0)
    ]
    early += [st for st in out.ranks if st.errors and st not in early]
    primary = [st for st in early if is_cause(st, out.early_exits.get(st.rank))]
    if not primary and out.failure:
        primary = [out.ranks[out.failure["rank"]]]
    return sorted(primary, key=lambda s: s.exited_at or float("inf"))


def peers_lost(out: LaunchOutcome, causes: List[RankState]) -> List[int]:
    """The ranks, other than ``causes``, that exited early with a failure status: the
    consequences of a dead rank."""
    return [
        s.rank
        for s in out.ranks
        if s not in causes and s.rank in out.early_exits and out.early_exits[s.rank] != 0
    ]


def how(st: RankState, returncode: Optional[int]) -> str:
    """How this rank failed, in words: ``was killed by SIGKILL``, ``failed with RuntimeError:
    ...``, ``exited with status 1 without reporting an error (stderr: LINE)`` (NCCL and CUDA
    failures print a line and exit(1) with no Python exception, MLX nccl backend: that line is
    named), a remote rank's ssh status 255 without a word as ``ended without a word through
    ssh (exit status 255: ...)``, else ``failed``."""
    sig = signal_name(returncode)
    if sig:
        return f"was killed by {sig}"
    if st.errors:
        e = st.errors[-1]
        return f"failed with {e.get('type')}: {e.get('message')}"
    said = next((m.line for m in rank_signatures(st)), None) or next(
        (ln.strip()[:300] for ln in reversed(st.stderr_tail()) if ln.strip()), None
    )
    ssh_said = any(ln.strip().startswith("ssh:") for ln in st.stderr_tail(3))
    if returncode == 255 and not st.local and not ssh_said and not st.errors:
        # ssh(1): "ssh exits with the exit status of the remote command or with 255 if an
        # error occurred"; a remote command killed by a signal reaches ssh as 255 as well, and
        # without a word from ssh or the rank that is what it usually was
        return (
            "ended without a word through ssh (exit status 255, ssh's own: the remote rank "
            "was killed by a signal, usually SIGKILL from the OOM killer or a kill -9, or "
            "crashed in native code, or the connection to its host dropped; look on that "
            "host: dmesg for the OOM killer, its crash reports)"
        )
    if returncode is not None:
        return f"exited with status {returncode} without reporting an error" + (
            f" (stderr: {said})" if said else ""
        )
    return "failed"


def cause_remedy(sts: List[RankState]) -> Optional[str]:
    """The remedy of the first failure signature in these ranks' output that is not a lost
    peer (``CODE name: remedy``); else :data:`OUTSIDE_SIGKILL` when one was SIGKILLed (the
    launcher had not signalled it yet); else None."""
    for st in sts:
        for m in rank_signatures(st):
            if m.code not in LOST_PEER:
                return f"{m.code} {m.name}: {m.remedy}"
    if any(st.returncode == -signal.SIGKILL for st in sts):
        return OUTSIDE_SIGKILL
    return None


@dataclass
class HangBlame:
    """Who is to blame for a hang (module doc), from a tracker hang report.

    ``missing``: ranks that never arrived at the step, stopped then silent ones first; ``waiting``: ranks
    inside it and heartbeating; ``stalled``: rank -> its no-heartbeat entry (``silent_s``,
    ``state``); ``silent_inside``: ranks of ``waiting`` that are also stalled; ``all_inside``:
    every rank waited inside the step and none is silent (no rank to blame); ``suspect``: the
    rank to name first (0 when nobody is)."""

    missing: List[int] = field(default_factory=list)
    waiting: List[int] = field(default_factory=list)
    stalled: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    silent_inside: List[int] = field(default_factory=list)
    all_inside: bool = False
    suspect: int = 0


def blame_hang(hang: Dict[str, Any], world_size: int) -> HangBlame:
    """:class:`HangBlame` from ``hang`` (:meth:`Tracker.hang_report`: ``not_arrived``,
    ``waiting``, ``no_heartbeat``; missing keys count as empty) in a group of ``world_size``."""
    stalled = {s["rank"]: s for s in hang.get("no_heartbeat", [])}

    def order(r: int):  # a stopped process first (a fact), then the silent, then by rank
        return ((stalled.get(r) or {}).get("state") != "stopped", r not in stalled, r)

    missing = sorted((a["rank"] for a in hang.get("not_arrived", [])), key=order)
    waiting = [w["rank"] for w in hang.get("waiting", [])]
    silent_inside = sorted((r for r in waiting if r in stalled), key=order)
    all_inside = not missing and not silent_inside and len(set(waiting)) == world_size
    return HangBlame(
        missing=missing,
        waiting=waiting,
        stalled=stalled,
        silent_inside=silent_inside,
        all_inside=all_inside,
        suspect=(missing or silent_inside or [0])[0],
    )
