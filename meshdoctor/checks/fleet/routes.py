"""MD413 fleet routes: the interface each host really sends the hostfile's peer addresses
through (``route -n get IP`` on macOS, ``ip route get IP`` on Linux: the ``routes`` facts, for
the addresses its ranks send to: the ring's right neighbour, JACCL's coordinator, else every
peer; :func:`meshdoctor.facts.routes.peer_addresses`).

* An address reached through a VPN (a ``utun``, WireGuard ``wg``, ``tailscale``, ``tun``,
  ``ipsec``, ``ppp`` or ZeroTier ``zt`` interface), or inside Tailscale's range 100.64.0.0/10
  (RFC 6598 shared address space, which Tailscale assigns), fails: the traffic leaves the cable
  for the tunnel (exo #1723: reconnects over Tailscale, 24 -> 2.5 tok/s).
* On a Mac, an address that lives on one of the peer's Thunderbolt interfaces (its Thunderbolt
  ports as system_profiler and networksetup name them, or the Thunderbolt Bridge ``bridge0``)
  but is reached through an interface that is not a Thunderbolt one here warns, naming it.
* A ring hostfile between Macs that are cabled with Thunderbolt, whose addresses are reached
  through another interface (a LAN, Wi-Fi), warns too (exo #2295: ring hostfile on the LAN
  although Thunderbolt exists): the ring's data goes over those addresses.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Dict, List, Set

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import Finding, fail, ok, warn
from meshdoctor.checker.fleet_model import FleetView, FleetCheck, HostView, on

VPN_PREFIXES = ("utun", "wg", "tailscale", "tun", "ipsec", "ppp", "zt")
TAILSCALE = ipaddress.ip_network("100.64.0.0/10")
BRIDGE = "bridge0"  # the Thunderbolt Bridge (networksetup "Thunderbolt Bridge")


def is_vpn(iface: str) -> bool:
    """True for a tunnel interface name (:data:`VPN_PREFIXES`)."""
    return iface.lower().startswith(VPN_PREFIXES)


def in_vpn_range(ip: str) -> bool:
    """True for an address inside 100.64.0.0/10 (Tailscale's addresses)."""
    try:
        return ipaddress.ip_address(ip) in TAILSCALE
    except ValueError:
        return False


def thunderbolt_interfaces(hv: HostView) -> Set[str]:
    """This host's Thunderbolt interfaces: each Thunderbolt port's ``en*`` and ``bridge0``."""
    tb = hv.facts.get("thunderbolt") or {}
    found = {p.get("interface") for p in tb.get("ports") or [] if p.get("interface")}
    return {str(x) for x in found} | ({BRIDGE} if found else set())


def _cabled(hv: HostView) -> bool:
    tb = hv.facts.get("thunderbolt") or {}
    return any(p.get("connected") for p in tb.get("ports") or [])


def thunderbolt_addresses(hv: HostView) -> Set[str]:
    """The IPv4 addresses on this host's Thunderbolt interfaces."""
    tb = hv.facts.get("thunderbolt") or {}
    ifaces = thunderbolt_interfaces(hv)
    return {
        str(a.get("ip"))
        for name, addrs in (tb.get("interfaces") or {}).items()
        if name in ifaces
        for a in addrs or []
        if a.get("ip")
    }


def _label(iface: str, names: Dict[str, str]) -> str:
    return f"{iface} ({names[iface]})" if names.get(iface) else iface


def run(view: FleetView):
    hosts = [hv for hv in view.reachable() if hv.facts.get("routes")]
    if not hosts:
        return ok("no host reported its routes to the peers")
    by_name = {hv.host: hv for hv in view.reachable()}
    ring = view.backend == "ring"
    found: List[Finding] = []
    paths: List[str] = []
    for hv in hosts:
        routes = hv.facts["routes"]
        names = routes.get("names") or {}
        mine = thunderbolt_interfaces(hv)
        for ip, r in (routes.get("peers") or {}).items():
            peer = str(r.get("host") or "?")
            iface = r.get("interface")
            if not iface:
                continue
            shown = _label(str(iface), names)
            paths.append(f"{hv.host}->{peer} {ip} via {iface}")
            ev: Dict[str, Any] = {"host": hv.host, "peer": peer, "ip": ip, "interface": iface}
            if is_vpn(str(iface)) or in_vpn_range(ip):
                why = (
                    f"through {shown}, a VPN tunnel"
                    if is_vpn(str(iface))
                    else f"inside Tailscale's range {TAILSCALE} (through {shown})"
                )
                found.append(
                    on(
                        [hv.host, peer] if peer in by_name else hv.host,
                        fail(
                            f"{hv.host} reaches {peer}'s {ip} {why}: the mesh's traffic "
                            "leaves the cable for the VPN",
                            evidence=ev,
                            remediation="Use the Thunderbolt addresses in the hostfile and "
                            "keep the VPN from routing them (exclude those subnets, or stop "
                            f"the VPN on {hv.host} while the mesh runs).",
                        ),
                    )
                )
                continue
            if not mine or str(iface) in mine:
                continue
            other = by_name.get(peer)
            on_cable = other is not None and ip in thunderbolt_addresses(other)
            ring_beside_cable = ring and other is not None and _cabled(hv) and _cabled(other)
            if on_cable or ring_beside_cable:
                what = (
                    f"{peer}'s Thunderbolt address {ip}"
                    if on_cable
                    else f"{peer}'s ring address {ip} (Thunderbolt cables connect these Macs)"
                )
                found.append(
                    on(
                        [hv.host, peer],
                        warn(
                            f"{hv.host} reaches {what} through {shown}, not a Thunderbolt cable",
                            evidence=ev,
                            remediation="Write the addresses of the Thunderbolt interfaces "
                            "in the hostfile (`mlx.distributed_config --auto-setup` assigns "
                            "one subnet per cable) and check that no other interface claims "
                            "that subnet.",
                        ),
                    )
                )
    if found:
        return found
    return ok(
        f"{len(paths)} peer address(es) routed as the hostfile means: "
        + ", ".join(paths[:12])
        + (" ..." if len(paths) > 12 else ""),
        evidence={"paths": paths},
    )


FLEET_CHECK = FleetCheck(
    code="MD413",
    name="fleet.routes",
    title="Traffic path",
    area="addressing",
    run=run,
    doc=Doc(
        meaning="""
Each host is asked which interface it sends the peer addresses of the hostfile through
(`route -n get IP` on macOS, `ip route get IP` on Linux): for the ring its right neighbour's
addresses, for JACCL the coordinator's (rank 0's first IP), for other backends every peer's. An address reached through a VPN
(utun, WireGuard, Tailscale, ZeroTier) or inside Tailscale's range 100.64.0.0/10 fails. On Macs,
an address on the peer's Thunderbolt interface reached through another interface here, or a
ring hostfile on a LAN between Macs cabled with Thunderbolt, warns, naming the interface and its
hardware port.
""",
        why="""
A ring or JACCL side channel over Wi-Fi, a LAN or a VPN instead of the Thunderbolt cable costs
about 10x: exo #1723 (reconnects over Tailscale, 24 -> 2.5 tok/s), exo #2295 (a ring hostfile on
the LAN although Thunderbolt exists).
""",
        action="""
Write the Thunderbolt interfaces' addresses in the hostfile (`mlx.distributed_config
--auto-setup` gives each cable its own subnet), and keep VPNs from routing the mesh's subnets.
""",
        sources=(
            "exo #1723 (JACCL reconnects over Tailscale)",
            "exo #2295 (ring hostfile on the LAN although Thunderbolt exists)",
            "route(8) (macOS route get), ip-route(8) (iproute2 ip route get)",
            "RFC 6598 (100.64.0.0/10, the range Tailscale assigns)",
        ),
    ),
)
