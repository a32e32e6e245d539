"""The findings the RDMA and Thunderbolt checks share, built from the verbs inventory fact
(:mod:`meshdoctor.facts.verbs`): the wedged stack every RDMA check reports the same way
(:func:`wedged_finding`), the ``error`` of unreadable tool output (:func:`error_finding`), and
:func:`inventory_or_finding`, the inventory or the finding a check gives instead.

A private module of ``meshdoctor.checks``: the registry skips it (its name starts with ``_``).
The facts stay free of findings; the checks speak in them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from meshdoctor.checker.here import slow_not_hung
from meshdoctor.checker.model import Finding, error, fail, skip
from meshdoctor.facts import verbs
from meshdoctor.facts.context import HANG_PROOF_S, NodeContext

# a verbs reader that overran its deadline: ``ibv_devinfo`` is known to hang after JACCL errors
# (MLX #3910, #4278), and only a reboot recovers
WEDGED_SUMMARY = "RDMA stack wedged (known to follow JACCL errors)"
WEDGED_REMEDY = (
    "Reboot this node; after a JACCL failure usually the whole fleet needs it. After "
    "the full-fleet reboot run `mlx.distributed_config --auto-setup` once and confirm "
    "every node sees its PORT_ACTIVE devices (mlx.distributed_config docs). Kill leftover ranks "
    "first (see MD301: `meshdoctor check --only MD301` lists them)."
)


def wedged_finding(inv: verbs.Inventory, what: str) -> Finding:
    """The critical finding every RDMA check gives for a wedged stack; ``what`` says what the
    check could not read (``"ports"``). A reader that overran a deadline too short to prove a
    hang (:data:`meshdoctor.facts.context.HANG_PROOF_S`) proves only a slow machine: ``error``
    (not assessed), with the ``--timeout`` that would tell."""
    longest = max((float(a.get("duration_s") or 0.0) for a in inv.attempts), default=0.0)
    if longest < HANG_PROOF_S:
        return error(
            f"the verbs reader did not answer in time (not assessed): "
            f"{inv.detail or 'it overran its deadline'}; cannot read {what}",
            evidence=inv.evidence(),
            remediation=slow_not_hung("The verbs reader")
            + " A hang there after JACCL errors is a wedged RDMA stack (reboot).",
        )
    return fail(
        f"{WEDGED_SUMMARY}: {inv.detail or 'the verbs reader hung'}; cannot read {what}",
        evidence=inv.evidence(),
        needs_reboot=True,
        remediation=WEDGED_REMEDY,
    )


def error_finding(
    summary: str, evidence: Dict[str, Any], tools: str = "`ibv_devinfo -v`, `ibv_devices`"
) -> Finding:
    """A result in ``error``: the check could not assess this node (exit 3, verdict unknown);
    ``tools`` names the commands whose output could not be read."""
    return error(
        summary,
        evidence=evidence,
        remediation=(
            f"Run the tool by hand ({tools}) and look at its output; if it hangs, is cut short or "
            "garbled, the system may be unhealthy: reboot this node."
        ),
    )


TB4_NO_RDMA_REMEDY = (
    "This Mac has Thunderbolt 4 hardware and can never do RDMA (MD201 says "
    "why): run the job with the ring backend over the Thunderbolt network, or "
    "use a Mac with Thunderbolt 5 ports."
)


def _tb4_note(ctx: NodeContext) -> str:
    """``"; Thunderbolt 4 hardware ..."`` on a Mac with no Thunderbolt 5 port, else ``""``."""
    if not ctx.is_mac:
        return ""
    from meshdoctor.facts.thunderbolt import gather_thunderbolt  # macOS tools: loaded on a Mac only

    tb = ctx.fact(gather_thunderbolt)
    if tb.readable and tb.hardware()["generation"] == "tb4":
        return "; this Mac has Thunderbolt 4 hardware, which never does RDMA"
    return ""


def inventory_or_finding(
    ctx: NodeContext, what: str
) -> Tuple[Optional[verbs.Inventory], Optional[Finding]]:
    """The inventory for a check that reads ``what`` (``"ports"``), or the finding to give instead.

    Order: a hostfile whose backend does not use RDMA -> skip (nothing is run); a wedged stack ->
    :func:`wedged_finding`; unreadable output -> ``error``; no devices / no subsystem / no reader
    -> ``fail`` when the hostfile needs RDMA (naming the devices it asks for), else ``skip``.
    """
    role = verbs.rdma_role(ctx)
    if role == verbs.UNUSED:
        return None, skip(verbs.unused_skip_reason(ctx))
    inv: verbs.Inventory = ctx.fact(verbs.gather_verbs)
    if inv.state == verbs.WEDGED:
        return inv, wedged_finding(inv, what)
    if inv.state == verbs.UNREADABLE:
        return inv, error_finding(f"could not assess {what}: {inv.detail}", inv.evidence())
    if inv.state in (verbs.NO_DEVICES, verbs.NO_RDMA, verbs.ABSENT):
        reason = {
            verbs.NO_DEVICES: "no RDMA devices",
            verbs.NO_RDMA: "no RDMA subsystem",
            verbs.ABSENT: "no RDMA tooling",
        }[inv.state]
        if role == verbs.REQUIRED and ctx.hostfile is not None:
            wanted = sorted({d["device"] for d in verbs.named_devices(ctx)})
            return inv, fail(
                f"the hostfile's {ctx.hostfile.effective_backend} backend needs RDMA"
                + (f" ({', '.join(wanted)})" if wanted else "")
                + f" but this node has {reason}"
                f" ({inv.detail})" + _tb4_note(ctx),
                evidence={**inv.evidence(), "named": verbs.named_devices(ctx)},
                remediation=(
                    TB4_NO_RDMA_REMEDY
                    if _tb4_note(ctx)
                    else "See `meshdoctor explain MD201` for the enablement chain: RDMA "
                    "enabled (from Recovery on macOS), Thunderbolt 5 cabling, devices "
                    "listed by `ibv_devices`."
                ),
            )
        return inv, skip(f"{reason}: {inv.detail}", evidence=inv.evidence())
    return inv, None
