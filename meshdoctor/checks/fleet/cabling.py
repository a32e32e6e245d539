"""MD405 fleet cabling: each Thunderbolt cable goes where the hostfile says, cable k to cable k.

``system_profiler SPThunderboltDataType -json`` on each Mac lists, per host port, the domain UUID
of the Mac port at the other end, and that UUID is the peer port's own ``domain_uuid_key`` (the
two ends are reciprocal). So for each edge i-j and cable k, the port of host i behind its k-th
device towards j must see the port of host j behind j's k-th device towards i. Otherwise the
cable goes to another host than the hostfile says, or, with several cables between two Macs,
cable k is not the same physical cable on both ends (crossed rails), which can deadlock JACCL
init (exo PR #2160).

Both JACCL backends use several cables between two Macs: jaccl-ring in every version, the mesh
from MLX 0.32.4 (MLX PR #4607, one wire per cable listed). The two cells of an edge must list
the same number of cables; how MLX treats cells of unequal length is not stated in its headers
("unknown"), so a mismatch warns from the hostfile alone, before any port is read.
"""

from __future__ import annotations

from typing import Dict, Tuple

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, skip, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.backends import JACCL_BACKENDS

REMEDY = (
    "Re-cable so each port goes where the hostfile says, or regenerate the hostfile from "
    "the cabling as it is (`mlx.distributed_config --auto-setup` after a full-fleet reboot "
    "writes it from what each Mac sees)."
)
CROSSED_REMEDY = (
    "Swap the two cables on one of the Macs (or swap the device order in one of "
    "the two hostfile cells) so that cable k is the k-th device on both ends; "
    "crossed rails can deadlock JACCL init (exo PR #2160)."
)


UNEQUAL = (
    "how MLX treats the two cells of an edge listing different numbers of cables is unknown "
    "(not stated in its headers; from 0.32.4 the mesh opens one wire per cable listed, MLX PR "
    "#4607)"
)
UNEQUAL_REMEDY = (
    "List the same cables, in the same order, in both cells of the edge (cable k is the k-th "
    "device on both ends), or regenerate the hostfile with `mlx.distributed_config`."
)


def unequal_edges(view: FleetView) -> list:
    """Warnings for the edges whose two cells list different numbers of cables: each names the
    two hosts and the counts; tagged with both hosts."""
    names = view.names()
    out = []
    for i, j, a, b in view.edges():
        if a and b and len(a) != len(b):
            hi, hj = names[i], names[j]
            f = warn(
                f"{hi} lists {len(a)} cable(s) to {hj} ({', '.join(a)}) but {hj} lists "
                f"{len(b)} back ({', '.join(b)}): {UNEQUAL}",
                evidence={"hosts": [hi, hj], "cables": {hi: a, hj: b}},
                remediation=UNEQUAL_REMEDY,
            )
            out.append(on([hi, hj], f))
    return out


def run(view: FleetView):
    if view.backend not in JACCL_BACKENDS:
        return skip(f"no Thunderbolt edges: the backend is {view.backend}")
    unequal = unequal_edges(view)
    found = run_ports(view)
    if not unequal:
        return found
    found = found if isinstance(found, list) else [found]
    return unequal + [f for f in found if f.status not in ("ok", "skip")]


