"""Parsers for Thunderbolt and network inventory on macOS: ``system_profiler
SPThunderboltDataType -json``, ``networksetup -listallhardwareports`` and ``ifconfig``.

Formats: Apple's and rdma-core's tool output (system_profiler keys, networksetup blocks) and the BSD ``ifconfig``
layout (``name: flags=<hex><NAMES> mtu N`` then tab-indented ``inet``/``status:``/``member:``
lines). Every parser takes text and returns data, never raises on unexpected text, and returns
what it could not read (``unparsed``/``warnings``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# Apple's and rdma-core's tool output: "TB5 vs TB4: link speed above 40 Gb/s".
TB4_MAX_GBPS = 40.0


def is_tb5_speed(gbps: Optional[float]) -> bool:
    """A link speed (Gb/s) above Thunderbolt 4's 40 Gb/s: Thunderbolt 5 (Apple's and rdma-core's tool output)."""
    return gbps is not None and gbps > TB4_MAX_GBPS


_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*Gb/s", re.I)


def parse_speed(text: Any) -> "tuple[Optional[float], bool]":
    """``"80 Gb/s"`` -> ``(80.0, False)``; ``"Up to 120 Gb/s"`` -> ``(120.0, True)`` (a port's
    capability, not a link speed); anything else -> ``(None, False)``."""
    if not isinstance(text, str):
        return None, False
    m = _SPEED.search(text)
    if not m:
        return None, False
    return float(m.group(1)), text.strip().lower().startswith("up to")


@dataclass
class TbPeer:
    """A Mac at the other end of a host port: its port's ``domain_uuid`` and ``name``;
    ``via`` names the dock/hub it hangs off ('' when direct)."""

    domain_uuid: str
    name: str = ""
    via: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """JSON form: the peer's domain UUID, name and, through a dock, ``via``."""
        d = {"domain_uuid": self.domain_uuid, "name": self.name}
        if self.via:
            d["via"] = self.via
        return d


@dataclass
class TbPort:
    """A host Thunderbolt port (a bus with ``domain_uuid_key``).

    ``receptacle``: the port number (``receptacle_1_tag.receptacle_id_key``), which names the
    hardware port ``Thunderbolt <N>``; ``speed_gbps``: the current link speed, None when only a
    capability (``Up to ...``) or nothing is shown; ``connected``: ``receptacle_connected``;
    ``peers``: Macs reached through it; ``devices``: names of other things plugged in.
    """

    receptacle: Optional[int]
    domain_uuid: str = ""
    name: str = ""
    speed_text: str = ""
    speed_gbps: Optional[float] = None
    capability_gbps: Optional[float] = None
    status: str = ""
    peers: List[TbPeer] = field(default_factory=list)
    devices: List[str] = field(default_factory=list)

    @property
    def connected(self) -> bool:
        """True when system_profiler says the receptacle is connected or lists a peer."""
        return self.status == "receptacle_connected" or bool(self.peers)

    @property
    def hardware_port(self) -> Optional[str]:
        """The networksetup hardware port of this receptacle (``Thunderbolt N``); None if
        unnumbered."""
        return f"Thunderbolt {self.receptacle}" if self.receptacle is not None else None

    @property
    def tb5_link(self) -> bool:
        """True when the link runs above Thunderbolt 4's 40 Gb/s."""
        return is_tb5_speed(self.speed_gbps)

    def to_dict(self) -> Dict[str, Any]:
        """JSON form of the port: receptacle, hardware port, domain UUID, speed, status, peers."""
        return {
            "receptacle": self.receptacle,
            "hardware_port": self.hardware_port,
            "domain_uuid": self.domain_uuid,
            "speed": self.speed_text,
            "speed_gbps": self.speed_gbps,
            "capability_gbps": self.capability_gbps,
            "status": self.status,
            "peers": [p.to_dict() for p in self.peers],
            "devices": self.devices,
        }


