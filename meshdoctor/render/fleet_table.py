"""The fleet table as data: area -> host -> the worst ``{status, code, summary}`` there.

What ``meshdoctor check --hostfile`` puts in its verdict's ``fleet.areas`` (and what
:mod:`meshdoctor.render.fleet` draws). No rich here: the table is built on the ``--json`` path.
A node result's column comes from its code's hundred (``MD1xx`` node, ``MD2xx`` RDMA and
Thunderbolt, ``MD3xx`` processes and memory, ``MD4xx`` node), a cross-node check's from the
``area`` it declares, a host that did not answer from the reach entry of the catalogue.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from meshdoctor.codes.engine import FLEET_REACH
from meshdoctor.model import ERROR, FAIL, MESH, OK, SKIP, WARN, Result

ORDER = [FAIL, ERROR, WARN, OK, SKIP]  # worst first
# node result codes by hundred, then the cross-node checks' areas, in column order
NODE_AREAS = {"1": "node", "2": "rdma", "3": "procs", "4": "node"}
AREAS = [
    "reach",
    "node",
    "rdma",
    "procs",
    "versions",
    "edges",
    "cabling",
    "addressing",
    "env",
    "ports",
]


def cell_hosts(
    result: Dict[str, Any], all_hosts: Sequence[str], mesh_hosts: Optional[Sequence[str]] = None
) -> List[str]:
    """The hosts a result counts against in the fleet table: those it names, else its host;
    one about the whole mesh counts for ``mesh_hosts`` (default: every host)."""
    named = (result.get("evidence") or {}).get("hosts")
    if named:
        return [h for h in named if h in all_hosts]
    if result["host"] == MESH:
        return list(all_hosts if mesh_hosts is None else mesh_hosts)
    return [result["host"]] if result["host"] in all_hosts else []


def area(code: str) -> str:
    """The column of a node result (or of the reach entry's result) with ``code``."""
    return "reach" if code == FLEET_REACH.code else NODE_AREAS.get(code[2:3], "node")


def areas(
    results: List[Result],
    area_of: Mapping[int, str],
    fleet_checks: Iterable[Tuple[str, str]],
    names: List[str],
    reached: List[str],
) -> Dict[str, Dict[str, Any]]:
    """The fleet table (area -> host -> worst ``{status, code, summary}``) of ``results``.
    ``area_of``: a cross-node result's area by ``id``; ``fleet_checks``: ``(code, area)`` of
    each cross-node check that ran; ``names``: every host; ``reached``: those that answered.
    A result about the whole mesh counts for every host that answered; a host no finding of a
    cross-node check names is ok there."""
    table: Dict[str, Dict[str, Any]] = {a: {} for a in AREAS}
    for r in results:
        a = area_of.get(id(r)) or area(r.code)
        for h in cell_hosts(r.to_dict(), names, reached):
            cell = table.setdefault(a, {}).get(h)
            if cell is None or ORDER.index(r.status) < ORDER.index(cell["status"]):
                table[a][h] = {"status": r.status, "code": r.code, "summary": r.summary}
    if table["reach"]:  # only worth a column when a host did not answer
        for h in reached:
            table["reach"].setdefault(
                h, {"status": OK, "code": FLEET_REACH.code, "summary": "answered"}
            )
    for code, where in dict(fleet_checks).items():
        cells = table.setdefault(where, {})
        if (
            where in NODE_AREAS.values()
            or not cells
            or all(c["status"] == SKIP for c in cells.values())
        ):
            continue
        for h in reached:
            cells.setdefault(h, {"status": OK, "code": code, "summary": "nothing found"})
    return table


def edge_matrix(results: Iterable[Result]) -> Optional[Dict[str, Any]]:
    """The RDMA edge matrix a result exports (``evidence["edge_matrix"]``, the last one),
    None without one."""
    edges = None
    for r in results:
        if "edge_matrix" in r.evidence:
            edges = r.evidence["edge_matrix"]
    return edges
