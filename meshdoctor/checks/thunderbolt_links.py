"""MD205 Thunderbolt cabling (macOS): links, their speed, the rdma_enX each is, bridge0, IPv4.

From :func:`meshdoctor.facts.thunderbolt.gather_thunderbolt` (system_profiler, networksetup, ifconfig). The links checked are those the hostfile names for this node (``rdma_enX`` ->
``enX`` -> hardware port ``Thunderbolt N`` -> receptacle N), or without a hostfile every connected
link. Rules:

* a link at 40 Gb/s or less used for RDMA: on a Mac with no Thunderbolt 5 receptacle it is the
  hardware (fails under a jaccl hostfile: certain; warns otherwise), between Thunderbolt
  5-capable ports it is the cable or a dock in between (warns), else unknown (warns);
* a device the hostfile names whose Thunderbolt port has no cable fails (cabling vs hostfile);
* Thunderbolt Bridge (``bridge0``) with ``status: active`` fails: a known cause of RTR errno 22 and
  of broadcast storms on a mesh;
* each RDMA interface needs an IPv4 address (``inet`` line), else its port has only ``fe80::``
  GIDs and RTR fails with errno 22;
* under a ring hostfile (no RDMA used) the same Thunderbolt Bridge is checked when this node's
  hostfile address is one of bridge0's own: the ring's traffic then goes through the bridge, a
  flat L2 fabric over every Thunderbolt port with no loop protection (a broadcast storm on a
  cabled ring of 3 or more Macs), instead of one address per cable as
  ``mlx.distributed_config --auto-setup`` sets (MLX #1903: a ring hostfile on bridge0's
  address; MLX PR #1902 takes bridge0 down).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from meshdoctor.checks import _rdma
from meshdoctor.facts import verbs
from meshdoctor.checker.model import Check, Doc, fail, ok, skip, warn
from meshdoctor.facts.context import NodeContext

if TYPE_CHECKING:  # the macOS tools' fact module is loaded when the check runs
    from meshdoctor.facts.thunderbolt import Link, TbInventory

BRIDGE_REMEDY = (
    "Turn Thunderbolt Bridge off: `sudo ifconfig {bridge} down` now, and in System "
    "Settings > Network make the Thunderbolt Bridge service inactive (or delete it) "
    "so it stays off after a reboot. JACCL needs each Thunderbolt interface on its "
    "own."
)
IPV4_REMEDY = (
    "Give {iface} an IPv4 address: macOS self-assigns 169.254.x.y once DHCP gives up "
    "(this can take minutes), or set one in System Settings > Network ({hwport}). "
    "After a full-fleet reboot `mlx.distributed_config --auto-setup` (run once) "
    "configures every Thunderbolt interface."
)
TB4_HW_REMEDY = (
    "This Mac's Thunderbolt ports are Thunderbolt 4: no cable makes them Thunderbolt "
    "5, and RDMA over Thunderbolt (MLX's JACCL backend) needs Thunderbolt 5. Run the "
    "job with the ring backend over the Thunderbolt network (IPv4 on each "
    'Thunderbolt interface, `"backend": "ring"` in the hostfile), or use a Mac '
    "with Thunderbolt 5 ports."
)
TB4_REMEDY = (
    "Use a Thunderbolt 5 cable between Thunderbolt 5 ports on both Macs (80 Gb/s or "
    "more), port to port with no dock or hub; RDMA over Thunderbolt needs Thunderbolt 5."
)


def _hw_port_of(tb: TbInventory, iface: str) -> Optional[str]:
    return next((hp for hp, dev in tb.hardware_ports.items() if dev == iface), None)


def _used_links(ctx: NodeContext, tb: TbInventory, out: List[Any]) -> List[Link]:
    """Links used for RDMA; adds a finding to ``out`` for a named device with no cable. Without
    a hostfile: the links to another Mac (a dock, a display or a disk is no RDMA link)."""
    named = verbs.named_devices(ctx)
    if not named:
        return [link for link in tb.links if link.peers]
    used: List[Link] = []
    for dev in dict.fromkeys(n["device"] for n in named):
        link = tb.link_for_device(dev)
        if link is not None:
            used.append(link)
            continue
        iface = verbs.interface_of(dev)
        hwp = _hw_port_of(tb, iface) if iface else None
        towards = [n for n in named if n["device"] == dev]
        if hwp and hwp.startswith("Thunderbolt ") and hwp != "Thunderbolt Bridge":
            out.append(
                fail(
                    f"{dev} ({iface}, {hwp}) is named in the hostfile towards "
                    + ", ".join(f"rank {t['peer']} ({t['peer_host']})" for t in towards)
                    + f" but no cable is connected to {hwp}",
                    evidence={**tb.evidence(), "device": dev, "towards": towards},
                    remediation="Cable the ports the hostfile says, or regenerate the "
                    "hostfile from the current cabling.",
                )
            )
    return used


def _slow_link(link: Link, label: str, hw: Dict[str, Any], ev: Dict[str, Any], role: str):
    """A link at 40 Gb/s or less: the hardware (this Mac has no Thunderbolt 5 port), or the cable
    or dock between two Thunderbolt 5-capable ports, or unknown when no port shows its
    capability. Fails only where certain: Thunderbolt 4 hardware under a jaccl hostfile."""
    ev = {**ev, "thunderbolt_hardware": hw}
    docks = sorted({p.via for p in link.peers if p.via})
    if hw["generation"] == "tb4":
        ev["cause"] = "hardware"
        status = fail if role == verbs.REQUIRED else warn
        return status(
            f"{label} links at {link.speed_text}: this Mac's ports top out at 40 Gb/s "
            f"(Thunderbolt 4 hardware, no Thunderbolt 5 receptacle: "
            f"{', '.join(hw['tb4_ports'])}); no cable or dock changes that, "
            "and RDMA needs Thunderbolt 5",
            evidence=ev,
            remediation=TB4_HW_REMEDY,
        )
    if hw["generation"] == "tb5":
        ev["cause"] = "dock" if docks else "cable"
        via = (
            f"the dock in between ({', '.join(docks)})"
            if docks
            else "the cable (a Thunderbolt 4 or USB4 cable)"
        )
        return warn(
            f"{label} links at {link.speed_text} although this Mac's ports are "
            f"Thunderbolt 5 ({hw['why']}): {via} limits it, or the peer's port is "
            "Thunderbolt 4; RDMA needs a Thunderbolt 5 link (above 40 Gb/s)",
            evidence=ev,
            remediation=TB4_REMEDY,
        )
    ev["cause"] = "unknown"
    return warn(
        f"{label} links at {link.speed_text}: Thunderbolt 4 speed; whether the port or "
        f"the cable limits it is not visible here ({hw['why']}); RDMA needs a "
        "Thunderbolt 5 link (above 40 Gb/s)",
        evidence=ev,
        remediation=TB4_REMEDY,
    )


RING_BRIDGE_REMEDY = (
    "Give the ring one address per Thunderbolt cable instead of bridge0's: `mlx.distributed_config "
    "--over thunderbolt --backend ring --hosts HOSTS --auto-setup` takes bridge0 down, sets "
    "the addresses and writes the hostfile; by hand, `sudo ifconfig {bridge} down` and make "
    "Thunderbolt Bridge inactive in System Settings > Network, then put each Thunderbolt "
    "interface's IPv4 address in the hostfile."
)


def _ring_on_bridge(ctx: NodeContext):
    """Under a ring hostfile on a Mac: a failure when this node's hostfile address is one of the
    active Thunderbolt Bridge's own (its ``inet``), else None (the ring check does not apply)."""
    hf = ctx.hostfile
    if hf is None or not ctx.is_mac or hf.effective_backend != "ring" or not ctx.ranks:
        return None
    from meshdoctor.facts.thunderbolt import gather_thunderbolt

    tb = ctx.fact(gather_thunderbolt)
    bridge = tb.bridge if tb.readable and tb.sources.get("ifconfig") == "ok" else None
    if bridge is None or not bridge.active:
        return None
    mine = [ip for r in ctx.ranks for ip in hf.hosts[r].ips]
    on = [ip for ip in mine if ip in bridge.inet]
    if not on:
        return None
    return fail(
        f"the ring hostfile's address {', '.join(on)} for this node is on the Thunderbolt "
        f"Bridge ({bridge.name}"
        + (f", members {', '.join(bridge.members)}" if bridge.members else "")
        + "), not on a Thunderbolt interface: the ring's data crosses the bridge, which has no "
        "loop protection on a cabled ring",
        evidence={**tb.evidence(), "bridge": bridge.to_dict(), "hostfile_ips": mine},
        remediation=RING_BRIDGE_REMEDY.format(bridge=bridge.name),
    )