@dataclass
class TbReport:
    """What :func:`parse_system_profiler_tb` read: the host ``ports`` in order, ``warnings``."""

    ports: List[TbPort] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _peers_of(items: Any, via: str, depth: int, out: TbPort) -> None:
    if not isinstance(items, list) or depth > 3:
        return
    for it in items:
        if not isinstance(it, dict):
            continue
        name = _s(it.get("_name")) or _s(it.get("device_name_key"))
        if _s(it.get("domain_uuid_key")):
            out.peers.append(TbPeer(_s(it.get("domain_uuid_key")), name, via))
        else:
            if name:
                out.devices.append(name)
            _peers_of(it.get("_items"), via or name or "dock", depth + 1, out)


def parse_system_profiler_tb(text: str) -> TbReport:
    """``system_profiler SPThunderboltDataType -json`` -> :class:`TbReport`.

    ``{"SPThunderboltDataType": [bus, ...]}``; a bus with ``domain_uuid_key`` is a host port;
    ``receptacle_1_tag`` holds ``receptacle_id_key``, ``current_speed_key`` and
    ``receptacle_status_key``; ``_items`` with a ``domain_uuid_key`` are peer Macs, others (docks,
    with ``mode_key``) may nest peers one level deeper.
    """
    rep = TbReport()
    try:
        data = json.loads(text if isinstance(text, str) else "")
    except (ValueError, RecursionError):
        rep.warnings.append("system_profiler output is not JSON")
        return rep
    buses = data.get("SPThunderboltDataType") if isinstance(data, dict) else None
    if not isinstance(buses, list):
        rep.warnings.append("no SPThunderboltDataType list in the system_profiler output")
        return rep
    for i, bus in enumerate(buses):
        if not isinstance(bus, dict):
            rep.warnings.append(f"SPThunderboltDataType[{i}] is not an object")
            continue
        if not _s(bus.get("domain_uuid_key")):
            continue  # not a host port
        tag = bus.get("receptacle_1_tag")
        tag = tag if isinstance(tag, dict) else {}
        rid = tag.get("receptacle_id_key")
        try:
            receptacle: Optional[int] = int(str(rid).strip()) if rid is not None else None
        except ValueError:
            receptacle = None
        if receptacle is None:
            rep.warnings.append(
                f"SPThunderboltDataType[{i}] "
                f"({_s(bus.get('_name')) or 'host port'}): no receptacle id"
            )
        speed_text = _s(tag.get("current_speed_key"))
        gbps, capability = parse_speed(speed_text)
        port = TbPort(
            receptacle,
            _s(bus.get("domain_uuid_key")),
            _s(bus.get("_name")),
            speed_text,
            None if capability else gbps,
            gbps if capability else None,
            _s(tag.get("receptacle_status_key")),
        )
        _peers_of(bus.get("_items"), "", 0, port)
        rep.ports.append(port)
    return rep


@dataclass
class HardwarePorts:
    """``networksetup -listallhardwareports``: ``ports`` maps ``Hardware Port`` -> ``Device``
    (``Thunderbolt 1`` -> ``en2``, ``Thunderbolt Bridge`` -> ``bridge0``); ``unparsed`` lines."""

    ports: Dict[str, str] = field(default_factory=dict)
    unparsed: List[str] = field(default_factory=list)

    def device_of(self, hardware_port: str) -> Optional[str]:
        """The ``enX`` of ``hardware_port`` (``Thunderbolt 1`` -> ``en2``); None if not listed."""
        return self.ports.get(hardware_port)


def parse_networksetup_ports(text: str) -> HardwarePorts:
    """Blocks of ``Hardware Port: X`` / ``Device: enN`` / ``Ethernet Address: ...`` separated by
    blank lines, ending with ``VLAN Configurations`` and a rule of ``=``."""
    out = HardwarePorts()
    current: Optional[str] = None
    for line in (text if isinstance(text, str) else "").splitlines():
        s = line.strip()
        if not s or set(s) <= {"="}:
            continue
        key, sep, value = s.partition(":")
        key, value = key.strip(), value.strip()
        if sep and key == "Hardware Port" and value:
            current = value
        elif sep and key == "Device" and current is not None and value:
            out.ports[current] = value
            current = None
        elif sep and key == "Ethernet Address":
            continue
        elif s == "VLAN Configurations":
            current = None
        else:
            out.unparsed.append(line)
    return out


