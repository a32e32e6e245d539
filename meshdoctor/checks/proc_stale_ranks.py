"""MD301 rank processes: MLX rank processes of this user alive on this node.

Identification is :mod:`meshdoctor.ranks` (environment ``MLX_RANK``/``JACCL_RANK``, the probe
marker, or mlx.launch's own wrapper of a rank; never words in an argument, never meshdoctor
itself or its parents). A wrapper that
carries the rank variables (``timeout``, ``env``, a launch shell) is grouped with the rank it runs.

* An orphaned rank (its launcher is gone) is a stale leftover and fails: mlx.launch stops ranks
  with SIGTERM only (mlx 0.32.4 ``launch.py``), and survivors spinning in native code after a
  peer died neither finish nor act on SIGTERM (MLX #3910, #4278), so for one that ignores or
  handles SIGTERM the suggested command is ``kill -KILL``.
* A rank whose launcher still runs belongs to a running job: a warning (a second job on the same
  devices would fail), never a kill suggestion.
* A rank in uninterruptible sleep (``disk-sleep``, macOS ``U``) cannot be killed, and a zombie that
  stays means its parent is stuck too: both need a reboot.
"""

from __future__ import annotations

import time
from typing import List, Optional, Tuple

from meshdoctor.proctable import psutil

from meshdoctor.checker.model import Check, Doc, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.model import Remediation
from meshdoctor.ranks import RankProcess, find_ranks
from meshdoctor.text import shell_line

CPU_SAMPLE_S = 0.1
ZOMBIE_GRACE_S = 0.3
UNKILLABLE = ("disk-sleep", "zombie")


