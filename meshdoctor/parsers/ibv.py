"""Parsers for the verbs tools: ``ibv_devinfo [-v]``, ``ibv_devices``, ``rdma_ctl status``.

Formats: Apple's and rdma-core's tool output (rdma-core ``devinfo.c``/``devices.c``; Apple's builds of them on macOS).
This module also defines the verbs data model (:class:`Device`, :class:`Port`, :class:`Gid`) that
every verbs reader produces, the ``ibv_devinfo`` parser here and the pyverbs reader in
:mod:`meshdoctor.facts.verbs` alike, so the checks see one shape whatever the source.

Every parser takes text and returns data; none raises on unexpected text. Lines they cannot read
are returned in ``unparsed`` and inconsistencies (a port count that does not match the ports read,
a port without a state) in ``warnings``, so a check can say what it could not read.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# Port states, ``enum ibv_port_state`` (rdma-core verbs.h): 4 = IBV_PORT_ACTIVE.
PORT_STATES = {
    0: "PORT_NOP",
    1: "PORT_DOWN",
    2: "PORT_INIT",
    3: "PORT_ARMED",
    4: "PORT_ACTIVE",
    5: "PORT_ACTIVE_DEFER",
}
PORT_ACTIVE = "PORT_ACTIVE"
# Physical port states as ``ibv_devinfo -v`` prints them (``phys_state: LINK_UP (5)``; rdma-core
# ``devinfo.c`` port_phy_state_str, the InfiniBand PortPhysicalState values).
PHYS_STATES = {
    1: "SLEEP",
    2: "POLLING",
    3: "DISABLED",
    4: "PORT_CONFIGURATION_TRAINING",
    5: "LINK_UP",
    6: "LINK_ERROR_RECOVERY",
    7: "PHY_TEST",
}
# ``enum ibv_mtu``: 1..5 -> 256..4096 bytes.
MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
# ``enum ibv_link_layer`` as pyverbs reports it.
LINK_LAYERS = {0: "Unspecified", 1: "InfiniBand", 2: "Ethernet"}

NO_DEVICES = "No IB devices found"
NO_SUBSYSTEM = "Failed to get IB devices list"  # devinfo.c perror() when there is no subsystem

_KV = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*:\s*(.*?)\s*$")
_GID = re.compile(r"^\s*GID\[\s*(\d+)\s*\]\s*:\s*(\S+?)\s*(?:,\s*(.*?))?\s*$")
_VALUE_CODE = re.compile(r"^(.*?)\s*\((-?\d+)\)\s*$")
_FLAG = re.compile(r"^\s+[A-Z0-9_]+(?:\s+[A-Z0-9_]+)*\s*$")
_INT = re.compile(r"0x[0-9a-fA-F]+|\d+")  # fullmatch
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")  # fullmatch


def to_int(text: Any) -> Optional[int]:
    """``"262144"``/``"0x1f"`` -> int; anything else -> None."""
    s = str(text).strip() if text is not None else ""
    if not _INT.fullmatch(s):
        return None
    return int(s, 16) if s.startswith("0x") else int(s)


def value_and_code(text: str) -> Tuple[str, Optional[int]]:
    """``"PORT_ACTIVE (4)"`` -> ``("PORT_ACTIVE", 4)``; ``"Thunderbolt"`` ->
    ``("Thunderbolt", None)``."""
    text = text if isinstance(text, str) else ""
    m = _VALUE_CODE.match(text)
    if m:
        return m.group(1).strip(), int(m.group(2))
    return text.strip(), None


def normalize_gid(text: str) -> Optional[str]:
    """A GID as an IPv6 text (compressed), mapped ones as ``::ffff:a.b.c.d``; None if not one.

    Accepts both ``fe80::1`` and the fixed-width ``fe80:0000:...`` form rdma-core prints on some
    versions. The all-zero GID is returned as ``::`` (it is an empty table slot).
    """
    if not isinstance(text, str):
        return None
    try:
        addr = ipaddress.IPv6Address(text.strip())
    except ValueError:
        return None
    if addr.ipv4_mapped is not None:
        return f"::ffff:{addr.ipv4_mapped}"
    return addr.compressed


@dataclass
class Gid:
    """One non-zero entry of a port's GID table: ``index`` and ``gid`` (normalized IPv6 text);
    ``gid_type`` as printed after a comma by newer rdma-core (``RoCE v2``) or '' when absent."""

    index: int
    gid: str
    gid_type: str = ""

    @property
    def ipv4(self) -> Optional[str]:
        """The IPv4 address of an IPv4-mapped GID (``::ffff:a.b.c.d``), else None."""
        try:
            mapped = ipaddress.IPv6Address(self.gid).ipv4_mapped
        except ValueError:
            return None
        return str(mapped) if mapped is not None else None

    def to_dict(self) -> Dict[str, Any]:
        """JSON form: index, gid, and its type and IPv4 address when known."""
        d: Dict[str, Any] = {"index": self.index, "gid": self.gid}
        if self.gid_type:
            d["type"] = self.gid_type
        if self.ipv4:
            d["ipv4"] = self.ipv4
        return d


@dataclass
class Port:
    """One port of a device. ``state`` is the name (``PORT_ACTIVE``) or '' if not read;
    ``state_code`` the number (4 = active); MTUs in bytes; ``gids`` the non-zero GID table;
    ``phys_state`` the physical state's name (``LINK_UP``, ``POLLING``) or '' if not read."""

    num: int
    state: str = ""
    state_code: Optional[int] = None
    max_mtu: Optional[int] = None
    active_mtu: Optional[int] = None
    link_layer: str = ""
    gid_tbl_len: Optional[int] = None
    gids: List[Gid] = field(default_factory=list)
    phys_state: str = ""

    @property
    def active(self) -> bool:
        """True for PORT_ACTIVE (state name, or state code 4 as ibv_devinfo -v prints it)."""
        return self.state == PORT_ACTIVE or self.state_code == 4

    @property
    def state_known(self) -> bool:
        """True when the port state was read at all (by name or code)."""
        return bool(self.state) or self.state_code is not None

    @property
    def state_name(self) -> str:
        """The state as it was read: its name (``PORT_INIT``), else the name of its code (``2``
        -> ``PORT_INIT``, ``enum ibv_port_state``), else ``unknown``. Every summary of a port's
        state is written from this, so that it says what the reading says."""
        if self.state:
            return self.state
        if self.state_code is not None:
            return PORT_STATES.get(self.state_code, f"state {self.state_code}")
        return "unknown"

    @property
    def down(self) -> bool:
        """True only for PORT_DOWN (code 1): the link is not up. PORT_INIT and PORT_ARMED are
        neither down nor active (the link is up, the port not yet activated)."""
        return self.state == "PORT_DOWN" or (not self.state and self.state_code == 1)

    def mapped_gids(self) -> List[Gid]:
        """The IPv4-mapped GIDs, in index order."""
        return sorted((g for g in self.gids if g.ipv4), key=lambda g: g.index)

    def to_dict(self) -> Dict[str, Any]:
        """JSON form: port number, state (``unknown`` if not read), state code, MTUs, GIDs."""
        return {
            "port": self.num,
            "state": self.state_name,
            "state_code": self.state_code,
            "max_mtu": self.max_mtu,
            "active_mtu": self.active_mtu,
            "link_layer": self.link_layer,
            "gid_tbl_len": self.gid_tbl_len,
            "gids": [g.to_dict() for g in self.gids],
            **({"phys_state": self.phys_state} if self.phys_state else {}),
        }


