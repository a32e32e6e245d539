"""MD104 power management (macOS): this Mac's system sleep is off (``pmset -g``).

A Mac whose ``sleep`` timer is not 0 may go to sleep in the middle of a job when nobody uses its
keyboard, and its rank with it; a sleeping node is a reported confounder of mesh failures (MLX
PR #3933 discussion). pmset(1): ``sleep`` and ``disksleep`` are minutes of idle time (0 =
never), ``powernap`` (0/1) lets a sleeping Mac wake briefly. The fact is
:func:`meshdoctor.facts.power.gather_power`; the fleet comparison of the same settings is MD414.
"""

from __future__ import annotations

from meshdoctor.checker.here import slow_not_hung
from meshdoctor.checker.model import Check, Doc, error, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.facts.power import COMPARED, NEVER_SLEEP, gather_power
from meshdoctor.model import Remediation

SLEEP_REMEDY = (
    "Turn system sleep, disk sleep and Power Nap off on this Mac, for every power source: "
    f"`{NEVER_SLEEP}` (System Settings > Energy: prevent automatic sleeping). "
    "A display that sleeps is harmless."
)


def _shown(settings) -> str:
    return ", ".join(f"{k} {settings[k]}" for k in COMPARED if k in settings)


def run(ctx: NodeContext):
    got = ctx.fact(gather_power)
    ev = {"pmset": got}
    if got["timed_out"] and not got["hang"]:
        return error(
            f"cannot read the power settings (not assessed): {got['detail']}",
            evidence=ev,
            remediation=slow_not_hung("`pmset -g`"),
        )
    if got["timed_out"]:
        return error(
            f"`pmset -g` hung: {got['detail']}; the power daemon (powerd) does not answer",
            evidence=ev,
            remediation="Run `pmset -g` by hand; if it hangs there too, reboot this Mac.",
        )
    if not got["readable"]:
        return error(
            f"cannot read the power settings: {got['detail']}",
            evidence=ev,
            remediation="Run `pmset -g` by hand; it ships with macOS.",
        )
    s = got["settings"]
    sleep = s["sleep"]
    if sleep != 0:
        note = got["notes"].get("sleep")
        return warn(
            f"system sleep is on: this Mac sleeps after {sleep} min idle (pmset: {_shown(s)})"
            + (f"; now {note}, which ends with whatever prevents it" if note else "")
            + ": its rank may go to sleep mid-job",
            evidence=ev,
            remediation=Remediation(SLEEP_REMEDY, command=NEVER_SLEEP),
        )
    return ok(f"system sleep is off (pmset: {_shown(s)})", evidence=ev)


CHECK = Check(
    code="MD104",
    name="node.power",
    title="System sleep (pmset)",
    run=run,
    platforms=("darwin",),
    doc=Doc(
        meaning="""
Reads `pmset -g` on this Mac: `sleep` (system sleep after that many idle minutes, 0 = never),
`disksleep` (minutes, 0 = never) and `powernap` (0/1). Warns when system sleep is not 0; the
note pmset prints after it ("sleep prevented by ...") is shown, since it lasts only as long as
what prevents it. Not assessed (error) when pmset cannot be read or overran its deadline.
MD414 compares the same settings across the hosts of a hostfile.
""",
        why="""
A Mac that sleeps takes its rank with it: the job stalls or fails on a peer with a timeout that
names no cause. A sleeping node is a reported confounder of mesh failures (MLX PR #3933).
""",
        action="""
`sudo pmset -a sleep 0 disksleep 0 powernap 0` on every Mac of the mesh (or System Settings >
Energy: prevent automatic sleeping); the display may still sleep.
""",
        sources=(
            "pmset(1) (sleep, disksleep, powernap; minutes, 0 = never)",
            "MLX PR #3933 (a sleeping node as a confounder)",
        ),
    ),
)