def run(ctx: NodeContext):
    role = verbs.rdma_role(ctx)
    if role == verbs.UNUSED:
        return _ring_on_bridge(ctx) or skip(verbs.unused_skip_reason(ctx))
    from meshdoctor.facts.thunderbolt import SYSTEM_PROFILER, gather_thunderbolt

    tb = ctx.fact(gather_thunderbolt)
    if not tb.readable:
        return _rdma.error_finding(
            f"could not read the Thunderbolt links: {tb.sources.get('system_profiler')}",
            tb.evidence(),
            tools="`" + " ".join(SYSTEM_PROFILER) + "`",
        )
    out: List[Any] = []
    used = _used_links(ctx, tb, out)
    bad = fail if role in (verbs.REQUIRED, verbs.UNKNOWN) else warn
    if_ok = tb.sources.get("ifconfig") == "ok"
    bridge = tb.bridge
    if bridge is not None and bridge.active:
        out.append(
            bad(
                f"Thunderbolt Bridge ({bridge.name}) is active"
                + (f" (members {', '.join(bridge.members)})" if bridge.members else "")
                + ": JACCL's queue pairs fail to reach RTR (errno 22) while it is up",
                evidence={**tb.evidence(), "bridge": bridge.to_dict()},
                remediation=BRIDGE_REMEDY.format(bridge=bridge.name),
            )
        )
    rows: List[Dict[str, Any]] = []
    hw = tb.hardware()
    for link in used:
        row = link.to_dict()
        rows.append(row)
        ev = {**tb.evidence(), "link": row}
        label = f"{link.hardware_port} ({link.interface or '?'}, {link.rdma_device or '?'})"
        if link.tb4_speed:
            out.append(_slow_link(link, label, hw, ev, role))
        if link.interface is None:
            out.append(
                warn(
                    f"{link.hardware_port or 'a connected port'} has no network "
                    "interface in `networksetup -listallhardwareports`; its rdma device "
                    "cannot be named",
                    evidence=ev,
                )
            )
            continue
        iface = tb.interfaces.get(link.interface)
        row["ipv4"] = iface.inet if iface is not None else None
        if not if_ok:
            continue
        if iface is None:
            out.append(warn(f"{label}: `ifconfig` does not show {link.interface}", evidence=ev))
        elif not iface.inet:
            out.append(
                bad(
                    f"{label} has no IPv4 address: its RDMA port publishes only fe80:: "
                    "GIDs, so the queue pair cannot reach RTR (errno 22)",
                    evidence={**ev, "interface": iface.to_dict()},
                    remediation=IPV4_REMEDY.format(iface=link.interface, hwport=link.hardware_port),
                )
            )
    if not if_ok:
        out.append(
            warn(
                f"could not check bridge0 and IPv4 addresses: {tb.sources.get('ifconfig')}",
                evidence=tb.evidence(),
            )
        )
    if out:
        return out
    if not used:
        if role == verbs.REQUIRED:
            return fail(
                "no Thunderbolt link is connected, but the hostfile needs RDMA",
                evidence=tb.evidence(),
                remediation=TB4_REMEDY,
            )
        return skip("no Thunderbolt link is connected", evidence=tb.evidence())
    bridge_note = (
        f"{bridge.name} {bridge.status or 'down'}"
        if bridge is not None
        else "no Thunderbolt Bridge"
    )
    return ok(
        f"{len(used)} link(s): "
        + ", ".join(
            f"{r['hardware_port']} -> {r['rdma_device']} {r['speed'] or '?'} "
            f"{(r.get('ipv4') or ['?'])[0]}"
            for r in rows
        )
        + f"; {bridge_note}",
        evidence={**tb.evidence(), "bridge": bridge.to_dict() if bridge else None},
    )