def run_ports(view: FleetView):
    """The port-by-port comparison (``run`` adds the cable-count warnings)."""
    names = view.names()
    owner: Dict[str, Tuple[str, dict]] = {}
    for hv in view.reachable():
        for p in (hv.facts.get("thunderbolt") or {}).get("ports") or []:
            if p.get("domain_uuid"):
                owner[p["domain_uuid"]] = (hv.host, p)
    if not owner:
        return skip(
            "no host reported its Thunderbolt ports (not macOS, or system_profiler "
            "unreadable: see MD205)"
        )
    found = []
    checked = 0
    seen = set()
    for i, j, a, b in view.edges():
        for x, y, mine, theirs in ((i, j, a, b), (j, i, b, a)):
            hx, hy = names[x], names[y]
            if not (view.hosts[hx].reachable and view.hosts[hy].reachable):
                continue
            for k, dev in enumerate(mine):
                want = theirs[k] if k < len(theirs) else None
                port = view.tb_port(hx, dev)
                if port is None or want is None:
                    continue
                other = view.tb_port(hy, want)
                checked += 1
                peers = port.get("peers") or []
                if other is not None and other.get("domain_uuid") in peers:
                    continue
                ends = [owner[u] for u in peers if u in owner]
                label = f"cable {k + 1} of {hx}-{hy}" if len(mine) > 1 else f"cable {hx}-{hy}"
                if not peers:
                    msg = (
                        f"{label}: {hx} {dev} (Thunderbolt {port.get('receptacle')}) has no "
                        f"Mac at the other end; the hostfile says {hy} {want}"
                    )
                    f = fail(msg, remediation=REMEDY)
                elif not ends:
                    msg = (
                        f"{label}: {hx} {dev} goes to a Mac that is not in the hostfile "
                        f"(peer port {peers[0]}); the hostfile says {hy} {want}"
                    )
                    f = fail(msg, remediation=REMEDY)
                elif ends[0][0] == hy:
                    got = ends[0][1].get("device")
                    if got in theirs:
                        key = ("crossed", min(hx, hy), max(hx, hy))
                        if key in seen:
                            continue
                        seen.add(key)
                        msg = (
                            f"crossed rails between {hx} and {hy}: {hx} {dev} (cable {k + 1}) "
                            f"reaches {hy} {got}, but cable {k + 1} is {want} on {hy}"
                        )
                        f = fail(msg, remediation=CROSSED_REMEDY)
                    else:
                        msg = (
                            f"{label}: {hx} {dev} reaches {hy} {got}, but the hostfile says "
                            f"{hy} {want}"
                        )
                        f = warn(msg, remediation=REMEDY)
                else:
                    msg = (
                        f"{label}: {hx} {dev} is cabled to {ends[0][0]} "
                        f"({ends[0][1].get('device')}), but the hostfile says {hy} {want}"
                    )
                    f = fail(msg, remediation=REMEDY)
                f.evidence.update(
                    {
                        "host": hx,
                        "device": dev,
                        "expected": {"host": hy, "device": want},
                        "peers": peers,
                        "actual": [{"host": h, "device": p.get("device")} for h, p in ends],
                    }
                )
                found.append(
                    on(
                        [hx, hy]
                        if ends and ends[0][0] == hy
                        else [hx, hy] + [h for h, _ in ends if h not in (hx, hy)],
                        f,
                    )
                )
    if found:
        return found
    if not checked:
        return skip("no hostfile device maps to a Thunderbolt port with a known peer")
    return ok(f"{checked} cable end(s) reach the host and device the hostfile says")


FLEET_CHECK = FleetCheck(
    code="MD405",
    name="fleet.cabling",
    title="Thunderbolt cabling",
    area="cabling",
    run=run,
    doc=Doc(
        meaning="""
For jaccl and jaccl-ring on Macs: each Thunderbolt port reports the domain UUID of the Mac port
at the other end of its cable (system_profiler; the two ends are reciprocal). The port behind
each hostfile device must reach the host and device the hostfile names; with several cables
between two Macs, cable k must be the k-th device on both ends. Fails naming the host and device
the cable really reaches.

Several cables between two Macs are used by jaccl-ring in every version and by the mesh from
MLX 0.32.4 (MLX PR #4607). The two cells of an edge listing different numbers of cables warn:
how MLX treats them is unknown (not stated in its headers).
""",
        why="""
A cable that goes to another host than the hostfile says breaks that edge; crossed rails (cable
k not the same physical cable on both ends) can deadlock JACCL init (exo PR #2160).

Both JACCL backends use several cables between two Macs: jaccl-ring in every version, the mesh
from MLX 0.32.4 (MLX PR #4607, one wire per cable listed). The two cells of an edge must list
the same number of cables; how MLX treats cells of unequal length is not stated in its headers
("unknown"), so a mismatch warns from the hostfile alone, before any port is read.
""",
        action="""
Re-cable, or regenerate the hostfile from the cabling as it is.
""",
        sources=(
            "exo PR #2160 (crossed rails deadlock JACCL init)",
            "MLX PR #4607 (0.32.4: the mesh uses every cable listed)",
            "system_profiler SPThunderboltDataType -json (domain_uuid_key)",
        ),
    ),
)
