"""Human rendering of a fleet verdict: the hosts x areas table and the RDMA edge matrix.

Reached only from :mod:`meshdoctor.render`. Each table cell is one status symbol with the code of
the worst finding of that host in that area under it; the edge matrix shows, for each pair of
hosts, the device each end uses and whether it is PORT_ACTIVE. All text from hosts is escaped.
"""

from __future__ import annotations

from typing import Any, Dict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .model import OK, SKIP, Verdict
from .text import one_line


def safe(text: Any) -> str:
    """``text`` on one line, control characters escaped (:func:`meshdoctor.text.one_line`) and
    rich markup escaped: device names come from the hostfile, states from the hosts."""
    return escape(one_line(text))


AREA_TITLES = {
    "reach": "reach",
    "node": "node",
    "rdma": "rdma/tb",
    "procs": "procs/mem",
    "versions": "versions",
    "edges": "edges",
    "cabling": "cabling",
    "addressing": "addresses",
    "env": "env",
    "ports": "ports",
}


def _cell(cell: Dict[str, Any], symbols) -> str:
    if not cell:
        return "[dim]·[/]"
    sym, style = symbols[cell["status"]]
    if cell["status"] in (OK, SKIP):
        return f"[{style}]{sym}[/]"
    return f"[{style}]{sym}[/]\n[{style}]{safe(cell['code'])}[/]"


def table(v: Verdict, out: Console, symbols) -> None:
    """Print the fleet table and, when the backend uses RDMA, the edge matrix."""
    fleet = v.fleet or {}
    hosts = fleet.get("hosts", [])
    areas = [
        a
        for a, cells in fleet.get("areas", {}).items()
        if any(c["status"] != SKIP for c in cells.values())
    ]
    ranks = {h.host: h.rank for h in v.hosts}
    t = Table(
        title=f"fleet: {len(hosts)} host(s), backend {safe(fleet.get('backend', '?'))}",
        show_lines=False,
        title_justify="left",
    )
    t.add_column("host", no_wrap=True)
    t.add_column("rank", justify="right")
    for a in areas:
        t.add_column(AREA_TITLES.get(a, a), justify="center", no_wrap=True)
    for h in hosts:
        t.add_row(
            safe(h),
            "" if ranks.get(h) is None else str(ranks[h]),
            *[_cell(fleet["areas"][a].get(h), symbols) for a in areas],
        )
    need = (
        max([len(h) for h in hosts] + [4])
        + 9
        + sum(max(len(AREA_TITLES.get(a, a)), 5) + 3 for a in areas)
    )
    out.print(t, width=max(out.width, need))  # a narrow pipe must not squeeze the symbols
    edges = fleet.get("edges")
    if not edges:
        return
    names = edges["hosts"]
    m = Table(title=f"edges: {safe(edges.get('summary', ''))}", title_justify="left")
    m.add_column("")
    for h in names:
        m.add_column(safe(h))
    for i, h in enumerate(names):
        row = []
        for j in range(len(names)):
            c = edges["cells"][i][j]
            if c is None:
                row.append("[dim]-[/]" if i != j else "")
                continue
            parts = []
            for d, s in zip(c["devices"], c["states"]):
                good = s == "PORT_ACTIVE"
                parts.append(
                    f"{safe(d)} "
                    + ("[green]✔[/]" if good else f"[bold red]✘ {safe(str(s or '?'))}[/]")
                )
            row.append("\n".join(parts) or "[bold red]✘ none[/]")
        m.add_row(safe(h), *row)
    out.print(m, width=max(out.width, 12 + 22 * len(names)))