LIMIT_KEYS = ("max_qp", "max_qp_wr", "max_cq", "max_cqe", "max_mr", "max_pd")


@dataclass
class Device:
    """One verbs device. ``limits`` maps ``max_*`` keys to ints (only those reported);
    ``attrs`` keeps every other ``key: value`` line as text."""

    name: str
    transport: str = ""
    node_guid: str = ""
    sys_image_guid: str = ""
    vendor_id: str = ""
    vendor_part_id: str = ""
    hw_ver: str = ""
    fw_ver: str = ""
    phys_port_cnt: Optional[int] = None
    limits: Dict[str, int] = field(default_factory=dict)
    ports: List[Port] = field(default_factory=list)
    attrs: Dict[str, str] = field(default_factory=dict)

    @property
    def is_thunderbolt(self) -> bool:
        """Apple's Thunderbolt RDMA (transport ``Thunderbolt (100)``, link layer
        ``Thunderbolt``)."""
        return "thunderbolt" in self.transport.lower() or any(
            "thunderbolt" in p.link_layer.lower() for p in self.ports
        )

    def port(self, num: int) -> Optional[Port]:
        """The port numbered ``num`` (1-based, as verbs counts); None if absent."""
        return next((p for p in self.ports if p.num == num), None)

    def to_dict(self, full: bool = True) -> Dict[str, Any]:
        """JSON form of the device: name, transport, GUID, port count, the limits MLX's needs are
        checked against (max_qp, max_mr, ...) and its ports; ``full`` adds the identity fields
        (system image GUID, vendor and part ids, hardware and firmware versions)."""
        d: Dict[str, Any] = {
            "device": self.name,
            "transport": self.transport,
            "node_guid": self.node_guid,
            "phys_port_cnt": self.phys_port_cnt,
            "limits": {k: v for k, v in self.limits.items() if k in LIMIT_KEYS},
            "ports": [p.to_dict() for p in self.ports],
        }
        if full:
            d.update(
                sys_image_guid=self.sys_image_guid,
                vendor_id=self.vendor_id,
                vendor_part_id=self.vendor_part_id,
                hw_ver=self.hw_ver,
            )
            if self.fw_ver:
                d["fw_ver"] = self.fw_ver
        return d


