"""The Thunderbolt cabling fact (macOS): links, their speed, and the ``enX``/``rdma_enX`` each is.

Sources, each under the context's command deadline and run side by side (so three slow tools cost
one deadline, not three): ``system_profiler SPThunderboltDataType -json`` (host ports, link speed,
peer Macs), ``networksetup -listallhardwareports`` (``Thunderbolt <N>`` -> ``enX``, ``Thunderbolt
Bridge`` -> ``bridge0``) and ``ifconfig`` (IPv4 addresses, ``status:`` of each interface).
The mapping: receptacle N -> hardware port ``Thunderbolt N`` -> ``enX`` -> ``rdma_enX``
(Apple names the RDMA device after the interface). Parsing is in :mod:`meshdoctor.parsers.macos_links`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor import execute
from meshdoctor.facts.context import NodeContext
from meshdoctor.deadline import call_all
from meshdoctor.parsers.macos_links import (
    HardwarePorts,
    IfconfigReport,
    Interface,
    TbPeer,
    TbPort,
    TbReport,
    parse_ifconfig,
    parse_networksetup_ports,
    parse_system_profiler_tb,
    is_tb5_speed,
)

SYSTEM_PROFILER = ("system_profiler", "SPThunderboltDataType", "-json")
NETWORKSETUP = ("networksetup", "-listallhardwareports")
IFCONFIG = ("ifconfig",)
BRIDGE_PORT = "Thunderbolt Bridge"
DEFAULT_BRIDGE = "bridge0"


@dataclass
class Link:
    """A connected host Thunderbolt port: its ``receptacle`` number, ``hardware_port``
    (``Thunderbolt N``), network ``interface`` (``enX``, None if networksetup does not list it),
    ``rdma_device`` (``rdma_enX``), link speed in Gb/s (None when unknown) and its ``peers``."""

    receptacle: Optional[int]
    hardware_port: Optional[str]
    interface: Optional[str]
    speed_gbps: Optional[float]
    speed_text: str
    peers: List[TbPeer] = field(default_factory=list)

    @property
    def rdma_device(self) -> Optional[str]:
        """The RDMA device Apple names after the interface (``en2`` -> ``rdma_en2``); None without
        an interface."""
        return f"rdma_{self.interface}" if self.interface else None

    @property
    def tb4_speed(self) -> bool:
        """A link at Thunderbolt 4 speed or less (Thunderbolt 5 links run above 40 Gb/s)."""
        return self.speed_gbps is not None and not is_tb5_speed(self.speed_gbps)

    def to_dict(self) -> Dict[str, Any]:
        """JSON evidence of the link: receptacle, hardware port, interface, RDMA device, speed,
        state."""
        return {
            "receptacle": self.receptacle,
            "hardware_port": self.hardware_port,
            "interface": self.interface,
            "rdma_device": self.rdma_device,
            "speed": self.speed_text or None,
            "speed_gbps": self.speed_gbps,
            "peers": [p.to_dict() for p in self.peers],
        }


@dataclass
class TbInventory:
    """Everything MD201/MD205 read about Thunderbolt on this node.

    ``ports``: every host port; ``links``: the connected ones; ``hardware_ports``: networksetup's
    map; ``interfaces``: ifconfig blocks by name; ``bridge``: the Thunderbolt Bridge interface (None
    when ifconfig does not show it); ``sources``: each command's outcome (``ok`` or why not);
    ``warnings``: what could not be read.
    """

    ports: List[TbPort] = field(default_factory=list)
    links: List[Link] = field(default_factory=list)
    hardware_ports: Dict[str, str] = field(default_factory=dict)
    interfaces: Dict[str, Interface] = field(default_factory=dict)
    bridge_name: str = DEFAULT_BRIDGE
    sources: Dict[str, str] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)

    @property
    def bridge(self) -> Optional[Interface]:
        """The Thunderbolt Bridge interface (usually ``bridge0``) as ifconfig shows it; None when
        absent."""
        return self.interfaces.get(self.bridge_name)

    @property
    def readable(self) -> bool:
        """system_profiler answered with JSON we could read."""
        return self.sources.get("system_profiler") == "ok"

    def link_for_device(self, rdma_device: str) -> Optional[Link]:
        """The link whose interface is ``rdma_device``'s (``rdma_en2`` -> the ``en2`` link); None if
        none."""
        return next((ln for ln in self.links if ln.rdma_device == rdma_device), None)

    def tb5_links(self) -> List[Link]:
        """The links running above Thunderbolt 4's 40 Gb/s (Thunderbolt 5)."""
        return [ln for ln in self.links if is_tb5_speed(ln.speed_gbps)]

    def hardware(self) -> Dict[str, Any]:
        """What this Mac's Thunderbolt hardware can do, from its host ports.

        A port shows its capability as ``Up to N Gb/s`` when nothing is plugged in, and its link
        speed when something is; a link above 40 Gb/s proves a Thunderbolt 5 port. Returns
        ``{"generation": "tb5" | "tb4" | "unknown", "tb5_ports": [...], "tb4_ports": [...],
        "why": str}``: ``tb5`` when any port is known to be Thunderbolt 5; ``tb4`` when no port
        is and at least one shows ``Up to 40 Gb/s`` or less (no Thunderbolt 5 receptacle:
        Thunderbolt 4 hardware never does RDMA); ``unknown`` when every port is cabled at 40 Gb/s
        or less (then cable and port cannot be told apart from here).
        """
        tb5, tb4 = [], []
        for p in self.ports:
            label = p.hardware_port or p.name or "a port"
            if p.capability_gbps is not None:
                (tb5 if is_tb5_speed(p.capability_gbps) else tb4).append(
                    f"{label} ({p.speed_text})"
                )
            elif is_tb5_speed(p.speed_gbps):
                tb5.append(f"{label} (links at {p.speed_text})")
        if tb5:
            gen, why = "tb5", "Thunderbolt 5 receptacle(s): " + ", ".join(tb5)
        elif tb4:
            gen, why = (
                "tb4",
                ("no Thunderbolt 5 receptacle; the ports top out at 40 Gb/s: " + ", ".join(tb4)),
            )
        else:
            gen, why = (
                "unknown",
                (
                    "no port shows its capability (every port is cabled at 40 "
                    "Gb/s or less, or none is listed)"
                ),
            )
        return {"generation": gen, "tb5_ports": tb5, "tb4_ports": tb4, "why": why}

    def evidence(self) -> Dict[str, Any]:
        """JSON evidence: the links, the number of host ports, the tools read and what could not be
        read."""
        return {
            "links": [ln.to_dict() for ln in self.links],
            "host_ports": len(self.ports),
            "sources": self.sources,
            **({"unread": self.warnings[:20]} if self.warnings else {}),
        }


