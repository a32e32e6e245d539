"""MD404 fleet edges: every RDMA device the hostfile matrix names is PORT_ACTIVE on both ends.

A 4-node JACCL mesh has 6 edges, 3 active ports per node (mlx.distributed_config runbook; a port
reads PORT_DOWN until the Mac at the other end has RDMA enabled and the cable is seated). Each
edge that is not active on both ends is named by its two hosts and devices; the summary counts
edges (``6/6 edges active``) and the evidence carries the host x host matrix.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from meshdoctor.codes.model import Doc
from meshdoctor.model import Export
from meshdoctor.checker.model import Finding, error, fail, ok, skip
from meshdoctor.checker.fleet_model import FleetView, FleetCheck, on
from meshdoctor.mlx.backends import JACCL_BACKENDS

REMEDY = (
    "Check the Thunderbolt 5 cable of that edge on both Macs and that RDMA is enabled on "
    "both (`rdma_ctl status`); a port reads PORT_DOWN until the other end is up. Ports "
    "that dropped after hours of traffic come back only with a full-fleet reboot, then one "
    "`mlx.distributed_config --auto-setup`."
)


def _state(view: FleetView, host: str, dev: str) -> Optional[str]:
    """PORT_ACTIVE / PORT_DOWN / ... / ``missing``; None when the host was not assessed."""
    hv = view.hosts[host]
    if not hv.reachable:
        return None
    rdma = hv.facts.get("rdma")
    if rdma is None:
        return "unknown (no RDMA inventory from this host)"
    d = (rdma.get("devices") or {}).get(dev)
    if d is None:
        return "missing"
    return "PORT_ACTIVE" if d.get("active") else (d.get("state") or "unknown")


def run(view: FleetView):
    if view.backend not in JACCL_BACKENDS:
        return skip(f"no RDMA edges: the backend is {view.backend}")
    names = view.names()
    n = len(names)
    cells: List[List[Optional[Dict[str, Any]]]] = [[None] * n for _ in range(n)]
    found: List[Finding] = []
    edges = view.edges()
    active = 0
    for i, j, a, b in edges:
        hi, hj = names[i], names[j]
        ends = [(hi, d, _state(view, hi, d)) for d in a] + [(hj, d, _state(view, hj, d)) for d in b]
        cells[i][j] = {"devices": a, "states": [_state(view, hi, d) for d in a]}
        cells[j][i] = {"devices": b, "states": [_state(view, hj, d) for d in b]}
        desc = f"{hi} {'+'.join(a) or '(none)'} <-> {hj} {'+'.join(b) or '(none)'}"
        if any(s is None for _, _, s in ends):
            gone = sorted({h for h, _, s in ends if s is None})
            found.append(
                on(
                    [hi, hj],
                    error(
                        f"edge {hi}-{hj} ({desc}) not assessed: {', '.join(gone)} did not answer"
                    ),
                )
            )
            continue
        bad = [(h, d, s) for h, d, s in ends if s != "PORT_ACTIVE"]
        if not a or not b:
            bad.append((hi if not a else hj, "(no device in the hostfile)", "missing"))
        if not bad:
            active += 1
            continue
        found.append(
            on(
                [hi, hj],
                fail(
                    f"edge {hi}-{hj} is not active ({desc}): "
                    + "; ".join(f"{d} on {h} is {s}" for h, d, s in bad),
                    evidence={
                        "edge": [hi, hj],
                        "devices": {hi: a, hj: b},
                        "bad": [{"host": h, "device": d, "state": s} for h, d, s in bad],
                    },
                    remediation=REMEDY,
                ),
            )
        )
    summary = f"{active}/{len(edges)} edges active"
    matrix = {
        "hosts": names,
        "cells": cells,
        "active": active,
        "total": len(edges),
        "summary": summary,
    }
    if not found:
        return ok(summary, evidence={"edge_matrix": matrix})
    for f in found:
        f.summary = f"{summary}; {f.summary}"
    found[0].evidence["edge_matrix"] = matrix
    return found


FLEET_CHECK = FleetCheck(
    code="MD404",
    exports=(Export("edge_matrix", "edge_matrix"), Export("cables_down", "bad")),
    name="fleet.edges",
    title="RDMA edges",
    area="edges",
    run=run,
    doc=Doc(
        meaning="""
For jaccl and jaccl-ring: every device the hostfile's rdma matrix names must exist and be
PORT_ACTIVE on both ends of each edge (a 4-node mesh has 6 edges: `6/6 edges active`). Each edge
that is not is named by its two hosts and devices, with the state of each end.
""",
        why="""
The launch uses every edge the hostfile's rdma matrix names, so an edge that is not active on
both ends blocks it; a port reads PORT_DOWN until the Mac at the other end has RDMA enabled and
the cable is seated.
""",
        action="""
Reseat the cable, enable RDMA on both Macs; after ports dropped following hours of traffic,
reboot the whole fleet and run `mlx.distributed_config --auto-setup` once.
""",
        sources=(
            "MLX distributed documentation (mlx.distributed_config, RDMA over Thunderbolt)",
            "ibv_devinfo(1) port states (PORT_ACTIVE, PORT_DOWN)",
        ),
    ),
)
