"""Stopping processes, locally and over ssh: every host in parallel, under one deadline.

:func:`stop` takes the processes to stop (:class:`Target`: a host and a pid, optionally the local
child that stands for it) and, on each host at once, sends SIGTERM, waits ``grace`` seconds,
sends SIGKILL to what is left and to every process under it (:func:`kill_tree`: the tree listed
again, so a child born during the grace period is not missed), then (given a ``marker``) looks
for any process whose command line carries it (a leftover: SIGKILL, and one still there a
second later is ``unkillable``) and removes temp files named ``tmp_prefix*``. A stopped process gets SIGKILL at once (a SIGTERM would stay
pending until SIGCONT). :func:`signal_remote` sends one signal to pids on one host; both use the
same small POSIX ``sh`` script (:func:`_script`), so one piece of code signals a remote process.

Remote hosts: ONE ssh call per host does all of it (an ssh round trip costs about 0.5 s on a
loaded 2-core box; a dozen of them host by host made a hung 3-host mesh report 15 s late). The
script is fed on stdin to ``sh -s``, so the marker never appears on any command line on the host
(it would otherwise find its own shell). With a marker, a known pid is signalled only if its
command line carries the marker (a pid reused by another program since is left alone). A host
that has answered before (:class:`meshdoctor.remote.Hosts`: its ranks' events arrived, an
earlier call completed) and does not confirm by the first deadline is asked again, until a later
``confirm_s`` total (ssh's own failure, exit 255, is not retried): slow is not unreachable; a
host the caller saw go silent while the others were still heard (``silent``: a link down, its
traffic dropped) is not asked again, since a retry over a dead connection only waits out its
deadline. One that still has not confirmed is recorded in
``Report.unconfirmed`` (its ranks may remain; it is never called unreachable); only a host that
never answered is recorded in ``hosts.unreachable``. Neither is waited on beyond its deadline;
what is known (the pids it was asked to stop) stays in the actions.

Local processes: psutil and :func:`meshdoctor.ranks.send_signal` (which refuses pid 1, this
process and its parents); leftovers by :func:`meshdoctor.ranks.find_ranks` (the
``MESHDOCTOR_PROBE_ID`` environment marker).
"""

from __future__ import annotations

import glob
import os
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from meshdoctor import remote
from meshdoctor.deadline import start as start_calls
from meshdoctor.ranks import find_ranks, send_signal

GRACE_S = 0.5  # SIGTERM -> SIGKILL
KILL_WAIT_S = 1.0  # SIGKILL -> gone (longer: stuck in the kernel; the leftover check tells)
UNKILLABLE_WAIT_S = 1.0  # a leftover still there this long after SIGKILL is unkillable
POLL_S = 0.01
RETRY_MIN_S = 1.0  # a retry of an unconfirmed teardown gets at least this long

# ps state letters (POSIX ps, Linux procps and macOS) -> psutil's names
_STATES = {
    "T": "stopped",
    "R": "running",
    "S": "sleeping",
    "D": "disk-sleep",
    "Z": "zombie",
    "U": "disk-sleep",
    "I": "idle",
}


def state_name(stat: str) -> Optional[str]:
    """psutil's name for a ``ps -o stat=`` value (``T+`` -> ``stopped``), None if unknown."""
    return _STATES.get(stat[:1]) if stat else None


@dataclass
class Target:
    """One process to stop.

    ``host``: its ssh name (``localhost`` for a local one); ``pid``: its pid on that host, None
    when not known yet (a remote rank still starting: found by the marker instead); ``label``:
    what to call it in actions (``rank 2``); ``local``: on this machine; ``popen``: the local
    child standing for it, when this process started it (a local rank, in its own session: its
    whole process group is signalled; or the ssh client of a remote one: killed once the remote
    side is done or unreachable, then reaped)."""

    host: str
    pid: Optional[int]
    label: str
    local: bool
    popen: Optional[subprocess.Popen] = None

    def exited(self) -> bool:
        """The local child has exited (for a remote target: its ssh session ended)."""
        return self.popen is not None and self.popen.poll() is not None