def _still_unkillable(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() in UNKILLABLE
    except psutil.Error:
        return False


SIGTERM_BIT = 1 << (15 - 1)  # bit of SIGTERM in /proc/PID/status signal masks (proc(5))


def sigterm_disposition(pid: int) -> Optional[str]:
    """How ``pid`` treats SIGTERM: ``ignored`` (SigIgn), ``handled`` (SigCgt: a handler that
    only runs when the process returns to it, e.g. Python's, so a rank spinning in native code
    never gets there), ``default``, or None where the masks cannot be read (macOS, gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            masks = dict(line.split(":", 1) for line in fh if ":" in line)
        if int(masks["SigIgn"].strip(), 16) & SIGTERM_BIT:
            return "ignored"
        if int(masks["SigCgt"].strip(), 16) & SIGTERM_BIT:
            return "handled"
        return "default"
    except (OSError, KeyError, ValueError):
        return None


def group_wrappers(ranks: List[RankProcess]) -> List[Tuple[RankProcess, List[RankProcess]]]:
    """``(rank, wrappers)`` pairs: a process that carries the rank variables only because it
    wraps the rank (``timeout``, ``env``, a launch shell) is listed with the rank it runs, not as
    a rank of its own. The rank is the innermost identified process; ``wrappers`` are its
    identified ancestors, outermost first."""
    by_pid = {r.pid: r for r in ranks}
    parents = {r.ppid for r in ranks if r.ppid in by_pid}
    out = []
    for r in ranks:
        if r.pid in parents:  # it wraps another identified process
            continue
        chain, cur = [], r
        while cur.ppid in by_pid and by_pid[cur.ppid] not in chain:
            cur = by_pid[cur.ppid]
            chain.append(cur)
        out.append((r, list(reversed(chain))))
    return out


def run(ctx: NodeContext):
    ranks = find_ranks(sample_cpu_s=CPU_SAMPLE_S, skip_descendants=True)
    if not ranks:
        return ok("no MLX rank processes of this user are running")
    stuck = [r for r in ranks if r.status in UNKILLABLE]
    if stuck:
        time.sleep(ZOMBIE_GRACE_S)
        stuck = [r for r in stuck if _still_unkillable(r.pid)]
    findings = []
    for r, wrappers in group_wrappers(ranks):
        top = wrappers[0] if wrappers else r  # whose parent says whether the job still runs
        members = [r] + wrappers
        spin = r.cpu_percent is not None and r.cpu_percent >= 90
        detail = (
            f"pid {r.pid} ({r.name}, rank {r.rank if r.rank is not None else '?'}) "
            f"state {r.status}, age {r.age_s:.0f} s"
            + (f", {r.cpu_percent:.0f} % CPU" if r.cpu_percent is not None else "")
        )
        if wrappers:
            detail += ", run by " + ", ".join(f"pid {w.pid} ({w.name})" for w in wrappers)
        ev = dict(r.to_dict(), wrappers=[w.to_dict() for w in wrappers])
        reboot = [m for m in members if m in stuck]
        pids = shell_line(m.pid for m in members)
        if reboot:
            findings.append(
                fail(
                    f"rank that cannot be killed: {detail}",
                    evidence=ev,
                    needs_reboot=True,
                    remediation=Remediation(
                        f"pid {reboot[0].pid} is in state {reboot[0].status} and cannot be killed; "
                        "only a reboot of this node frees it (and the RDMA resources it holds)."
                    ),
                )
            )
        elif top.orphaned:
            how = sigterm_disposition(r.pid)
            ev["sigterm"] = how
            # survivors spinning in native code do not act on SIGTERM (MLX #3910, #4278)
            escalate = how in ("ignored", "handled") or (how is None and spin)
            text = (
                "Leftover ranks hold ports, queue pairs and memory the next launch needs. "
                + (
                    "It does not act on SIGTERM ("
                    + (how or "spinning at full CPU in native code")
                    + "): kill it with SIGKILL."
                    if escalate
                    else "Stop it with SIGTERM; if it is still there after a few "
                    f"seconds, `kill -KILL {pids}`."
                )
                + (" It spins at full CPU: likely a survivor of a dead peer." if spin else "")
            )
            findings.append(
                fail(
                    f"stale rank (orphaned: its launcher is gone): {detail}",
                    evidence=ev,
                    remediation=Remediation(
                        text, f"kill -KILL {pids}" if escalate else f"kill {pids}"
                    ),
                )
            )
        else:
            what = (
                f"rank of a running meshdoctor probe (run {r.marker})"
                if r.marker
                else f"rank of a running job (launched by pid {top.ppid} {top.parent or '?'})"
            )
            ev["running_job"] = {
                "launcher_pid": top.ppid,
                "launcher": top.parent or "?",
                "probe_run": r.marker or None,
            }
            findings.append(
                warn(
                    f"{what}: {detail}",
                    evidence=ev,
                    remediation=Remediation(
                        "A job is running on this node. Let it finish before launching another on "
                        "the same devices; if it is yours and stuck, stop its launcher (pid "
                        f"{top.ppid}), which stops its ranks."
                    ),
                )
            )
    return findings


CHECK = Check(
    code="MD301",
    name="proc.stale_ranks",
    title="Rank processes",
    run=run,
    doc=Doc(
        meaning="""
Lists processes of this user that are MLX ranks: their environment has MLX_RANK or JACCL_RANK,
or the meshdoctor probe marker (MESHDOCTOR_PROBE_ID), or they are mlx.launch's own wrapper of
a rank (its bash -c script, or the ssh that carries it, whole; a grep, tail, pager or editor
naming that text is not a rank). meshdoctor never lists itself or the shells that started it.

A wrapper that carries the rank variables (timeout, env, a launch shell) is listed with the
rank it runs, not as a rank of its own.

An orphaned rank (its launcher is gone) is a leftover of a crash and fails. A rank whose launcher
still runs belongs to a running job: it warns and meshdoctor suggests no kill. Each is reported
with pid, rank, state, age, CPU %, its parent and its wrappers.
""",
        why="""
mlx.launch stops ranks with SIGTERM only, and ranks stuck in native code survive, keep queue
pairs and wired memory, and (JACCL without a progress timeout) spin at 100 % CPU without acting
on SIGTERM (MLX #3910, #4278). A second job on the same devices would fail.

A rank in uninterruptible sleep (state disk-sleep, macOS "U") or a zombie that does not go away
cannot be cleared by a signal: the node needs a reboot (listed in needs_reboot).
""",
        action="""
Stop the leftover ranks (kill PID; kill -KILL PID when it ignores SIGTERM or is still there
after a few seconds), or reboot the nodes listed in needs_reboot.
""",
        sources=(
            "MLX #3910, #4278 (ranks that survive SIGTERM)",
            "mlx/_distributed_utils/launch.py (SIGTERM on shutdown)",
        ),
    ),
)
