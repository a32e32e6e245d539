"""MD208 RDMA protection domain: each device opens and allocates a protection domain.

The passive RDMA checks (MD201-MD204) read what the verbs tools list; a device can be listed
and read PORT_ACTIVE and still refuse ``ibv_alloc_pd``: on macOS after boot, until the
Thunderbolt 5 cable is replugged (exo PR #1467). JACCL then crashes registering memory against
a null protection domain (SIGSEGV in ``ibv_reg_mr``, exo issue #2186). This check opens each
device the hostfile names for this node (every listed device without a hostfile) and allocates
and frees a protection domain, in a child under the command deadline
(:func:`meshdoctor.facts.verbs_pd.gather_pd`): a wedged driver costs one deadline, never the
check. An overrun is a finding: a hang when the deadline was long enough to prove one
(:data:`meshdoctor.facts.context.HANG_PROOF_S`), else "not assessed" (slow is not hung).
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.checker.here import slow_not_hung
from meshdoctor.checker.model import Check, Doc, Finding, error, fail, ok, skip
from meshdoctor.facts import verbs
from meshdoctor.facts.context import NodeContext
from meshdoctor.facts.verbs_pd import (
    ABSENT,
    NO_RDMA,
    TIMED_OUT,
    UNREADABLE,
    errno_text,
    gather_pd,
)

REPLUG_REMEDY = (
    "Replug the Thunderbolt 5 cable of {device} at both ends (on macOS a device can list "
    "and read PORT_ACTIVE after boot yet refuse a protection domain until its cable is "
    "replugged, exo PR #1467), then run this check again; if it still fails, reboot this "
    "node. Kill leftover ranks first: one still holding the device's resources also makes "
    "allocation fail (`meshdoctor check --only MD301` lists them)."
)
HUNG_REMEDY = (
    "Reboot this node: a verbs call that never returns is a wedged RDMA driver, and only "
    "a reboot recovers it (after a JACCL failure usually the whole fleet needs it). Kill "
    "leftover ranks first (`meshdoctor check --only MD301` lists them)."
)


def _towards(ctx: NodeContext, device: str) -> str:
    uses = [n for n in verbs.named_devices(ctx) if n["device"] == device]
    if not uses:
        return ""
    return " (towards " + ", ".join(f"rank {u['peer']} ({u['peer_host']})" for u in uses) + ")"


def run(ctx: NodeContext):
    role = verbs.rdma_role(ctx)
    if role == verbs.UNUSED:
        return skip(verbs.unused_skip_reason(ctx))
    probe = ctx.fact(gather_pd)
    ev: Dict[str, Any] = probe.evidence()
    if probe.state == ABSENT:
        return skip(f"libibverbs is not loadable here: {probe.detail}", evidence=ev)
    if probe.state == NO_RDMA:
        return skip(f"no RDMA subsystem: {probe.detail}", evidence=ev)
    out: List[Finding] = []
    for row in probe.devices:
        name = row["device"]
        if row["result"] == "error":
            out.append(
                fail(
                    f"{name}{_towards(ctx, name)} is listed but {row['step']} fails: "
                    f"{errno_text(row.get('errno'))}; "
                    + (
                        "a rank cannot open it"
                        if row["step"] == "ibv_open_device"
                        else "a rank cannot register memory on it"
                    ),
                    evidence={**ev, "device": name},
                    remediation=REPLUG_REMEDY.format(device=name),
                )
            )
        elif row["result"] == "hung" and probe.hang:
            out.append(
                fail(
                    f"{name}{_towards(ctx, name)}: {row['step']} did not return within "
                    f"{probe.deadline_s:g} s: the RDMA driver is wedged",
                    evidence={**ev, "device": name},
                    needs_reboot=True,
                    remediation=HUNG_REMEDY,
                )
            )
        elif row["result"] == "hung":
            out.append(
                error(
                    f"{name}{_towards(ctx, name)}: {row['step']} did not return within "
                    f"{probe.deadline_s:g} s (not assessed: slow, not proven hung)",
                    evidence={**ev, "device": name},
                    remediation=slow_not_hung(f"The protection-domain probe of {name}")
                    + " A verbs call that never returns is a wedged RDMA driver (reboot).",
                )
            )
    if probe.state == TIMED_OUT and not any(r["result"] == "hung" for r in probe.devices):
        # it hung before any device: loading pyverbs or listing the devices
        if probe.hang:
            out.append(
                fail(
                    f"the RDMA device list did not come back: {probe.detail}; the RDMA "
                    "driver is wedged",
                    evidence=ev,
                    needs_reboot=True,
                    remediation=HUNG_REMEDY,
                )
            )
        else:
            out.append(
                error(
                    f"the protection-domain probe did not answer (not assessed): {probe.detail}",
                    evidence=ev,
                    remediation=slow_not_hung("The protection-domain probe"),
                )
            )
    if probe.state == UNREADABLE:
        out.append(
            error(
                f"could not assess the protection domains: {probe.detail}",
                evidence=ev,
                remediation="Run `python3 -c 'import pyverbs.device, pyverbs.pd'` and "
                "`ibv_devinfo` by hand; a crash there is a broken rdma-core install.",
            )
        )
    good = [r["device"] for r in probe.devices if r["result"] == "ok"]
    hung = [r["device"] for r in probe.devices if r["result"] == "hung"]
    missing = [r["device"] for r in probe.devices if r["result"] == "missing"]
    skipped = [r["device"] for r in probe.devices if r["result"] == "not_probed"]
    tail = (f"; not listed: {', '.join(missing)} (MD202 reports them)" if missing else "") + (
        f"; not probed after the overrun: {', '.join(skipped)}" if skipped else ""
    )
    if out:
        # the devices left out are said once, by the overrun's finding when there is one
        overran = [f for f in out if f.evidence.get("device") in hung] or out
        overran[0].summary += tail
        return out
    if not good:
        return skip(
            "no RDMA device to probe"
            + (f" ({len(missing)} named, none listed: MD202 reports them)" if missing else ""),
            evidence=ev,
        )
    return ok(
        f"{len(good)} device(s) open and allocate a protection domain: {', '.join(good)}{tail}",
        evidence=ev,
    )


CHECK = Check(
    code="MD208",
    name="rdma.pd",
    title="RDMA devices open and allocate a protection domain",
    run=run,
    doc=Doc(
        meaning="""