@dataclass
class Report:
    """What :func:`stop` did. ``actions``: ``{"action", "outcome"}`` in order; ``found``:
    leftovers carrying the marker after the stop (``host``, ``local``, ``pid``, ``status``,
    ``cmdline``, locally also ``rank``); ``unkillable``: those of them still there after SIGKILL;
    ``unreachable``: host -> reason, for hosts that never answered (also in ``hosts``);
    ``unconfirmed``: host -> ``{"within_s": seconds tried, "why": the last ssh failure,
    "ranks_ended": every target there had ended on its own before}`` for hosts that answered
    before but did not confirm their teardown (their ranks may remain, or, with
    ``ranks_ended``, what they left);
    ``states``: ``(host, pid)`` -> process state read on a remote host before SIGTERM
    (:func:`state_name`); ``asked``: ``(host, pid)`` of remote processes sent ``ask``;
    ``starting``: ``(host, pid)`` -> state of each process found by the marker on a host
    whose target's pid was not known yet (a rank still starting: stopped before it said
    who it is), read before its SIGKILL."""

    actions: List[Dict[str, str]] = field(default_factory=list)
    found: List[Dict] = field(default_factory=list)
    unkillable: List[Dict] = field(default_factory=list)
    unreachable: Dict[str, str] = field(default_factory=dict)
    unconfirmed: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    states: Dict[Tuple[str, int], str] = field(default_factory=dict)
    asked: List[Tuple[str, int]] = field(default_factory=list)
    starting: Dict[Tuple[str, int], str] = field(default_factory=dict)


# --- the remote side --------------------------------------------------------------------------

# Input: PIDS, ASK and ASKWAIT (a signal sent first to each running process, e.g. USR1 for a stack
# dump, then ASKWAIT tenths of a second for it to act), SIG (TERM, KILL, USR1..., or empty: only
# report states), GRACE and KWAIT (tenths of a second; GRACE 0: no escalation to KILL), M (marker,
# may be empty), START (1: kill by marker first, for processes whose pid is not known yet), SWEEP
# (1: leftover search by marker), TMP (temp-file prefix, may be empty). ``ps -ww``: full command
# lines (piped, ps cuts them at 80 columns and the marker at the end would be lost). Output, one
# line each: "ask P STAT", "pid P STAT OUTCOME [SIG]", "kill P OUTCOME", "start P OUTCOME",
# "start P STAT OUTCOME", "left P STAT ARGS", "stuck P STAT", "rm done".
_BODY = r"""
export M
st() { ps -o stat= -p "$1" 2>/dev/null | awk '{ print $1; exit }'; }
ours() { [ -z "$M" ] || ps -ww -o args= -p "$1" 2>/dev/null |
         awk 'index($0, ENVIRON["M"]) { f = 1 } END { exit !f }'; }
marked() { [ -n "$M" ] && ps -ww -eo pid=,stat=,args= |
           awk 'index($0, ENVIRON["M"]) { print $1, $2, substr($0, index($0, $3)) }'; }
alive() { for p in $SENT; do s=$(st "$p"); case "$s" in ''|Z*) ;; *) echo "$p";; esac; done; }
waitgone() { i=0; while [ "$i" -lt "$1" ] && [ -n "$(alive)" ]; do sleep 0.1; i=$((i+1)); done; }
if [ -n "$ASK" ]; then
  for p in $PIDS; do
    s=$(st "$p")
    case "$s" in ''|Z*|T*) continue;; esac
    ours "$p" && kill -s "$ASK" "$p" 2>/dev/null && echo "ask $p $s"
  done
  i=0; while [ "$i" -lt "$ASKWAIT" ]; do sleep 0.1; i=$((i+1)); done
fi
SENT=
for p in $PIDS; do
  s=$(st "$p")
  case "$s" in ''|Z*) echo "pid $p - gone"; continue;; esac
  if ! ours "$p"; then echo "pid $p $s not-ours"; continue; fi
  if [ -z "$SIG" ]; then echo "pid $p $s"; continue; fi
  g=$SIG
  case "$s" in T*) if [ "$SIG" = TERM ]; then g=KILL; elif [ "$SIG" != KILL ]; then
    echo "pid $p $s stopped"; continue; fi;; esac
  if kill -s "$g" "$p" 2>/dev/null; then echo "pid $p $s sent $g"; SENT="$SENT $p"
  else echo "pid $p $s failed $g"; fi
done
if [ "$GRACE" -gt 0 ] && [ -n "$SENT" ]; then
  waitgone "$GRACE"
  for p in $(alive); do
    if kill -s KILL "$p" 2>/dev/null; then echo "kill $p sent"; else echo "kill $p failed"; fi
  done
  waitgone "$KWAIT"
fi
if [ "$START" = 1 ]; then
  # twice: a starting rank whose session was spawning its command while the first pass listed
  # is still a starting rank, not a leftover of the teardown
  for pass in 1 2; do
    marked | while read -r p s a; do
      if kill -s KILL "$p" 2>/dev/null; then echo "start $p $s sent"; else echo "start $p $s failed"; fi
    done
    i=0; while [ "$i" -lt "$KWAIT" ] && [ -n "$(marked)" ]; do sleep 0.1; i=$((i+1)); done
  done
fi
if [ "$SWEEP" = 1 ] && [ -n "$(marked)" ]; then
  marked | while read -r p s a; do echo "left $p $s $a"; kill -s KILL "$p" 2>/dev/null; done
  sleep 1
  marked | while read -r p s a; do echo "stuck $p $s"; done
fi
if [ -n "$TMP" ]; then rm -f "${TMPDIR:-/tmp}/$TMP"* && echo "rm done"; fi
exit 0
"""


