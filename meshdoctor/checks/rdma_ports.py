"""MD202 RDMA ports: the devices the hostfile names for this node exist and are PORT_ACTIVE.

With a hostfile (the mlx.launch hostfile's ``rdma`` rows): every device in this node's ``rdma`` row must exist
(names follow ``enX`` and change after re-cabling or a reboot; a missing one fails with the list of
devices that do exist: JACCL 0.32.1+ says ``Could not find device``, older builds crash in
``ibv_reg_mr``) and have a ``PORT_ACTIVE (4)`` port (``PORT_DOWN`` until the Mac at the other end
has RDMA enabled; ports also drop after hours of traffic). Without a hostfile
it reports the active ports; on macOS a port that is ``PORT_DOWN`` although its Thunderbolt link is
connected to a peer Mac warns (on Thunderbolt 4 hardware it says so: those ports never come up).
Runbook: a 4-node full mesh has 3 active ports per node.

Every summary names each port by the state it read (``Port.state_name``): ``PORT_INIT`` and
``PORT_ARMED`` (link up, not yet configured or activated: ibv_devinfo(1), rdma-core
``enum ibv_port_state``) are counted as what they are, never as down, and get the advice for a
port that was not activated rather than the one for a missing cable or peer.
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.checks import _rdma
from meshdoctor.facts import verbs
from meshdoctor.model import Export
from meshdoctor.checker.model import Check, Doc, fail, ok, warn
from meshdoctor.facts.context import NodeContext

MISSING_REMEDY = (
    "RDMA device names follow the enX numbering and change after re-cabling or a "
    "reboot. Regenerate the hostfile from the devices that exist now (after a "
    "full-fleet reboot run `mlx.distributed_config --auto-setup` once, then write "
    "the hostfile again), and check `ibv_devices` on this node."
)
DOWN_REMEDY = (
    "A port reads PORT_DOWN until the Mac at the other end also has RDMA enabled and "
    "the Thunderbolt 5 cable is seated. Check the cable and run `meshdoctor check` on "
    "the peer. Ports that dropped after hours of traffic come back only with a "
    "full-fleet reboot, then one `mlx.distributed_config --auto-setup`."
)


NOT_ACTIVATED_REMEDY = (
    "The port's link is up but the port was not activated (ibv_devinfo(1): PORT_INIT waits "
    "for a subnet manager to configure it, PORT_ARMED to activate it). Check again in a "
    "moment: a port passes through these states on its way to PORT_ACTIVE. On InfiniBand a "
    "port that stays in PORT_INIT has no subnet manager on its fabric (start opensm there)."
)
# what each state that is not PORT_ACTIVE means, in the summaries (ibv_devinfo(1), rdma-core
# verbs.h ``enum ibv_port_state``)
STATE_MEANING = {
    "PORT_DOWN": "not cabled, or the peer has RDMA disabled",
    "PORT_INIT": "link up, not yet configured",
    "PORT_ARMED": "link up, not yet activated",
}

TB4_DOWN_REMEDY = (
    "This Mac's Thunderbolt ports are Thunderbolt 4 (no Thunderbolt 5 receptacle): "
    "its rdma_enX devices never come up, whatever the cable or the peer. Run the "
    "job with the ring backend over the Thunderbolt network, or use a Mac with "
    "Thunderbolt 5 ports."
)


def _down_advice(ctx: NodeContext):
    """``(summary suffix, remedy)`` for a port that is not active: on Thunderbolt 4 hardware
    no cable or peer brings it up (MD201 says why), elsewhere the usual causes apply."""
    if ctx.is_mac:
        from meshdoctor.facts.thunderbolt import gather_thunderbolt  # macOS tools, when asked

        tb = ctx.fact(gather_thunderbolt)
        if tb.readable and tb.hardware()["generation"] == "tb4":
            return " (Thunderbolt 4 hardware: never usable for RDMA)", TB4_DOWN_REMEDY
    return "", DOWN_REMEDY


def _not_active(ports) -> str:
    """``"1 PORT_DOWN (not cabled, ...), 1 PORT_INIT (link up, ...)"``: the ports that are not
    active counted by the state each read, in the order first seen."""
    counts: Dict[str, int] = {}
    for p in ports:
        counts[p.state_name] = counts.get(p.state_name, 0) + 1
    return ", ".join(
        f"{n} {st}" + (f" ({STATE_MEANING[st]})" if st in STATE_MEANING else "")
        for st, n in counts.items()
    )


def _port_states(dev) -> List[Dict[str, Any]]:
    return [
        {
            "device": dev.name,
            "port": p.num,
            "state": p.state_name,
            "state_code": p.state_code,
            **({"phys_state": p.phys_state} if p.phys_state else {}),
        }
        for p in dev.ports
    ]


def _port_text(p) -> str:
    """``"port 1 PORT_DOWN (physical state POLLING)"``: the logical state read, and the
    physical one when ``ibv_devinfo -v`` printed it (the link, apart from the port)."""
    return f"port {p.num} {p.state_name}" + (
        f" (physical state {p.phys_state})" if p.phys_state else ""
    )


def _with_hostfile(ctx: NodeContext, inv: verbs.Inventory, named: List[Dict[str, Any]]):
    existing = inv.names
    problems = []
    good = []
    by_dev: Dict[str, List[Dict[str, Any]]] = {}
    for n in named:
        by_dev.setdefault(n["device"], []).append(n)
    for name, uses in by_dev.items():
        towards = ", ".join(f"rank {u['peer']} ({u['peer_host']})" for u in uses)
        ev = {**inv.evidence(), "device": name, "towards": uses}
        dev = inv.device(name)
        if name not in existing:
            problems.append(
                fail(
                    f"{name} (towards {towards}) does not exist on this node; devices here: "
                    f"{', '.join(existing) or 'none'}",
                    evidence={**ev, "existing": existing},
                    remediation=MISSING_REMEDY,
                )
            )
        elif dev is None or not any(p.state_known for p in dev.ports):
            problems.append(
                _rdma.error_finding(
                    f"cannot confirm {name} (towards {towards}) is PORT_ACTIVE: listed by "
                    f"ibv_devices but its port state could not be read",
                    ev,
                )
            )
        elif not any(p.active for p in dev.ports):
            states = ", ".join(_port_text(p) for p in dev.ports)
            why, remedy = _down_advice(ctx)
            if not why and not any(p.down for p in dev.ports):
                remedy = NOT_ACTIVATED_REMEDY  # the link is up: no cable or peer to blame
            problems.append(
                fail(
                    f"{name} (towards {towards}) is not active: {states}{why}",
                    evidence={**ev, "ports": _port_states(dev)},
                    remediation=remedy,
                )
            )
        else:
            port = next(p for p in dev.ports if p.active)
            good.append(
                {
                    "device": name,
                    "port": port.num,
                    "state": port.state_name,
                    "towards": [u["peer"] for u in uses],
                }
            )
    # how many of the devices named for this node are PORT_ACTIVE (--format prometheus)
    counts = {"active": len(good), "named": len(by_dev)}
    if problems:
        for p in problems:
            p.evidence["named_devices"] = dict(counts)
        return problems
    return ok(
        f"all {len(good)} device(s) named for {ctx.rank_label} are PORT_ACTIVE: "
        + ", ".join(f"{g['device']} port {g['port']}" for g in good),
        evidence={**inv.evidence(), "named": good, "named_devices": counts},
    )


def _without_hostfile(ctx: NodeContext, inv: verbs.Inventory):
    active, down = [], []
    for dev in inv.devices:
        for p in dev.ports:
            if p.active:
                active.append((dev, p))
            elif p.state_known:
                down.append((dev, p))
    unknown = [
        n
        for n in inv.names
        if inv.device(n) is None
        or not inv.device(n).ports  # type: ignore[union-attr]
        or not all(p.state_known for p in inv.device(n).ports)
    ]  # type: ignore[union-attr]
    ev: Dict[str, Any] = {
        **inv.evidence(),
        "ports": [s for d in inv.devices for s in _port_states(d)],
    }
    out = []
    if ctx.is_mac and down:
        from meshdoctor.facts.thunderbolt import gather_thunderbolt  # macOS tools, when asked

        tb = ctx.fact(gather_thunderbolt)
        why, remedy = _down_advice(ctx)
        for dev, p in down:
            link = tb.link_for_device(dev.name)
            if link is not None and link.peers:
                peer = link.peers[0].name or link.peers[0].domain_uuid
                out.append(
                    warn(
                        f"{dev.name} port {p.num} is {p.state_name} although {link.hardware_port} "
                        f"({link.interface}) is cabled to a peer Mac ({peer}){why}",
                        evidence={**ev, "device": dev.name, "port": p.num, "link": link.to_dict()},
                        remediation=remedy if why or p.down else NOT_ACTIVATED_REMEDY,
                    )
                )
    if unknown:
        out.append(
            warn(
                f"port state of {', '.join(unknown)} could not be read "
                "(ibv_devinfo output incomplete)",
                evidence=ev,
            )
        )
    if not active and not unknown:
        why, remedy = _down_advice(ctx)
        cause = (
            why.strip(" ()")
            if why
            else "no peer with RDMA enabled is cabled to this node"
            if all(p.down for _, p in down)
            else "no port was activated"
        )
        if not why and not any(p.down for _, p in down):
            remedy = NOT_ACTIVATED_REMEDY
        out.append(
            warn(
                f"no RDMA port is active ({_not_active(p for _, p in down) or 'no port read'}): "
                f"{cause}",
                evidence=ev,
                remediation=remedy,
            )
        )
    elif active:
        out.append(
            ok(
                f"{len(active)} active RDMA port(s): "
                + ", ".join(f"{d.name} port {p.num}" for d, p in active)
                + (f"; not active: {_not_active(p for _, p in down)}" if down else ""),
                evidence=ev,
            )
        )
    return out


def run(ctx: NodeContext):
    inv, finding = _rdma.inventory_or_finding(ctx, "the RDMA ports")
    if finding is not None:
        return finding
    named = verbs.named_devices(ctx)
    if named:
        return _with_hostfile(ctx, inv, named)
    return _without_hostfile(ctx, inv)


CHECK = Check(
    code="MD202",
    exports=(Export("named_devices", "named_devices"), Export("device_down", "device")),
    name="rdma.ports",
    title="RDMA devices exist and ports are active",
    run=run,
    doc=Doc(
        meaning="""