CHECK = Check(
    code="MD205",
    name="thunderbolt.links",
    title="Thunderbolt links, bridge0 and IPv4",
    run=run,
    platforms=("darwin",),
    doc=Doc(
        meaning="""
Reads this Mac's Thunderbolt links (`system_profiler SPThunderboltDataType -json`), maps each port
N to its hardware port "Thunderbolt N", its interface enX and RDMA device rdma_enX
(`networksetup -listallhardwareports`), and reads the interfaces (`ifconfig`). With --hostfile it
checks the links of the devices named for this node, otherwise every connected link.

- A link at 40 Gb/s or less: RDMA needs Thunderbolt 5. When this Mac has no Thunderbolt 5
  receptacle (its ports show "Up to 40 Gb/s") the hardware is the cause and no cable helps (fails
  with a jaccl hostfile; the advice is the ring backend); between Thunderbolt 5-capable ports it
  is the cable or a dock in between (warns).
- A device named in the hostfile whose port has no cable fails (cabling and hostfile disagree).
- Thunderbolt Bridge (bridge0) active fails; under a ring hostfile (no RDMA) it fails when
  this node's hostfile address is bridge0's own (the ring's data then crosses the bridge).
- Each RDMA interface needs an IPv4 address (fails without one).
""",
        why="""
An active Thunderbolt Bridge is a known cause of "RTR failed with errno 22" and of broadcast
storms on a mesh. An RDMA interface without an IPv4 address publishes only fe80:: GIDs, so JACCL
cannot reach its peer. A slow or missing link makes the group fail or crawl.
""",
        action="""
`sudo ifconfig bridge0 down` and make Thunderbolt Bridge inactive in System Settings > Network;
give each Thunderbolt interface an IPv4 address (169.254.x.y self-assigned, or run
`mlx.distributed_config --auto-setup` once after a full-fleet reboot); use Thunderbolt 5 cables
port to port.
""",
        sources=(
            "MLX PR #1902 (mlx.distributed_config --auto-setup takes bridge0 down)",
            "MLX #1903 (a ring hostfile on bridge0's address)",
            "mlx #4530 (RTR errno 22)",
            "system_profiler(8), networksetup(8)",
        ),
    ),
)