def _run_all(ctx: NodeContext, cmds: List[tuple]) -> Dict[tuple, execute.CommandResult]:
    """Run ``cmds`` side by side through ``ctx.command`` (each under its own deadline, so all
    together under one); missing executables are not started."""

    def one(argv: tuple) -> execute.CommandResult:
        if execute.which(argv[0]) is None:
            return execute.CommandResult(argv, None, "", "", 0.0, missing=True)
        return ctx.command(*argv)

    got = call_all(
        {c: (lambda c=c: one(c)) for c in cmds}, ctx.command_timeout + 2.0, name="tb-reader"
    )
    return {
        c: value
        if done
        else execute.CommandResult(c, None, "", "", ctx.command_timeout, timed_out=True)
        for c, (done, value) in got.items()
    }


def _outcome(res: execute.CommandResult) -> str:
    return "ok" if res.ok else res.describe()


def build(sp: TbReport, hw: HardwarePorts, ifc: IfconfigReport) -> TbInventory:
    """Join the three parsed sources into a :class:`TbInventory` (no commands run here)."""
    inv = TbInventory(
        ports=sp.ports,
        hardware_ports=hw.ports,
        interfaces=ifc.interfaces,
        bridge_name=hw.ports.get(BRIDGE_PORT, DEFAULT_BRIDGE),
    )
    inv.warnings += sp.warnings
    inv.warnings += [f"unparsed networksetup line: {ln.strip()[:120]}" for ln in hw.unparsed[:10]]
    inv.warnings += [f"unparsed ifconfig line: {ln.strip()[:120]}" for ln in ifc.unparsed[:10]]
    for p in sp.ports:
        if not p.connected:
            continue
        hwp = p.hardware_port
        iface = hw.ports.get(hwp) if hwp else None
        if hwp and iface is None and hw.ports:
            inv.warnings.append(f"networksetup lists no hardware port {hwp!r}")
        inv.links.append(Link(p.receptacle, hwp, iface, p.speed_gbps, p.speed_text, list(p.peers)))
    return inv


def gather_thunderbolt(ctx: NodeContext) -> TbInventory:
    """The Thunderbolt cabling of this node (use as ``ctx.fact(gather_thunderbolt)``)."""
    res = _run_all(ctx, [SYSTEM_PROFILER, NETWORKSETUP, IFCONFIG])
    sp_res, hw_res, if_res = res[SYSTEM_PROFILER], res[NETWORKSETUP], res[IFCONFIG]
    sp = parse_system_profiler_tb(sp_res.stdout) if sp_res.ok else TbReport()
    hw = parse_networksetup_ports(hw_res.stdout) if hw_res.ok else HardwarePorts()
    ifc = parse_ifconfig(if_res.stdout) if if_res.ok else IfconfigReport()
    inv = build(sp, hw, ifc)
    inv.sources = {
        "system_profiler": _outcome(sp_res),
        "networksetup": _outcome(hw_res),
        "ifconfig": _outcome(if_res),
    }
    if sp_res.ok and sp.warnings and not sp.ports:
        inv.sources["system_profiler"] = "unreadable: " + "; ".join(sp.warnings)
    return inv