@dataclass
class DevinfoReport:
    """What :func:`parse_ibv_devinfo` read: ``devices``; ``no_devices`` when the tool said
    ``No IB devices found``; ``no_subsystem`` when it could not get the device list at all;
    ``unparsed`` lines it could not read; ``warnings`` about incomplete blocks."""

    devices: List[Device] = field(default_factory=list)
    no_devices: bool = False
    no_subsystem: bool = False
    unparsed: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


_DEVICE_TEXT_KEYS = (
    "transport",
    "node_guid",
    "sys_image_guid",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "fw_ver",
)


def _device_key(dev: Device, key: str, value: str) -> None:
    if key in _DEVICE_TEXT_KEYS:
        setattr(dev, key, value_and_code(value)[0] if key == "transport" else value)
        if key == "transport":
            dev.attrs["transport_code"] = value
    elif key == "phys_port_cnt":
        dev.phys_port_cnt = to_int(value)
    elif key.startswith("max_") and to_int(value) is not None:
        dev.limits[key] = to_int(value)  # type: ignore[assignment]
    else:
        dev.attrs[key] = value


def _port_key(port: Port, key: str, value: str) -> None:
    name, code = value_and_code(value)
    if key == "state":
        port.state = name
        port.state_code = code
        if not name and code is not None:
            port.state = PORT_STATES.get(code, "")
    elif key in ("max_mtu", "active_mtu"):
        setattr(port, key, to_int(name) if to_int(name) is not None else MTU_BYTES.get(code or 0))
    elif key == "link_layer":
        port.link_layer = name
    elif key == "phys_state":
        port.phys_state = name or PHYS_STATES.get(code or 0, "")
    elif key == "gid_tbl_len":
        port.gid_tbl_len = to_int(name)


