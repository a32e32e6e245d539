"""MD701 stale-ranks: stop the leftover MLX ranks on this host (resolves MD301).

mlx.launch stops the ranks of a failed job with SIGTERM only, so ranks stuck in native code (a
JACCL rank spinning in ``MeshImpl::recv`` after a peer died, MLX #3910, #4278) survive, keep
their queue pairs, ports and wired memory, and make the next launch fail. This fix escalates
SIGTERM -> grace -> SIGKILL on exactly the processes :mod:`meshdoctor.ranks` identifies as ranks.

Never: a process that is not positively a rank, pid 1, meshdoctor itself, its parents or its
own children, another user's process (unless meshdoctor runs as root; then identified ranks of
any user), and a rank of a job that is still running (its launcher is alive) unless the
operator says ``--include-running``. The processes under a rank it stops (a wrapper's rank
child, :func:`meshdoctor.ranks.family`) go in the same plan. A pid whose start time changed since
the plan is a new process and is left alone. A rank that survives SIGKILL, or sits in uninterruptible sleep, can
only be cleared by a reboot: the host goes to ``needs_reboot``.

``MESHDOCTOR_FIX_SCOPE=TOKEN`` limits the fix to ranks whose environment carries the same
``MESHDOCTOR_FIX_SCOPE=TOKEN`` (a shared machine, or a test that must touch only its own ranks).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Dict, List

from meshdoctor.proctable import psutil

from meshdoctor.fixer.model import (
    DISRUPTIVE,
    NOT_APPROVED,
    PLANNED,
    DONE,
    FAILED,
    SKIPPED,
    Action,
    Doc,
    Fix,
    FixContext,
    Verification,
)
from meshdoctor.ranks import RankProcess, family, find_ranks, send_signal
from meshdoctor.teardown import kill_tree

CODE = "MD701"
SCOPE_ENV = "MESHDOCTOR_FIX_SCOPE"
GRACE_S = 3.0  # SIGTERM -> SIGKILL
KILL_WAIT_S = 3.0  # SIGKILL -> "survived"
POLL_S = 0.05
UNINTERRUPTIBLE = "disk-sleep"


def _in_scope(r: RankProcess) -> bool:
    token = os.environ.get(SCOPE_ENV)
    if not token:
        return True
    try:
        return psutil.Process(r.pid).environ().get(SCOPE_ENV) == token
    except psutil.Error:
        return False


def _ranks() -> List[RankProcess]:
    return [
        r for r in find_ranks(skip_descendants=True, any_user=os.geteuid() == 0) if _in_scope(r)
    ]


def _what(r: RankProcess) -> str:
    rank = r.rank if r.rank is not None else "?"
    owner = f", user {r.username}" if r.username and os.geteuid() == 0 else ""
    return f"pid {r.pid} ({r.name}, rank {rank}{owner}, state {r.status})"


def _targets(ctx: FixContext):
    """``(stale, running)``: the ranks to stop, each followed by the processes that run under it
    (:func:`meshdoctor.ranks.family`: a wrapper's rank child goes with the wrapper, in one plan,
    not left for a second run), and the ranks of running jobs left alone."""
    ranks = _ranks()
    stale: List[RankProcess] = []
    seen = set()
    for r in ranks:
        if (r.orphaned or ctx.include_running) and r.pid not in seen:
            for p in [r] + family(r):
                if p.pid not in seen:
                    seen.add(p.pid)
                    stale.append(p)
    running = [r for r in ranks if r.pid not in seen]
    return stale, running


def plan(ctx: FixContext) -> List[Action]:
    """The steps this fix would take now (reads state only; changes nothing)."""
    host = ctx.options.get("host", "localhost")
    stale, running = _targets(ctx)
    out = []
    for r in stale:
        if r.reason.startswith("runs under rank pid"):
            kind = f"process that {r.reason}"
        elif r.orphaned:
            kind = "orphaned rank"
        else:
            kind = f"rank of a running job (parent {r.ppid})"
        out.append(
            Action(
                CODE,
                host,
                f"stop {kind} {_what(r)}: SIGTERM, SIGKILL after {GRACE_S:g} s",
                ["kill", "-TERM", str(r.pid)],
                detail={
                    "pid": r.pid,
                    "create_time": r.create_time,
                    "rank": r.rank,
                    "reason": r.reason,
                    "ppid": r.ppid,
                },
            )
        )
    for r in running:
        out.append(
            Action(
                CODE,
                host,
                f"leave {_what(r)} alone: its job is still running "
                f"(parent pid {r.ppid} {r.parent or '?'})",
                [],
                outcome=f"{SKIPPED}: rank of a running job; --include-running stops it",
                mutates=False,
                detail={"pid": r.pid, "ppid": r.ppid},
            )
        )
    return out


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _wait_gone(procs: Dict[int, psutil.Process], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in procs.values()) and time.monotonic() < deadline:
        time.sleep(POLL_S)


def apply(ctx: FixContext, actions: List[Action]) -> None:
    """Carry out ``actions`` (from :func:`plan`), recording each one's outcome and changed."""
    mine = [a for a in actions if a.mutates and a.outcome == PLANNED and a.detail.get("pid")]
    procs: Dict[int, psutil.Process] = {}
    by_pid = {}
    for a in mine:
        pid = a.detail["pid"]
        vanished = ctx.options.setdefault("vanished", [])  # what verify says was not stopped
        try:
            p = psutil.Process(pid)
            if abs(p.create_time() - a.detail["create_time"]) > 0.01:
                a.outcome = f"{SKIPPED}: pid {pid} is now another process"
                vanished.append(
                    f"pid {pid} had exited before it was signalled and its number is now "
                    "another process's, left alone"
                )
                continue
        except psutil.NoSuchProcess:
            a.outcome = f"{DONE}: already gone"
            a.changed = False
            vanished.append(f"pid {pid} had exited before it was signalled")
            continue
        first = signal.SIGKILL if p.status() == psutil.STATUS_STOPPED else signal.SIGTERM
        sent = send_signal(pid, first)
        if sent.startswith(("refused", "failed")):
            a.outcome = f"{FAILED}: {first.name} {sent}"
            continue
        a.argv = ["kill", f"-{first.name[3:]}", str(pid)]
        # what an interrupt from here on reports (the outcome below replaces it)
        a.outcome = f"{DONE}: {first.name} sent; its end not yet confirmed"
        procs[pid], by_pid[pid] = p, a
    ctx.progress(f"sent SIGTERM to {len(procs)} rank(s); waiting up to {GRACE_S:g} s")
    _wait_gone(procs, GRACE_S)
    killed = [pid for pid, p in procs.items() if _alive(p)]
    # with every process under them: one a TERM-ignoring wrapper started during the grace
    # period is in no plan, and would be left as an orphaned rank (teardown.kill_tree)
    tree = kill_tree(killed)
    newborns = {}
    for pid in tree["newborns"]:
        try:
            newborns[pid] = psutil.Process(pid)
        except psutil.Error:
            continue
    if killed:
        ctx.progress(
            f"SIGKILL to {len(killed)} rank(s) that ignored SIGTERM"
            + (f" and {len(newborns)} process(es) they started meanwhile" if newborns else "")
        )
        _wait_gone({**{pid: procs[pid] for pid in killed}, **newborns}, KILL_WAIT_S)
    for born, top in tree["under"].items():
        if top in by_pid:  # what it started during the grace period went with it
            by_pid[top].detail.setdefault("started_during_grace", []).append(born)
    for pid, p in procs.items():
        a = by_pid[pid]
        if _alive(p):
            try:
                state = p.status()
            except psutil.Error:
                state = "?"
            a.outcome = f"{FAILED}: survived SIGKILL (state {state}); reboot this host"
            a.detail["survivor_state"] = state
        else:
            a.changed = True
            a.outcome = f"{DONE}: " + (
                "killed by SIGKILL" if pid in killed else "exited after SIGTERM"
            )
            if pid in killed:
                a.argv = ["kill", "-KILL", str(pid)]