Opens each RDMA device the hostfile names for this node (every listed device without a
hostfile), allocates a protection domain and frees it (ibv_open_device, ibv_alloc_pd: through
pyverbs where it imports, else through the verbs library itself, libibverbs or on macOS
librdma.dylib, as exo PR #1467 does), in a child process under the command deadline. A device that does not open or
refuses the protection domain fails with the verbs call and its errno (12 ENOMEM, 19 ENODEV,
...). A call that does not return within the deadline fails as a wedged driver when the
deadline was long enough to prove a hang, else is "not assessed" with the --timeout that
would tell. Skips when neither pyverbs nor the verbs library loads, or there is no RDMA
subsystem. A named device that is not
listed is MD202's finding.
""",
        why="""
A device can be listed and read PORT_ACTIVE and still refuse a protection domain (on macOS
after boot, until the Thunderbolt 5 cable is replugged: exo PR #1467); JACCL then crashes
registering memory against a null protection domain (SIGSEGV in ibv_reg_mr, exo issue #2186).
The passive checks pass on such a device.
""",
        action="""
Replug the Thunderbolt 5 cable of the device at both ends and check again; if it still fails,
reboot the node. A probe that hangs means a wedged driver: reboot. Kill leftover ranks first.
""",
        sources=(
            "exo PR #1467 (ibv_alloc_pd probe; replug the Thunderbolt 5 cable)",
            "exo issue #2186 (SIGSEGV in ibv_reg_mr with a null protection domain)",
            "rdma-core pyverbs (pyverbs.device.Context, pyverbs.pd.PD) and libibverbs "
            "(ibv_get_device_list, ibv_open_device, ibv_alloc_pd)",
        ),
    ),
)