def _script(
    pids: Sequence[int],
    sig: Optional[str],
    *,
    grace_s: float = 0.0,
    kill_wait_s: float = KILL_WAIT_S,
    marker: Optional[str] = None,
    starting: bool = False,
    sweep: bool = False,
    tmp_prefix: Optional[str] = None,
    ask: Optional[str] = None,
    ask_wait_s: float = 0.0,
) -> str:
    """The ``sh -s`` input: the parameters (every value quoted) and :data:`_BODY`."""
    params = {
        "PIDS": " ".join(str(int(p)) for p in pids),
        "SIG": sig or "",
        "ASK": ask or "",
        "ASKWAIT": str(int(round(ask_wait_s * 10))),
        "GRACE": str(int(round(grace_s * 10))),
        "KWAIT": str(int(round(kill_wait_s * 10))),
        "M": marker or "",
        "START": "1" if starting and marker else "0",
        "SWEEP": "1" if sweep and marker else "0",
        "TMP": tmp_prefix or "",
    }
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in params.items()) + _BODY


def _run_script(hosts: "remote.Hosts", host: str, script: str, timeout: float):
    return hosts.run(host, ["sh", "-s"], timeout=max(0.5, timeout), input=script)


def signal_remote(
    hosts: "remote.Hosts",
    host: str,
    pids: Sequence[int],
    sig: Optional[str],
    *,
    marker: Optional[str] = None,
    timeout: float = 5.0,
) -> Dict[int, Tuple[Optional[str], str]]:
    """Send ``sig`` (a name without ``SIG``: ``TERM``, ``KILL``, ``USR1``; None: send nothing,
    only read the states) to ``pids`` on ``host`` in one ssh call; returns pid -> ``(state,
    outcome)``: state as :func:`state_name`, outcome ``sent``, ``gone``, ``stopped`` (a stopped
    process gets no signal but SIGKILL; SIGTERM becomes SIGKILL: ``sent KILL``), ``not ours``
    (its command line lacks ``marker``), ``failed`` or, when the host did not answer, ``failed:
    <ssh reason>``. Never raises."""
    r = _run_script(hosts, host, _script(pids, sig, marker=marker), timeout)
    got: Dict[int, Tuple[Optional[str], str]] = {}
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) >= 3 and w[0] == "pid" and w[1].isdigit():
            out = " ".join(w[3:]).replace("not-ours", "not ours") or "read"
            got[int(w[1])] = (state_name(w[2]) if w[2] != "-" else None, out)
    for p in pids:
        got.setdefault(int(p), (None, "failed: " + r.describe() if not r.ok else "no answer"))
    return got


