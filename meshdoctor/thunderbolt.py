"""The Thunderbolt cabling fact (macOS): links, their speed, and the ``enX``/``rdma_enX`` each is.

Sources, each under the context's command deadline and run side by side (so three slow tools cost
one deadline, not three): ``system_profiler SPThunderboltDataType -json`` (host ports, link speed,
peer Macs), ``networksetup -listallhardwareports`` (``Thunderbolt <N>`` -> ``enX``, ``Thunderbolt
Bridge`` -> ``bridge0``) and ``ifconfig`` (IPv4 addresses, ``status:`` of each interface).
Formats and the mapping receptacle N -> ``Thunderbolt N`` -> ``enX`` -> ``rdma_enX``:
Apple's system_profiler and networksetup output. Parsing is in :mod:`meshdoctor.parsers.thunderbolt`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import execute
from .context import NodeContext
from .parsers.thunderbolt import (HardwarePorts, IfconfigReport, Interface,
                                  TbPeer, TbPort, TbReport, parse_ifconfig,
                                  parse_networksetup_ports, parse_system_profiler_tb, is_tb5_speed)

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
        return f"rdma_{self.interface}" if self.interface else None

    @property
    def tb4_speed(self) -> bool:
        """A link at Thunderbolt 4 speed or less (Apple's and rdma-core's tool output: TB5 is above 40 Gb/s)."""
        return self.speed_gbps is not None and not is_tb5_speed(self.speed_gbps)

    def to_dict(self) -> Dict[str, Any]:
        return {"receptacle": self.receptacle, "hardware_port": self.hardware_port,
                "interface": self.interface, "rdma_device": self.rdma_device,
                "speed": self.speed_text or None, "speed_gbps": self.speed_gbps,
                "peers": [p.to_dict() for p in self.peers]}


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
        return self.interfaces.get(self.bridge_name)

    @property
    def readable(self) -> bool:
        """system_profiler answered with JSON we could read."""
        return self.sources.get("system_profiler") == "ok"

    def link_for_device(self, rdma_device: str) -> Optional[Link]:
        return next((ln for ln in self.links if ln.rdma_device == rdma_device), None)

    def tb5_links(self) -> List[Link]:
        return [ln for ln in self.links if is_tb5_speed(ln.speed_gbps)]

    def max_capability_gbps(self) -> Optional[float]:
        caps = [p.capability_gbps or p.speed_gbps for p in self.ports]
        caps = [c for c in caps if c is not None]
        return max(caps) if caps else None

    def evidence(self) -> Dict[str, Any]:
        return {"links": [ln.to_dict() for ln in self.links],
                "host_ports": len(self.ports), "sources": self.sources,
                **({"unread": self.warnings[:20]} if self.warnings else {})}


def _run_all(ctx: NodeContext, cmds: List[tuple]) -> Dict[tuple, execute.CommandResult]:
    """Run ``cmds`` side by side through ``ctx.command``; missing executables are not started."""
    out: Dict[tuple, execute.CommandResult] = {}

    def one(argv: tuple) -> None:
        if execute.which(argv[0]) is None:
            out[argv] = execute.CommandResult(argv, None, "", "", 0.0, missing=True)
        else:
            out[argv] = ctx.command(*argv)

    threads = [threading.Thread(target=one, args=(c,), daemon=True) for c in cmds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()  # each command has its own deadline inside ctx.command
    return out


def _outcome(res: execute.CommandResult) -> str:
    return "ok" if res.ok else res.describe()


def build(sp: TbReport, hw: HardwarePorts, ifc: IfconfigReport) -> TbInventory:
    """Join the three parsed sources into a :class:`TbInventory` (no commands run here)."""
    inv = TbInventory(ports=sp.ports, hardware_ports=hw.ports, interfaces=ifc.interfaces,
                      bridge_name=hw.ports.get(BRIDGE_PORT, DEFAULT_BRIDGE))
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
        inv.links.append(Link(p.receptacle, hwp, iface, p.speed_gbps, p.speed_text,
                              list(p.peers)))
    return inv


def gather_thunderbolt(ctx: NodeContext) -> TbInventory:
    """The Thunderbolt cabling of this node (use as ``ctx.fact(gather_thunderbolt)``)."""
    res = _run_all(ctx, [SYSTEM_PROFILER, NETWORKSETUP, IFCONFIG])
    sp_res, hw_res, if_res = res[SYSTEM_PROFILER], res[NETWORKSETUP], res[IFCONFIG]
    sp = parse_system_profiler_tb(sp_res.stdout) if sp_res.ok else TbReport()
    hw = parse_networksetup_ports(hw_res.stdout) if hw_res.ok else HardwarePorts()
    ifc = parse_ifconfig(if_res.stdout) if if_res.ok else IfconfigReport()
    inv = build(sp, hw, ifc)
    inv.sources = {"system_profiler": _outcome(sp_res), "networksetup": _outcome(hw_res),
                   "ifconfig": _outcome(if_res)}
    if sp_res.ok and sp.warnings and not sp.ports:
        inv.sources["system_profiler"] = "unreadable: " + "; ".join(sp.warnings)
    return inv