With --hostfile: every RDMA device the hostfile names for this node (its `rdma` row) must exist
and have a PORT_ACTIVE port. A name that does not exist fails with the list of devices that do:
rdma_enX names follow the enX numbering and change after re-cabling or a reboot. A device with
no PORT_ACTIVE port fails, its ports named by the state each read (PORT_DOWN; PORT_INIT or
PORT_ARMED: the link is up, the port not yet activated). A device whose state cannot be read is reported as "could not assess" (exit 3).

Without a hostfile: lists the active ports (a 4-node full mesh has 3 per node); on macOS a port
that is down although its Thunderbolt cable reaches a peer Mac warns.
""",
        why="""
A missing device stops the launch (JACCL 0.32.1+ says "Could not find device rdma_enX", older
builds crash with SIGSEGV in ibv_reg_mr). Ports stay down until the Mac at the other end also has
RDMA enabled, and they drop after hours on a wedged fabric; a group cannot form over a port that
is down.
""",
        action="""
Regenerate the hostfile from the devices that exist (`ibv_devices`); check the cable and that
the peer has RDMA enabled; after ports dropped, reboot the whole fleet, then run
`mlx.distributed_config --auto-setup` once and confirm N-1 active ports on every node.
""",
        sources=(
            "mlx #3777, #4180 (device not found, SIGSEGV in ibv_reg_mr)",
            "ibv_devinfo(1) port states (PORT_ACTIVE, PORT_DOWN)",
            "mlx #4319",
        ),
    ),
)
