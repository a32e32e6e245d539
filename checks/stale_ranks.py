"""MD301 stale ranks: MLX rank processes of this user still alive on this node.

Identification is :mod:`meshdoctor.ranks` (environment ``MLX_RANK``/``JACCL_RANK``, the probe
marker, or an mlx.launch rank script; never meshdoctor itself or its parents). Before a launch any
such process is a leftover: mlx.launch stops ranks with SIGTERM only, so ranks stuck in native code
survive (mlx 0.32.4 launch.py), hold RDMA queue pairs and wired memory, and spin at 100 % CPU
(the JACCL progress-timeout patch). A rank in uninterruptible sleep (``disk-sleep``, macOS ``U``) cannot be
killed, and a zombie that stays means its parent is stuck too: both need a reboot
(MLX #3910, #4278: "stuck Us+ and ibv_devinfo hangs").
"""

from __future__ import annotations

import time

import psutil

from meshdoctor.check import Check, fail, ok
from meshdoctor.context import NodeContext
from meshdoctor.model import Remediation
from meshdoctor.ranks import find_ranks

CPU_SAMPLE_S = 0.1
ZOMBIE_GRACE_S = 0.3
UNKILLABLE = ("disk-sleep", "zombie")


def _still_unkillable(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() in UNKILLABLE
    except psutil.Error:
        return False


def run(ctx: NodeContext):
    ranks = find_ranks(sample_cpu_s=CPU_SAMPLE_S, skip_descendants=True)
    if not ranks:
        return ok("no MLX rank processes of this user are running")
    stuck = [r for r in ranks if r.status in UNKILLABLE]
    if stuck:
        time.sleep(ZOMBIE_GRACE_S)
        stuck = [r for r in stuck if _still_unkillable(r.pid)]
    findings = []
    for r in ranks:
        spin = r.cpu_percent is not None and r.cpu_percent >= 90
        detail = (f"pid {r.pid} ({r.name}, rank {r.rank if r.rank is not None else '?'}) "
                  f"state {r.status}, age {r.age_s:.0f} s"
                  + (f", {r.cpu_percent:.0f} % CPU" if r.cpu_percent is not None else ""))
        reboot = r in stuck
        if reboot:
            text = (f"pid {r.pid} is in state {r.status} and cannot be killed; only a reboot of "
                    "this node frees it (and the RDMA resources it holds).")
        elif r.orphaned:
            text = ("Leftover ranks hold ports, queue pairs and memory the next launch needs. "
                    "Stop them (SIGTERM, then SIGKILL after a few seconds)."
                    + (" It spins at full CPU: likely a survivor of a dead peer." if spin else ""))
        else:
            text = (f"A job is still running here (launched by pid {r.ppid}). Wait for it to "
                    "finish or stop it before launching another on the same devices."
                    + (" It spins at full CPU: if its peers died it will never finish."
                       if spin else ""))
        if r.orphaned:
            what = "stale rank (orphaned: its launcher is gone)"
        elif r.marker:
            what = f"rank of a meshdoctor probe still running (run {r.marker})"
        else:
            what = f"rank of a job still running (parent pid {r.ppid} {r.parent or '?'})"
        findings.append(fail(f"{what}: {detail}", evidence=r.to_dict(),
                             needs_reboot=reboot,
                             remediation=Remediation(text, None if reboot else f"kill {r.pid}")))
    return findings


CHECK = Check(
    code="MD301", name="proc.stale_ranks", title="Stale ranks", run=run,
    explain="""
Lists processes of this user that are MLX ranks: their environment has MLX_RANK or JACCL_RANK,
or the meshdoctor probe marker (MESHDOCTOR_PROBE_ID), or their command line is an mlx.launch
rank script. meshdoctor never lists itself or the shells that started it.

Before a launch every such process is in the way: an orphaned one (its launcher is gone) is a
leftover of a crash, since mlx.launch stops ranks with SIGTERM only and ranks stuck in native code
survive, keep queue pairs and wired memory, and (JACCL without the progress guard) spin at 100 %
CPU; one whose launcher still runs belongs to a job in progress, and a second job on the same
devices would fail. Each is reported with pid, rank, state, age, CPU % and its parent.

A rank in uninterruptible sleep (state disk-sleep, macOS "U") or a zombie that does not go away
cannot be cleared by a signal: the node needs a reboot (listed in needs_reboot).

What to do: stop the leftover ranks (kill PID; kill -9 PID after a few seconds), or reboot the
nodes listed in needs_reboot.
""")
