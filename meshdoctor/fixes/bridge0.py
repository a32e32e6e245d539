"""MD704 bridge0: take Thunderbolt Bridge down on a Mac that runs JACCL (resolves MD205).

macOS puts every Thunderbolt interface into ``bridge0`` (Thunderbolt Bridge) by default. While
it is active JACCL's queue pairs fail to reach RTR (errno 22), which is why
``mlx.distributed_config --auto-setup`` (MLX ``python/mlx/_distributed_utils/config.py``) starts
with ``sudo ifconfig bridge0 down`` on every host. This fix takes the same one step, with
``sudo -n`` so it never waits for a password, and verifies by re-running MD205. It declares
itself macOS-only and JACCL-only (``platforms``, ``backends``): on another platform the engine
plans nothing.
"""

from __future__ import annotations

from typing import List

from meshdoctor import execute
from meshdoctor.facts.context import NodeContext
from meshdoctor.fixer.model import (
    DONE,
    FAILED,
    SAFE,
    Action,
    Doc,
    Fix,
    FixContext,
    Verification,
    pending,
)
from meshdoctor.mlx.backends import JACCL_BACKENDS

CODE = "MD704"
TIMEOUT_S = 10.0


def _bridge():
    """The active Thunderbolt Bridge interface of this Mac, or None."""
    from meshdoctor.facts.thunderbolt import gather_thunderbolt

    tb = gather_thunderbolt(NodeContext(command_timeout=TIMEOUT_S))
    b = tb.bridge
    return b if b is not None and b.active else None


def plan(ctx: FixContext) -> List[Action]:
    """The steps this fix would take now (reads state only; changes nothing)."""
    b = _bridge()
    if b is None:
        return []
    return [
        Action(
            CODE,
            ctx.options.get("host", "localhost"),
            f"take Thunderbolt Bridge ({b.name}) down",
            ["sudo", "-n", "ifconfig", b.name, "down"],
            detail={"members": list(b.members)},
        )
    ]


def apply(ctx: FixContext, actions: List[Action]) -> None:
    """Carry out ``actions`` (from :func:`plan`), recording each one's outcome and changed."""
    for a in pending(actions):  # the steps still planned (not those held back: fixer.engine)
        r = execute.run(a.argv, timeout=TIMEOUT_S)
        if r.ok:
            a.outcome, a.changed = f"{DONE}", True
        else:
            a.outcome = f"{FAILED}: {r.describe()}"


def verify(ctx: FixContext) -> Verification:
    """Look again, as the checks this fix resolves do, and say whether it is resolved."""
    from meshdoctor.fixer.hosts import HostExec

    hx = HostExec(None)
    results = hx.check(hx.targets[0], ["MD205"], hostfile=ctx.hostfile, timeout=TIMEOUT_S)
    bad = [
        r
        for r in results
        if r["status"] in ("fail", "warn", "error") and "bridge" in r["summary"].lower()
    ]
    ev = {"MD205": [{"status": r["status"], "summary": r["summary"]} for r in results]}
    if bad:
        return Verification(False, f"MD205 still: {bad[0]['summary']}", evidence=ev)
    return Verification(True, "Thunderbolt Bridge is not active (MD205)", evidence=ev)


FIX = Fix(
    code=CODE,
    name="bridge0",
    title="Take Thunderbolt Bridge down",
    resolves=("MD205",),
    risk=SAFE,
    platforms=("darwin",),  # Thunderbolt Bridge is macOS's
    backends=JACCL_BACKENDS,  # the bridge holds the interfaces JACCL's RDMA uses
    plan=plan,
    apply=apply,
    verify=verify,
    doc=Doc(
        meaning="""
On a Mac whose Thunderbolt Bridge (bridge0) is active, runs `sudo -n ifconfig bridge0 down`
(the first step `mlx.distributed_config --auto-setup` takes on every host), then re-runs MD205 to
confirm the bridge is no longer active. Needs passwordless sudo.
""",
        why="""
An active bridge0 holds the Thunderbolt interfaces (RTR errno 22, broadcast storms). The change
does not survive a reboot.
""",
        action="""
`meshdoctor fix bridge0` shows the plan; add --yes to apply. To keep it off, make the
Thunderbolt Bridge service inactive in System Settings > Network.
""",
        sources=("MLX PR #1902 (auto-setup takes bridge0 down)", "ifconfig(8) on macOS"),
    ),
)