@dataclass
class Interface:
    """One ``ifconfig`` block: ``flags`` names, ``mtu``, IPv4 ``inet`` addresses, ``inet6``,
    ``status`` (``active``/``inactive``, '' when absent) and bridge ``members``."""

    name: str
    flags: List[str] = field(default_factory=list)
    mtu: Optional[int] = None
    inet: List[str] = field(default_factory=list)
    inet6: List[str] = field(default_factory=list)
    status: str = ""
    members: List[str] = field(default_factory=list)
    # prefix length of each ``inet`` address, in the same order (None when no netmask was shown)
    prefixlen: List[Optional[int]] = field(default_factory=list)

    @property
    def up(self) -> bool:
        """True when ifconfig's flags include UP."""
        return "UP" in self.flags

    @property
    def active(self) -> bool:
        """True when ifconfig says ``status: active`` (a live link)."""
        return self.status == "active"

    def to_dict(self) -> Dict[str, Any]:
        """JSON form: interface, flags, MTU, IPv4 addresses, status, bridge members."""
        return {
            "interface": self.name,
            "flags": self.flags,
            "mtu": self.mtu,
            "inet": self.inet,
            "inet6": self.inet6,
            "status": self.status or None,
            "members": self.members,
        }


@dataclass
class IfconfigReport:
    """``interfaces`` by name, in output order; ``unparsed`` lines."""

    interfaces: Dict[str, Interface] = field(default_factory=dict)
    unparsed: List[str] = field(default_factory=list)


_IF_HEAD = re.compile(r"^([A-Za-z][\w.\-]*):\s+flags=\w+<([^>]*)>(?:.*?\bmtu\s+(\d+))?")
_IF_HEAD_LOOSE = re.compile(r"^([A-Za-z][\w.\-]*):\s")


def _prefixlen(parts: List[str]) -> Optional[int]:
    """The prefix length of an ``inet`` line's ``netmask 0xffff0000`` (or dotted quad)."""
    try:
        mask = parts[parts.index("netmask") + 1]
        bits = (
            int(mask, 16)
            if mask.lower().startswith("0x")
            else int.from_bytes(bytes(int(x) for x in mask.split(".")), "big")
        )
    except (ValueError, IndexError, OverflowError):
        return None
    return bin(bits & 0xFFFFFFFF).count("1")


def parse_ifconfig(text: str) -> IfconfigReport:
    """BSD/macOS ``ifconfig`` (one or all interfaces) -> :class:`IfconfigReport`.

    A block starts with an unindented ``name: flags=8863<UP,...> mtu 1500``; indented lines give
    ``inet a.b.c.d netmask 0xffff0000 broadcast ...``, ``inet6 ...``, ``status: active`` and, for a
    bridge, ``member: enN flags=...``. Other indented lines (``options=``, ``ether``, ``media:``,
    ``nd6``, bridge configuration) are known and ignored.
    """
    rep = IfconfigReport()
    cur: Optional[Interface] = None
    for line in (text if isinstance(text, str) else "").splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            m = _IF_HEAD.match(line)
            if m:
                cur = Interface(
                    m.group(1),
                    [f for f in m.group(2).split(",") if f],
                    int(m.group(3)) if m.group(3) else None,
                )
                rep.interfaces[cur.name] = cur
            elif _IF_HEAD_LOOSE.match(line):
                cur = Interface(line.split(":", 1)[0])
                rep.interfaces[cur.name] = cur
                rep.unparsed.append(line)
            else:
                cur = None
                rep.unparsed.append(line)
            continue
        if cur is None:
            rep.unparsed.append(line)
            continue
        parts = line.split()
        head = parts[0]
        if head == "inet" and len(parts) > 1:
            cur.inet.append(parts[1])
            cur.prefixlen.append(_prefixlen(parts))
        elif head == "inet6" and len(parts) > 1:
            cur.inet6.append(parts[1])
        elif head == "status:":
            cur.status = " ".join(parts[1:])
        elif head == "member:" and len(parts) > 1:
            cur.members.append(parts[1])
    return rep
