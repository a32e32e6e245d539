"""MD406 fleet addressing: IPv4 on both ends of each Thunderbolt edge, on one subnet; ring
addresses reachable from the left neighbour; the JACCL coordinator reachable from every rank.

JACCL needs an IPv4 address on each Thunderbolt interface (without one the port publishes only
fe80:: GIDs: RTR errno 22 up to mlx 0.32.0, ``No IPv4-mapped GID`` from 0.32.1);
``mlx.distributed_config --auto-setup`` gives each cable its own /30 (netmask
255.255.255.252), so both ends of a cable sit on one subnet. The ring backend connects each rank
to its right neighbour's ``ip:port`` (mlx ``launch.py``), so every rank's addresses must be
reachable from its left neighbour: the neighbour tries a TCP connection (a refusal means the
host answered). Every JACCL rank connects to the coordinator, rank 0's first IP at the starting
port (``MLX_JACCL_COORDINATOR``, mlx ``launch.py``): each other host tries it the same way.
"""

from __future__ import annotations

import ipaddress
from typing import List

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, skip
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.backends import JACCL_BACKENDS

IP_REMEDY = (
    "Give every Thunderbolt interface an IPv4 address, one /30 per cable: run "
    "`mlx.distributed_config --auto-setup` once after the whole fleet is up (the "
    "settings do not survive a reboot)."
)


def _addrs(view: FleetView, host: str, dev: str) -> List[ipaddress.IPv4Interface]:
    iface = dev[len("rdma_") :] if dev.startswith("rdma_") else dev
    tb = view.hosts[host].facts.get("thunderbolt") or {}
    out = []
    for a in (tb.get("interfaces") or {}).get(iface, []):
        try:
            out.append(ipaddress.IPv4Interface(f"{a['ip']}/{a.get('prefixlen') or 32}"))
        except ValueError:
            continue
    return out


def _jaccl(view: FleetView):
    names = view.names()
    found, checked = [], 0
    for i, j, a, b in view.edges():
        hi, hj = names[i], names[j]
        if not (view.hosts[hi].reachable and view.hosts[hj].reachable):
            continue
        if "thunderbolt" not in view.hosts[hi].facts or "thunderbolt" not in view.hosts[hj].facts:
            continue
        for k in range(min(len(a), len(b))):
            checked += 1
            x, y = _addrs(view, hi, a[k]), _addrs(view, hj, b[k])
            ev = {
                "edge": [hi, hj],
                "devices": [a[k], b[k]],
                "addresses": {hi: [str(v) for v in x], hj: [str(v) for v in y]},
            }
            missing = [
                f"{h} {d[5:] if d.startswith('rdma_') else d}"
                for h, d, v in ((hi, a[k], x), (hj, b[k], y))
                if not v
            ]
            if missing:
                found.append(
                    on(
                        [hi, hj],
                        fail(
                            f"edge {hi}-{hj}: no IPv4 address on {' and '.join(missing)}; JACCL then "
                            "finds no IPv4-mapped GID on that port",
                            evidence=ev,
                            remediation=IP_REMEDY,
                        ),
                    )
                )
                continue
            if not any(p.ip in q.network or q.ip in p.network for p in x for q in y):
                found.append(
                    on(
                        [hi, hj],
                        fail(
                            f"edge {hi}-{hj}: {hi} {a[k][5:]} {', '.join(map(str, x))} and {hj} "
                            f"{b[k][5:]} {', '.join(map(str, y))} are not on one subnet",
                            evidence=ev,
                            remediation=IP_REMEDY,
                        ),
                    )
                )
    return found, checked


def _coordinator(view: FleetView):
    """Every host's try of the JACCL coordinator (its ``coordinator`` fact)."""
    found, checked = [], 0
    for name, hv in view.hosts.items():
        co = hv.facts.get("coordinator") if hv.reachable else None
        if not co:
            continue
        checked += 1
        how = co.get("outcome")
        if how in ("refused", "open"):
            continue
        target, rank = co.get("target"), co.get("from_rank")
        boss = view.names()[0]
        found.append(
            on(
                [name, boss],
                fail(
                    f"the JACCL coordinator {target} (rank 0's first IP) is not reachable from "
                    f"rank {rank} on {name}: {how}",
                    evidence={"rank": rank, "target": target, "from": name, "outcome": how},
                    remediation=f'Put first in rank 0\'s "ips" an address of {boss} that every '
                    "host can reach (every rank connects to it); check routes and firewalls.",
                ),
            )
        )
    return found, checked


def _ring(view: FleetView):
    found, checked = [], 0
    n = view.hostfile.world_size
    for r in range(n):
        left = view.of_rank((r - 1) % n)
        if not left.reachable:
            continue
        reach = left.facts.get("reach") or {}
        if reach.get("rank") != r:
            continue
        me = view.names()[r]
        for target, how in (reach.get("targets") or {}).items():
            checked += 1
            if how in ("refused", "open"):
                continue
            found.append(
                on(
                    [me, left.host],
                    fail(
                        f"{me}'s ring address {target} is not reachable from its left neighbour "
                        f"{left.host}: {how}",
                        evidence={"rank": r, "target": target, "from": left.host, "outcome": how},
                        remediation=f"Use an address of {me} that {left.host} can reach (a route or an "
                        'interface on the same network) in the hostfile\'s "ips"; check '
                        "firewalls between the two hosts.",
                    ),
                )
            )
    return found, checked


def run(view: FleetView):
    if view.backend in JACCL_BACKENDS:
        found, checked = _jaccl(view)
        co_found, co_checked = _coordinator(view)
        found += co_found
        what = "Thunderbolt cable(s) have IPv4 on one subnet at both ends"
        if co_checked:
            what += f"; the coordinator is reachable from {co_checked} host(s)"
            checked += co_checked
    elif view.backend == "ring":
        found, checked = _ring(view)
        what = "ring address(es) reachable from the left neighbour"
    else:
        return skip(f"nothing to check for the {view.backend} backend")
    if found:
        return found
    if not checked:
        return skip("no addresses to check (hosts not reached, or not macOS)")
    return ok(f"{checked} {what}")


FLEET_CHECK = FleetCheck(
    code="MD406",
    name="fleet.addressing",
    title="Addresses",
    area="addressing",
    run=run,
    doc=Doc(
        meaning="""
jaccl/jaccl-ring: both ends of each Thunderbolt cable need an IPv4 address, on one subnet
(mlx.distributed_config --auto-setup gives each cable its own /30). ring: each rank's addresses
must be reachable from its left neighbour, which connects to them; the neighbour tries a TCP
connection (refused = reachable). jaccl/jaccl-ring: every other host tries the coordinator,
rank 0's first IP at the starting port, the same way.
""",
        why="""
A missing address means no IPv4-mapped GID (RTR errno 22, or "No IPv4-mapped GID" from
mlx 0.32.1). The ring backend connects each rank to its right neighbour's ip:port, so an
address its left neighbour cannot reach fails the launch; every JACCL rank connects to the
coordinator (MLX_JACCL_COORDINATOR), so an address only rank 0 can use fails it too.
""",
        action="""
Run `mlx.distributed_config --auto-setup` once after every full-fleet boot; fix the hostfile's
"ips" or the routes between neighbours.
""",
        sources=(
            'MLX v0.32.1 ("No IPv4-mapped GID"; RTR errno 22 up to 0.32.0)',
            "MLX mlx.distributed_config --auto-setup (a /30 per cable)",
            "MLX mlx.launch (mlx/_distributed_utils/launch.py: ring connects to the right "
            "neighbour's ip:port)",
        ),
    ),
)