def verify(ctx: FixContext) -> Verification:
    """Look again, as the checks this fix resolves do, and say whether it is resolved."""
    host = ctx.options.get("host", "localhost")
    stale, running = _targets(ctx)
    later_pids = set(ctx.options.get("not_approved_pids") or ())
    later = [r for r in stale if r.pid in later_pids]  # not in the approved plan: untouched
    stale = [r for r in stale if r.pid not in later_pids]
    ev = {"remaining": [r.to_dict() for r in stale], "running_jobs": [r.pid for r in running]}
    kept = (
        f"; {len(running)} rank(s) of running jobs left alone (--include-running stops them)"
        if running
        else ""
    )
    if later and not stale:
        ev["not_approved"] = [r.to_dict() for r in later]
        return Verification(
            False,
            f"the approved plan is done; {len(later)} rank(s) {NOT_APPROVED}: "
            + ", ".join(_what(r) for r in later)
            + kept,
            evidence=ev,
        )
    gone = list(ctx.options.get("vanished") or ())
    if gone:
        ev["vanished"] = gone
    if not stale:
        return Verification(
            True,
            "no stale ranks on this host" + "".join(f"; {g}" for g in gone) + kept,
            evidence=ev,
        )
    stuck = [r for r in stale if r.status == UNINTERRUPTIBLE]
    why = ", ".join(_what(r) for r in stale)
    return Verification(
        False,
        f"{len(stale)} rank(s) still alive: {why}",
        needs_reboot={host: f"rank(s) survive SIGKILL: {why}"} if (ctx.apply or stuck) else {},
        evidence=ev,
    )


FIX = Fix(
    code=CODE,
    name="stale-ranks",
    title="Stop leftover MLX ranks",
    resolves=("MD301",),
    risk=DISRUPTIVE,
    plan=plan,
    apply=apply,
    verify=verify,
    doc=Doc(
        meaning="""
Stops the MLX rank processes left behind by a crashed or interrupted job on each host (with
--hostfile, on every host at once): SIGTERM, a grace period of 3 s, SIGKILL to those still
alive, then it looks again. A rank is a process whose environment has MLX_RANK, JACCL_RANK or
the meshdoctor probe marker, or mlx.launch's own wrapper of a rank (the same identification as
MD301). The processes that run under a stopped rank (a wrapper's rank child) are stopped with
it, in the same plan.

It never signals a process that is not a rank, pid 1, meshdoctor itself or its parents, another
user's process (unless run as root), or a rank whose launcher is still alive (a job in progress)
unless you pass --include-running.
""",
        why="""
Leftover ranks hold queue pairs and wired memory and make the next launch fail. A rank that
survives SIGKILL or sits in uninterruptible sleep (macOS state U) needs a reboot of its host
(needs_reboot).
""",
        action="""
Plan first: `meshdoctor fix stale-ranks` lists what it would stop; add --yes to do it.
""",
        sources=(
            "MLX #3910, #4278 (ranks that survive SIGTERM)",
            "mlx/_distributed_utils/launch.py (SIGTERM on shutdown)",
        ),
    ),
)
