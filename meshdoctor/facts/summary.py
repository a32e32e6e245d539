"""The facts one node reports so that cross-node (fleet) checks can compare hosts.

``meshdoctor check --local-only --json --facts`` puts :func:`node_facts` under the host's
``facts`` in the verdict; the fleet mode reads them from every host. Every piece is gathered
through the node context's cached, deadline-bound facts (the same ones the node checks use), so a
hung tool costs one command deadline and shows up as that piece's entry in ``errors``.

Shape (every key optional; a piece that could not be read is named in ``errors``)::

    {"meshdoctor": "0.1.0",
     "platform": {"os": "darwin", "os_version": "26.3.1", "build": "25D2128", "python": "3.12.3",
                  "chip": "Apple M4 Pro"},
     "mlx": {"installed": true, "version": "0.32.1", "jaccl_guard": false, "backends": {...}},
     "rdma": {"state": "ok", "devices": {"rdma_en2": {"state": "PORT_ACTIVE", "active": true,
                                                    "ports": {"1": "PORT_ACTIVE"}}}},
     "thunderbolt": {"readable": true, "ports": [{"receptacle": 1, "domain_uuid": "...",
                     "interface": "en2", "device": "rdma_en2", "connected": true,
                     "peers": ["<peer port domain UUID>", ...]}]},
     "interfaces": {"en2": [{"ip": "192.168.7.1", "prefixlen": 30}]},
     "env": {"MLX_METAL_FAST_SYNCH": "1"},
     "power": {"sleep": 0, "disksleep": 0, "powernap": 0},
     "ports": {"needed": [PORT], "busy": {"PORT": "python3 (pid 4242)"}},
     "reach": {"rank": 2, "targets": {"10.0.0.3:32325": "refused"}},
     "coordinator": {"rank": 0, "host": "m1", "from_rank": 1, "target": "10.0.0.1:32323",
                     "outcome": "refused"},
     "routes": {"peers": {"10.0.0.2": {"host": "m2", "interface": "en2", "gateway": null}},
                "names": {"en2": "Thunderbolt 1"}}}

Ports (:mod:`meshdoctor.mlx.ports`): mlx.launch (``launch.py``, mlx 0.32.4) listens on
``--starting-port`` (``PORT`` above, default :data:`~meshdoctor.mlx.ports.STARTING_PORT`) as the
JACCL coordinator on rank 0, and for the ring backend gives every IP of every rank its own port,
counting up from the same starting port. A ring rank connects to its right neighbour, so
each rank's addresses must be reachable from its left neighbour: the left neighbour tries a TCP
connection to each of them (refused = the host answered, so it is reachable). For JACCL every
rank connects to the coordinator, rank 0's first IP at the starting port
(``MLX_JACCL_COORDINATOR``, mlx 0.32.4 ``launch.py``): each host of a rank other than 0 tries a
TCP connection to it the same way (``coordinator``).
"""

from __future__ import annotations

import os
import platform as _platform
import socket
from typing import Any, Dict, Iterable, List, Optional

from meshdoctor import __version__
from meshdoctor.facts.context import NodeContext
from meshdoctor.hostfile.types import is_ip_address
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.mlx.ports import STARTING_PORT
from meshdoctor.mlx.ports import ring_ports as launch_ring_ports
from meshdoctor.parsers.macos import parse_sw_vers

REACH_TIMEOUT_S = 1.0
ENV_PREFIXES = ("MLX_", "JACCL_")


def ring_ports(hf, rank: int, start: int = STARTING_PORT) -> List[int]:
    """The ring ports mlx.launch gives rank ``rank``: one per IP, counting up from ``start`` over
    the IPs of every rank in order (:func:`meshdoctor.mlx.ports.ring_ports`)."""
    return launch_ring_ports(hf.hosts, start)[rank]


def needed_ports(hf, ranks: Iterable[int], start: int = STARTING_PORT) -> List[int]:
    """TCP ports that must be free on the host of ``ranks`` before a launch, sorted: the
    coordinator port on rank 0 for JACCL, the ranks' ring ports for ring. One pass over the
    hostfile, however many ranks the host has."""
    backend = hf.effective_backend
    want = set(ranks)
    if backend in JACCL_BACKENDS:
        return [start] if 0 in want else []
    if backend != "ring":
        return []
    layout = launch_ring_ports(hf.hosts, start)
    return sorted({p for h, mine in zip(hf.hosts, layout) if h.rank in want for p in mine})


