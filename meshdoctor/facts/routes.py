"""Which interface this host sends each peer address of the hostfile through: ``route -n get IP``
on macOS, ``ip route get IP`` on Linux (:mod:`meshdoctor.parsers.routes`), every address at
once under one deadline.

Shape (the node facts' ``routes``)::

    {"peers": {"192.168.100.2": {"host": "m1", "interface": "en2", "gateway": null},
               "10.0.0.9": {"host": "m2", "error": "`route -n get 10.0.0.9` exited 1: ..."}},
     "names": {"en0": "Ethernet", "en2": "Thunderbolt 1", "bridge0": "Thunderbolt Bridge"}}

``names``: networksetup's hardware port of each interface (macOS), to name what a route uses.
A ring over Wi-Fi, a LAN or a VPN instead of the Thunderbolt cable costs about 10x (exo #1723:
reconnects over Tailscale, 24 -> 2.5 tok/s; exo #2295: ring hostfile on the LAN although
Thunderbolt exists).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.facts.context import NodeContext
from meshdoctor.parsers.routes import parse_ip_route_get, parse_route_get

MAX_PEERS = 32  # addresses asked about at most (a hostfile of 32 hosts with one IP each)


def peer_addresses(ctx: NodeContext) -> List[Tuple[str, str]]:
    """``(ip, ssh name)`` of the addresses this machine's ranks send to, each once (at most
    :data:`MAX_PEERS`): for the ring, each rank's right neighbour's addresses (a ring rank
    connects to its right neighbour, mlx 0.32.4 ``ring.cpp``); for JACCL, rank 0's first address
    (the coordinator, ``MLX_JACCL_COORDINATOR``) from ranks other than 0; for any other backend,
    every other entry's addresses. Only IP addresses (an address MD401 refuses, ``999.1.1.1``,
    is never looked up)."""
    from meshdoctor.mlx.backends import JACCL_BACKENDS

    hf = ctx.hostfile
    if hf is None or hf.world_size < 2:
        return []
    mine = set(ctx.ranks)
    backend = hf.effective_backend
    if backend == "ring":
        targets = [hf.hosts[(r + 1) % hf.world_size] for r in sorted(mine)]
        pairs = [(ip, h.ssh) for h in targets if h.rank not in mine for ip in h.addresses()]
    elif backend in JACCL_BACKENDS:
        first = hf.hosts[0]
        ok = first.ips and first.addresses()[:1] == [first.ips[0]]
        pairs = [(first.ips[0], first.ssh)] if ok and 0 not in mine and mine else []
    else:
        pairs = [(ip, h.ssh) for h in hf.hosts if h.rank not in mine for ip in h.addresses()]
    return list(dict(pairs).items())[:MAX_PEERS]


def _one(ctx: NodeContext, ip: str) -> Dict[str, Any]:
    argv = ("route", "-n", "get", ip) if ctx.is_mac else ("ip", "route", "get", ip)
    res = ctx.command(*argv)
    if not res.ok:
        return {"error": res.describe()}
    got = parse_route_get(res.stdout) if ctx.is_mac else parse_ip_route_get(res.stdout)
    if not got.get("interface"):
        return {"error": f"`{' '.join(argv)}` named no interface"}
    return {"interface": got["interface"], "gateway": got.get("gateway")}


def _names(ctx: NodeContext) -> Dict[str, str]:
    if not ctx.is_mac:
        return {}
    from meshdoctor.facts.thunderbolt import gather_thunderbolt

    inv = ctx.fact(gather_thunderbolt)
    return {dev: name for name, dev in inv.hardware_ports.items() if dev}


def route_facts(ctx: NodeContext) -> Optional[Dict[str, Any]]:
    """The ``routes`` facts (module doc); None without a hostfile or peer address."""
    from meshdoctor.deadline import outcomes

    peers = peer_addresses(ctx)
    if not peers:
        return None
    got = outcomes(
        {ip: (lambda ip=ip: _one(ctx, ip)) for ip, _ in peers},
        ctx.command_timeout + 1.0,
        name="routes",
    )
    out: Dict[str, Any] = {}
    for ip, host in peers:
        o = got[ip]
        if o.finished and o.error is None:
            out[ip] = {"host": host, **o.value}
        else:
            why = repr(o.error) if o.error else "no answer in time"
            out[ip] = {"host": host, "error": why}
    try:
        names = _names(ctx)
    except Exception:  # the hardware port names only label the interfaces
        names = {}
    return {"peers": out, "names": names}