def parse_ibv_devinfo(text: str, stderr: str = "") -> DevinfoReport:
    """``ibv_devinfo [-v]`` output -> :class:`DevinfoReport`.

    Blocks start at ``hca_id:\\t<name>``; ``key:\\tvalue`` lines before the first ``port:`` line
    belong to the device, those after it to that port; ``GID[  i]:\\t<gid>[, <type>]`` lines add to
    the current port's table; indented flag names continuing a ``*_flags`` value are accepted.
    ``stderr`` is searched for ``No IB devices found`` and the no-subsystem message.
    """
    rep = DevinfoReport()
    dev: Optional[Device] = None
    port: Optional[Port] = None
    text = text if isinstance(text, str) else ""
    stderr = stderr if isinstance(stderr, str) else ""
    for line in (text + "\n" + stderr).splitlines():
        if not line.strip():
            continue
        if NO_DEVICES in line:
            rep.no_devices = True
            continue
        if NO_SUBSYSTEM in line:
            rep.no_subsystem = True
            continue
        m = _GID.match(line)
        if m:
            gid = normalize_gid(m.group(2))
            if port is None or gid is None:
                rep.unparsed.append(line)
            elif gid != "::":
                port.gids.append(Gid(int(m.group(1)), gid, (m.group(3) or "").strip()))
            continue
        m = _KV.match(line)
        if m:
            key, value = m.group(1).strip().replace(" ", "_"), m.group(2)
            if key == "hca_id":
                if not value:
                    rep.unparsed.append(line)
                    dev = port = None
                    continue
                dev = Device(value.split()[0])
                port = None
                rep.devices.append(dev)
            elif dev is None:
                rep.unparsed.append(line)
            elif key == "port":
                num = to_int(value)
                if num is None:
                    rep.unparsed.append(line)
                    port = None
                else:
                    port = Port(num)
                    dev.ports.append(port)
            elif port is not None:
                _port_key(port, key, value)
            else:
                _device_key(dev, key, value)
            continue
        if dev is not None and _FLAG.match(line):
            continue  # continuation of a flags value (device_cap_flags, port_cap_flags)
        rep.unparsed.append(line)
    for d in rep.devices:
        if d.phys_port_cnt is not None and len(d.ports) < d.phys_port_cnt:
            rep.warnings.append(
                f"{d.name}: phys_port_cnt is {d.phys_port_cnt} but "
                f"{len(d.ports)} port block(s) were read (output incomplete?)"
            )
        for p in d.ports:
            if not p.state_known:
                rep.warnings.append(f"{d.name} port {p.num}: no state line (output incomplete?)")
    return rep


@dataclass
class DeviceList:
    """What :func:`parse_ibv_devices` read: ``devices`` as ``(name, node_guid)`` in order;
    ``header`` is True when the ``device ... node GUID`` header was seen; ``unparsed`` lines."""

    devices: List[Tuple[str, str]] = field(default_factory=list)
    header: bool = False
    unparsed: List[str] = field(default_factory=list)

    @property
    def names(self) -> List[str]:
        """The device names, in listed order."""
        return [n for n, _ in self.devices]

    @property
    def header_only(self) -> bool:
        """The RDMA-disabled answer on macOS: the header and no rows (Apple's and rdma-core's tool output)."""
        return self.header and not self.devices


def parse_ibv_devices(text: str) -> DeviceList:
    """``ibv_devices`` output -> :class:`DeviceList`.

    Header ``    device          \\t   node GUID``, a dashes line, then one
    ``    <name>\\t<16 hex digits>`` row per device.
    """
    out = DeviceList()
    for line in (text if isinstance(text, str) else "").splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "device" and "GUID" in line:
            out.header = True
        elif all(set(p) <= {"-"} for p in parts):
            continue
        elif len(parts) == 2 and _HEX16.fullmatch(parts[1]):
            out.devices.append((parts[0], parts[1].lower()))
        else:
            out.unparsed.append(line)
    return out


def parse_rdma_ctl_status(text: str) -> Optional[bool]:
    """``rdma_ctl status`` -> True (``enabled``), False (``disabled``), None (unreadable)."""
    words = re.findall(r"[a-z]+", (text if isinstance(text, str) else "").lower())
    if "disabled" in words:
        return False
    if "enabled" in words:
        return True
    return None