def _platform_facts(ctx: NodeContext) -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "os": ctx.platform,
        "arch": _platform.machine(),
        "python": _platform.python_version(),
    }
    if ctx.is_mac:
        res = ctx.command("sw_vers")
        if res.ok:
            sv = parse_sw_vers(res.stdout)
            info.update(os_version=sv.get("ProductVersion", ""), build=sv.get("BuildVersion", ""))
        else:
            info["error"] = res.describe()
        chip = ctx.command("sysctl", "-n", "machdep.cpu.brand_string")
        if chip.ok and chip.stdout.strip():
            info["chip"] = chip.stdout.strip()  # e.g. "Apple M5 Max"
    else:
        info["os_version"] = _platform.release()
    return info


def _mlx_facts(ctx: NodeContext) -> Dict[str, Any]:
    from meshdoctor.facts.mlx_build import gather_mlx

    info = ctx.fact(gather_mlx)
    keys = (
        "probe",
        "installed",
        "version",
        "version_tuple",
        "jaccl_guard",
        "backends",
        "python",
        "executable",
        "detail",
    )
    return {k: info[k] for k in keys if k in info}


def _rdma_facts(ctx: NodeContext) -> Dict[str, Any]:
    from meshdoctor.facts.verbs import gather_verbs

    inv = ctx.fact(gather_verbs)
    devices: Dict[str, Any] = {}
    for d in inv.devices:
        # the state shown is the one "active" is read from: the active port's when one is
        # (a device whose port 1 is down and port 2 active is PORT_ACTIVE), else the first read
        active = [p for p in d.ports if p.active]
        read = active or [p for p in d.ports if p.state_known]
        devices[d.name] = {
            "state": read[0].state_name if read else "unknown",
            "active": bool(active),
            "ports": {str(p.num): p.state_name for p in d.ports},
        }
    for name in inv.listed or []:
        devices.setdefault(name, {"state": "unknown", "active": False})
    return {"state": inv.state.lower(), "detail": inv.detail, "devices": devices}


def _thunderbolt_facts(ctx: NodeContext) -> Dict[str, Any]:
    from meshdoctor.facts.thunderbolt import gather_thunderbolt

    inv = ctx.fact(gather_thunderbolt)
    ports = []
    for p in inv.ports:
        iface = inv.hardware_ports.get(p.hardware_port) if p.hardware_port else None
        ports.append(
            {
                "receptacle": p.receptacle,
                "domain_uuid": p.domain_uuid,
                "interface": iface,
                "device": f"rdma_{iface}" if iface else None,
                "connected": p.connected,
                "speed_gbps": p.speed_gbps,
                "peers": [x.domain_uuid for x in p.peers if x.domain_uuid],
            }
        )
    interfaces = {
        name: [
            {"ip": ip, "prefixlen": (i.prefixlen[k] if k < len(i.prefixlen) else None)}
            for k, ip in enumerate(i.inet)
        ]
        for name, i in inv.interfaces.items()
        if i.inet
    }
    return {
        "readable": inv.readable,
        "sources": inv.sources,
        "ports": ports,
        "interfaces": interfaces,
    }


def _bind_test(wanted: List[int]) -> Dict[str, str]:
    """Ports of ``wanted`` that cannot be bound here (what the rank would do), without naming
    the holder: the fallback when the socket table is not readable (macOS without root)."""
    busy: Dict[str, str] = {}
    for port in wanted:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("0.0.0.0", port))
            except OSError as exc:
                busy[str(port)] = f"another process ({exc.strerror or exc})"
    return busy


def _busy_ports(wanted: List[int]) -> Dict[str, str]:
    """Which of ``wanted`` TCP ports something listens on here, as port -> "name (pid N)"."""
    from meshdoctor.proctable import psutil

    if not wanted:
        return {}
    busy: Dict[str, str] = {}
    try:
        conns = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:  # macOS lists other users' sockets to root only
        return _bind_test(wanted)
    for c in conns:
        if c.status != psutil.CONN_LISTEN or not c.laddr or c.laddr.port not in wanted:
            continue
        who = "unknown process"
        if c.pid:
            try:
                who = f"{psutil.Process(c.pid).name()} (pid {c.pid})"
            except psutil.Error:
                who = f"pid {c.pid}"
        busy[str(c.laddr.port)] = who
    return busy


def _connect(ip: str, port: int, timeout: float) -> str:
    """``open``, ``refused`` (the host answered), ``timeout`` or ``unreachable: <why>``."""
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return "open"
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as exc:
        return f"unreachable: {exc.strerror or exc}"