def _end_starting_sessions(targets: List[Target], wait_s: float = 0.5) -> None:
    """SIGKILL the local ssh clients (our children, in their own sessions) of remote ranks that
    are still starting, and reap them within ``wait_s`` seconds."""
    for t in targets:
        if t.popen is not None and t.popen.poll() is None:
            send_signal(t.popen.pid, signal.SIGKILL, group=True)
    t_end = time.monotonic() + wait_s
    for t in targets:
        if t.popen is not None:
            try:
                t.popen.wait(timeout=max(0.0, t_end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass


def _stop_remote(
    hosts: "remote.Hosts",
    host: str,
    targets: List[Target],
    marker: Optional[str],
    tmp_prefix: Optional[str],
    grace: float,
    deadline: float,
    sweep: bool,
    ask: Optional[str],
    ask_wait_s: float,
    rep: Report,
    confirm_by: float = 0.0,
    started: float = 0.0,
) -> None:
    live = [t for t in targets if not t.exited()]
    pids = [t.pid for t in live if t.pid is not None]
    by_pid = {t.pid: t for t in live if t.pid is not None}
    starting = any(t.pid is None for t in live)
    acts: List[Dict[str, str]] = []
    # a rank still starting (its pid not known) is an ssh session that may not have started its
    # command yet: end the session first (the ssh client is our child), so that no rank process
    # can start on that host after the marker search below has looked (it would be taken for a
    # leftover that survived the teardown)
    _end_starting_sessions([t for t in live if t.pid is None])
    r = None
    if pids or starting or (marker and sweep) or tmp_prefix:

        def script(ask: Optional[str]) -> str:
            return _script(
                pids,
                "TERM",
                grace_s=grace,
                marker=marker,
                starting=starting,
                sweep=sweep,
                tmp_prefix=tmp_prefix,
                ask=ask,
                ask_wait_s=ask_wait_s,
            )

        r = _run_script(hosts, host, script(ask), deadline - time.monotonic())
        # slow is not unreachable: a host that answered before and overran the deadline is asked
        # again (no stack request this time; the script is safe to repeat) until confirm_by;
        # ssh's own failure (exit 255: it could not connect) is not retried
        while r.timed_out and host in hosts.answered:
            if confirm_by - time.monotonic() < RETRY_MIN_S:
                break
            r = _run_script(hosts, host, script(None), confirm_by - time.monotonic())
        seen = _read_replies(r.stdout, host, by_pid, tmp_prefix, rep, acts)
        if not r.ok:
            # every rank's session there had ended on its own before the teardown: only the
            # leftover search is missing, not the stop of a running rank
            ended = bool(targets) and not pids and not starting
            _not_answered(hosts, host, r, pids, seen, by_pid, acts, rep, started, ended)
    killed = _end_clients(live, deadline)
    how = rep.unconfirmed.get(host)
    if how is not None and not how["ranks_ended"] and live and not starting and not killed:
        # ssh could not reach the host to signal them (no script ran there), yet every rank's
        # session ended on its own meanwhile: the ranks exited by themselves (a rank that had
        # finished was still ending when the teardown began); only the search is missing
        how["ranks_ended"] = r is not None and not r.timed_out
    rep.actions.extend(acts)


# what the remote script says of a signal it sent (``pid`` lines), as the report words it
_OUTCOMES = {
    "sent": "sent",
    "failed": "failed",
    "gone": "already gone",
    "not-ours": "refused: no longer carries the marker",
}


def _read_replies(
    stdout: str,
    host: str,
    by_pid: Dict[int, Target],
    tmp_prefix: Optional[str],
    rep: Report,
    acts: List[Dict[str, str]],
) -> set:
    """Read the remote script's lines (:func:`_script`: ``ask``, ``pid``, ``kill``, ``start``,
    ``left``, ``stuck``, ``rm done``) of ``host`` into ``rep`` and ``acts`` (one action each, as
    the report shows it); returns the pids the script reported on (``pid`` lines)."""
    seen = set()
    for line in stdout.splitlines():
        w = line.split(None, 4)
        if len(w) < 2 or not w[1].isdigit():
            if w[:2] == ["rm", "done"]:
                acts.append(
                    {"action": f"remove temp files {tmp_prefix}* on {host}", "outcome": "done"}
                )
            continue
        pid = int(w[1])
        what = by_pid[pid].label if pid in by_pid else "process"
        if w[0] == "ask":
            rep.asked.append((host, pid))
        elif w[0] == "pid" and len(w) >= 4:
            seen.add(pid)
            if w[2] != "-":
                rep.states[(host, pid)] = state_name(w[2]) or w[2]
            sig = w[4] if len(w) > 4 else "TERM"
            stopped = w[2].startswith("T") and sig == "KILL"
            acts.append(
                {
                    "action": f"SIG{sig} {what} ({host}, pid {pid})"
                    + (" (stopped)" if stopped else ""),
                    "outcome": _OUTCOMES.get(w[3], w[3]),
                }
            )
        elif w[0] == "kill":
            acts.append(
                {
                    "action": f"SIGKILL {what} ({host}, pid {pid})",
                    "outcome": w[2] if len(w) > 2 else "sent",
                }
            )
        elif w[0] == "start":
            if len(w) > 3:  # its state before the SIGKILL: a rank stopped as it started
                rep.starting[(host, pid)] = state_name(w[2]) or w[2]
            acts.append(
                {
                    "action": f"SIGKILL starting process on {host} (pid {pid}, found "
                    "by the marker)",
                    "outcome": w[3] if len(w) > 3 else "sent",
                }
            )
        elif w[0] == "left":
            rep.found.append(
                {
                    "host": host,
                    "local": False,
                    "pid": pid,
                    "status": state_name(w[2]) or w[2],
                    "cmdline": (w[3] + (" " + w[4] if len(w) > 4 else ""))[:200],
                }
            )
            acts.append({"action": f"SIGKILL leftover pid {pid} on {host}", "outcome": "sent"})
        elif w[0] == "stuck":
            rep.unkillable.extend(f for f in rep.found if f["host"] == host and f["pid"] == pid)
    return seen


def _not_answered(
    hosts: "remote.Hosts",
    host: str,
    r: Any,
    pids: List[int],
    seen: set,
    by_pid: Dict[int, Target],
    acts: List[Dict[str, str]],
    rep: Report,
    started: float,
    ranks_ended: bool,
) -> None:
    """The script on ``host`` did not finish (``r``: its run): each rank it did not report on
    is a SIGTERM not confirmed (the host had answered before: ``rep.unconfirmed``) or failed
    (it never answered: ``hosts.unreachable``); ``ranks_ended``: every rank there had
    ended on its own before."""
    answered = host in hosts.answered
    why = (hosts.unconfirmed if answered else hosts.unreachable).get(host) or r.describe()
    for pid in pids:
        if pid not in seen:
            acts.append(
                {
                    "action": f"SIGTERM {by_pid[pid].label} ({host}, pid {pid})",
                    "outcome": f"{'not confirmed' if answered else 'failed'}: {why}",
                }
            )
    if answered:
        rep.unconfirmed[host] = {
            "within_s": round(time.monotonic() - started, 1),
            "why": why,
            "ranks_ended": ranks_ended,
        }
    elif host not in hosts.unreachable:
        hosts.unreachable[host] = why


def _end_clients(live: List[Target], deadline: float) -> List[Target]:
    """The local ssh clients of ``live``: their session ends with the remote process; one whose
    host did not answer is killed here (it is our child, in its own session). Returns those
    killed."""
    _wait(lambda: all(t.exited() for t in live), min(0.5, max(0.0, deadline - time.monotonic())))
    killed = []
    for t in live:
        if t.popen is not None and t.popen.poll() is None:
            killed.append(t)
            send_signal(t.popen.pid, signal.SIGKILL, group=True)
            try:
                t.popen.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
    return killed


# --- the local side ---------------------------------------------------------------------------


TREE_ROUNDS = 50  # listings of a process tree before its SIGKILL (each a few milliseconds)


def _tree(tops: Dict[int, int]) -> Dict[int, Tuple[Any, int]]:
    """pid -> (psutil.Process, the pid of ``tops`` it is under) for every live process under
    the pids of ``tops`` (pid -> its top) and themselves."""
    from meshdoctor.proctable import psutil

    out: Dict[int, Tuple[Any, int]] = {}
    for pid, top in tops.items():
        try:
            proc = psutil.Process(pid)
            out.setdefault(pid, (proc, top))
            for kid in proc.children(recursive=True):
                out.setdefault(kid.pid, (kid, top))
        except psutil.Error:
            continue
    return out


def kill_tree(pids: Sequence[int]) -> Dict[str, Any]:
    """SIGKILL ``pids`` (local processes, already identified) and every process under them,
    the ones born since they were identified included (a wrapper that ignores SIGTERM keeps
    spawning through a grace period). Each round lists the tree and stops (SIGSTOP) the members
    not seen before, so that a stopped parent can neither fork again nor lose its children to
    init before they are listed; once a round finds none new (at most :data:`TREE_ROUNDS`),
    every member gets SIGKILL (signal(7): SIGKILL ends a stopped process too). Signals go
    through :func:`meshdoctor.ranks.send_signal` (never pid 1, this process or its parents).
    Returns ``{"killed": pids SIGKILL was sent to, "newborns": those of them not in ``pids``,
    "under": newborn pid -> the pid of ``pids`` it was found under}``."""
    seen: Dict[int, int] = {}  # pid -> its top
    tops = {pid: pid for pid in pids}
    for _ in range(TREE_ROUNDS):
        new = {pid: top for pid, (_, top) in _tree(tops).items() if pid not in seen}
        if not new:
            break
        for pid in new:
            send_signal(pid, signal.SIGSTOP)
        _await_stopped(new)
        seen.update(new)
        tops = dict(seen)
    killed = sorted(pid for pid in seen if send_signal(pid, signal.SIGKILL) == "sent")
    newborns = [pid for pid in killed if pid not in set(pids)]
    return {"killed": killed, "newborns": newborns, "under": {p: seen[p] for p in newborns}}


def _alive(pids) -> List[int]:
    """The pids of ``pids`` whose process still runs (not gone, not a zombie)."""
    from meshdoctor.proctable import psutil

    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                out.append(pid)
        except psutil.Error:
            continue
    return out


def _await_stopped(pids, limit: float = 1.0) -> None:
    """Wait (at most ``limit`` seconds) until each of ``pids`` is stopped or gone: SIGSTOP is
    delivered when a process next leaves the kernel, so one inside fork(2) stops only after the
    child exists, and the next listing of the tree then holds that child (signal(7))."""
    from meshdoctor.proctable import psutil

    waiting = set(pids)
    t_end = time.monotonic() + limit
    while waiting and time.monotonic() < t_end:
        for pid in list(waiting):
            try:
                if psutil.Process(pid).status() in (
                    psutil.STATUS_STOPPED,
                    psutil.STATUS_TRACING_STOP,
                    psutil.STATUS_ZOMBIE,
                    psutil.STATUS_DEAD,
                ):
                    waiting.discard(pid)
            except psutil.Error:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.005)


def _local_state(t: Target) -> Optional[str]:
    if t.pid is None or t.exited():
        return None
    try:
        from meshdoctor.proctable import psutil

        return psutil.Process(t.pid).status()
    except Exception:
        return None


def _local_gone(t: Target) -> bool:
    if t.popen is not None:
        return t.popen.poll() is not None
    st = _local_state(t)
    return st is None or st == "zombie"


def _signal_local(t: Target, sig: int) -> str:
    if t.popen is not None and t.popen.poll() is not None:
        return "already gone"  # reaped: its pid may already be another's
    return send_signal(t.pid, sig, group=t.popen is not None)


def _wait(cond, limit: float) -> None:
    t_end = time.monotonic() + limit
    while not cond() and time.monotonic() < t_end:
        time.sleep(POLL_S)


def _stop_local(
    targets: List[Target],
    marker: Optional[str],
    tmp_prefix: Optional[str],
    grace: float,
    sweep: bool,
    rep: Report,
) -> None:
    acts = rep.actions
    live = [t for t in targets if t.pid is not None and not _local_gone(t)]
    for t in live:
        sig = signal.SIGKILL if _local_state(t) == "stopped" else signal.SIGTERM
        acts.append(
            {
                "action": f"{sig.name} {t.label} ({t.host}, pid {t.pid})"
                + (" (stopped)" if sig == signal.SIGKILL else ""),
                "outcome": _signal_local(t, sig),
            }
        )
    _wait(lambda: all(_local_gone(t) for t in live), grace)
    live = [t for t in live if not _local_gone(t)]
    # the survivors with every process under them, those they started during the grace period
    # included (a TERM-ignoring wrapper keeps spawning)
    tree = kill_tree([t.pid for t in live if t.pid is not None])
    for t in live:
        again = _signal_local(t, signal.SIGKILL)  # a child we started: its process group too
        acts.append(
            {
                "action": f"SIGKILL {t.label} ({t.host}, pid {t.pid})",
                "outcome": "sent" if t.pid in tree["killed"] else again,
            }
        )
    if tree["newborns"]:
        acts.append(
            {
                "action": "SIGKILL the processes started under them during the grace period "
                f"(pids {', '.join(map(str, tree['newborns']))})",
                "outcome": "sent",
            }
        )
    # every process SIGKILL went to, the newborns included, is gone (or a zombie) before the
    # sweep below looks for leftovers: one still dying is not a leftover
    _wait(lambda: all(_local_gone(t) for t in live) and not _alive(tree["killed"]), KILL_WAIT_S)
    for t in targets:
        if t.popen is None:
            continue
        try:
            t.popen.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            acts.append(
                {
                    "action": f"reap {t.label} (pid {t.pid})",
                    "outcome": "still running after SIGKILL",
                }
            )
    if marker and sweep:
        found = [
            {
                "host": "localhost",
                "local": True,
                "pid": rp.pid,
                "status": rp.status,
                "rank": rp.rank,
                "cmdline": " ".join(rp.cmdline)[:200],
            }
            for rp in find_ranks(marker=marker)
        ]
        for f in found:
            acts.append(
                {
                    "action": f"SIGKILL leftover pid {f['pid']} on localhost",
                    "outcome": send_signal(f["pid"], signal.SIGKILL),
                }
            )
        if found:
            time.sleep(UNKILLABLE_WAIT_S)
            again = {rp.pid for rp in find_ranks(marker=marker)}
            rep.unkillable.extend(f for f in found if f["pid"] in again)
        rep.found.extend(found)
    if tmp_prefix:
        for path in glob.glob(os.path.join(tempfile.gettempdir(), f"{tmp_prefix}*")):
            try:
                os.unlink(path)
            except OSError:
                pass


# --- all hosts ----------------------------------------------------------------------------------


def stop(
    targets: Sequence[Target],
    *,
    hosts: "remote.Hosts",
    budget_s: float,
    marker: Optional[str] = None,
    sweep: bool = True,
    tmp_prefix: Optional[str] = None,
    remote_hosts: Sequence[str] = (),
    grace_s: float = GRACE_S,
    ask: Optional[str] = None,
    ask_wait_s: float = 0.3,
    confirm_s: Optional[float] = None,
    silent: Optional[Dict[str, float]] = None,
) -> Report:
    """Stop ``targets`` on every host at once (see module doc) and return what was done.

    ``budget_s``: seconds every remote host gets, all together (one deadline); a host that has
    not answered by then is asked again, until ``confirm_s`` seconds from now (at least
    ``budget_s``), when it has answered before (``hosts.answered``); one that has not confirmed
    by then is in ``Report.unconfirmed``, one that never answered in ``Report.unreachable``, and
    the call returns without it (its ssh command is killed at its deadline). Local work (signals, waits of ``grace_s`` and
    :data:`KILL_WAIT_S`, the leftover check) is not cut short. ``marker``: with ``sweep``, look
    for leftovers carrying it (locally, when a target is local: the ``MESHDOCTOR_PROBE_ID``
    environment; remotely: the command line); ``remote_hosts``: more hosts to sweep (and
    clean) though no target runs there; ``tmp_prefix``: remove ``$TMPDIR/<tmp_prefix>*`` on
    every host. ``ask``: on remote hosts, a signal name (``USR1``: a stack dump) sent first to
    each running target, ``ask_wait_s`` before SIGTERM, in the same ssh call (``Report.asked``,
    ``Report.states``). ``silent``: host -> seconds since anything last arrived from its
    processes (the caller's reading: :meth:`meshdoctor.probe.launcher.Launch.silent_hosts`),
    for hosts that went silent while the others were heard: a link down or its traffic
    dropped, where asking again cannot succeed, so such a host gets the first ``budget_s``
    only, no retry (``Report.unconfirmed`` then carries ``silent_s``); a slow control machine
    delays every host alike and singles none out. Never raises for a process or host that
    fails."""
    started = time.monotonic()
    deadline = started + budget_s
    confirm_by = started + max(budget_s, confirm_s or 0.0)
    silent = dict(silent or {})
    rep = Report()
    by_host: Dict[str, List[Target]] = {}
    for t in targets:
        if not t.local:
            by_host.setdefault(t.host, []).append(t)
    for h in remote_hosts:
        by_host.setdefault(h, [])
    parts: Dict[str, Report] = {h: Report() for h in by_host}
    running = start_calls(
        {
            h: (
                lambda h=h: _stop_remote(
                    hosts,
                    h,
                    by_host[h],
                    marker,
                    tmp_prefix,
                    grace_s,
                    deadline,
                    sweep,
                    ask,
                    ask_wait_s,
                    parts[h],
                    deadline if h in silent else confirm_by,
                    started,
                )
            )
            for h in sorted(by_host)
        },
        name="teardown",
    )
    mine = [t for t in targets if t.local]
    _stop_local(mine, marker, tmp_prefix, grace_s, sweep and bool(mine), rep)
    # the remote commands end at the deadline themselves (a silent host's at the first one);
    # the slack is for their threads
    last = max([deadline if h in silent else confirm_by for h in by_host], default=deadline)
    got = running.wait(max(0.0, last + 0.5 - time.monotonic()))
    for h in sorted(by_host):
        _merge_host(rep, hosts, h, by_host[h], got[h], parts[h], started, silent)
    rep.unreachable = dict(hosts.unreachable)
    return rep


def _merge_host(
    rep: Report,
    hosts: "remote.Hosts",
    h: str,
    targets: List[Target],
    got: Any,
    part: Report,
    started: float,
    silent: Dict[str, float],
) -> None:
    """Fold host ``h``'s teardown call (``got``: its :func:`start_calls` outcome, ``part``: what
    it reported) into ``rep``: a call still running at the deadline is a host that did not
    answer in time (unconfirmed when it had answered before, else unreachable), one that
    raised is a failed action; ``silent``: see :func:`stop`."""
    if not got.finished:  # do not wait for it any longer
        within = time.monotonic() - started
        why = f"did not answer within the {within:.1f} s teardown budget"
        if h in hosts.answered:
            rep.unconfirmed[h] = {"within_s": round(within, 1), "why": why}
            if h in silent:
                rep.unconfirmed[h]["silent_s"] = round(silent[h], 1)
            hosts.unconfirmed.setdefault(h, why)
        else:
            hosts.unreachable.setdefault(h, why)
        for t in targets:
            rep.actions.append(
                {
                    "action": f"stop {t.label} ({h}, pid {t.pid})",
                    "outcome": "unknown: host did not answer in time",
                }
            )
        return
    if got.error is not None:  # a bug: the rest of the teardown still happens
        rep.actions.append(
            {
                "action": f"stop processes on {h}",
                "outcome": f"failed: {type(got.error).__name__}: {got.error}",
            }
        )
    rep.actions.extend(part.actions)
    rep.found.extend(part.found)
    rep.unkillable.extend(part.unkillable)
    rep.states.update(part.states)
    rep.asked.extend(part.asked)
    rep.starting.update(part.starting)
    rep.unconfirmed.update(part.unconfirmed)
    if h in part.unconfirmed and h in silent:
        rep.unconfirmed[h]["silent_s"] = round(silent[h], 1)