def _reach_facts(ctx: NodeContext) -> Optional[Dict[str, Any]]:
    """For the ring backend: this rank tries its right neighbour's addresses (side by side,
    under one deadline: :func:`meshdoctor.deadline.outcomes`)."""
    from meshdoctor.deadline import outcomes

    hf = ctx.hostfile
    if hf is None or not ctx.ranks or hf.effective_backend != "ring" or hf.world_size < 2:
        return None
    right = (ctx.ranks[0] + 1) % hf.world_size
    targets = [
        (ip, port)
        for ip, port in zip(hf.hosts[right].ips, ring_ports(hf, right))
        if is_ip_address(ip)  # one MD401 refuses is never looked up nor connected to
    ]
    each = min(REACH_TIMEOUT_S, ctx.command_timeout)
    got = outcomes(
        {
            f"{ip}:{port}": (lambda ip=ip, port=port: _connect(ip, port, each))
            for ip, port in targets
        },
        REACH_TIMEOUT_S + 1,
        name="reach",
    )
    return {
        "rank": right,
        "host": hf.hosts[right].ssh,
        "targets": {
            t: o.value if o.finished and o.error is None else "timeout" for t, o in got.items()
        },
    }


def _coordinator_facts(ctx: NodeContext) -> Optional[Dict[str, Any]]:
    """For JACCL: this host's first rank other than 0 tries the coordinator, rank 0's first IP
    at :data:`~meshdoctor.mlx.ports.STARTING_PORT` (mlx 0.32.4 ``launch.py``:
    ``MLX_JACCL_COORDINATOR={hosts[0].ips[0]}:{starting_port}``). None for another backend,
    without a hostfile, on rank 0's host alone or when rank 0 lists no IP."""
    hf = ctx.hostfile
    if hf is None or hf.effective_backend not in JACCL_BACKENDS or hf.world_size < 2:
        return None
    others = [r for r in ctx.ranks if r != 0]
    if not others or not hf.hosts[0].ips or not is_ip_address(hf.hosts[0].ips[0]):
        return None  # an address MD401 refuses is never looked up nor connected to
    ip = hf.hosts[0].ips[0]
    each = min(REACH_TIMEOUT_S, ctx.command_timeout)
    return {
        "rank": 0,
        "host": hf.hosts[0].ssh,
        "from_rank": others[0],
        "target": f"{ip}:{STARTING_PORT}",
        "outcome": _connect(ip, STARTING_PORT, each),
    }


def _route_facts(ctx: NodeContext) -> Optional[Dict[str, Any]]:
    """How this host routes to every peer address (:mod:`meshdoctor.facts.routes`)."""
    from meshdoctor.facts.routes import route_facts

    return route_facts(ctx)


def _power_facts(ctx: NodeContext) -> Dict[str, Any]:
    """``pmset -g``'s sleep settings on a Mac (:func:`meshdoctor.facts.power.power_summary`)."""
    from meshdoctor.facts.power import power_summary

    return power_summary(ctx)


def node_facts(ctx: NodeContext) -> Dict[str, Any]:
    """Everything the cross-node checks read about this node (see the module docstring).

    Never raises: a piece that fails is left out and named in ``errors`` (piece -> message)."""
    facts: Dict[str, Any] = {
        "meshdoctor": __version__,
        "env": {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)},
    }
    errors: Dict[str, str] = {}
    pieces: List[tuple] = [("platform", _platform_facts), ("mlx", _mlx_facts)]
    if ctx.is_mac:
        pieces += [("rdma", _rdma_facts), ("thunderbolt", _thunderbolt_facts)]
        pieces.append(("power", _power_facts))
    pieces += [("reach", _reach_facts), ("coordinator", _coordinator_facts)]
    pieces.append(("routes", _route_facts))
    for name, fn in pieces:
        try:
            got = fn(ctx)
        except Exception as exc:  # a fact that cannot be read is named, never fatal
            errors[name] = f"{type(exc).__name__}: {exc}"
            continue
        if got is not None:
            facts[name] = got
    if ctx.hostfile is not None and ctx.ranks:
        wanted = needed_ports(ctx.hostfile, ctx.ranks)
        try:
            facts["ports"] = {"needed": wanted, "busy": _busy_ports(wanted)}
        except Exception as exc:  # psutil may be denied the socket table
            errors["ports"] = f"{type(exc).__name__}: {exc}"
    if errors:
        facts["errors"] = errors
    return facts
