"""Human rendering of a fleet verdict: the hosts x areas table and the RDMA edge matrix.

Reached only from :mod:`meshdoctor.render.verdict`. Each table cell is one status symbol with the code of
the worst finding of that host in that area under it; the edge matrix shows, for each pair of
hosts, the device each end uses and whether it is PORT_ACTIVE. All text from hosts is escaped.
"""

from __future__ import annotations

from typing import Any, Dict

from rich.console import Console
from rich.table import Table

from meshdoctor.model import FAIL, OK, SKIP, Verdict
from meshdoctor.render.style import ASCII_BLANK, BLANK, SYMBOLS, clean_line, clean_name, symbols

# ``text`` on one line, control characters escaped (meshdoctor.text.one_line) and rich markup
# escaped: host and device names come from the hostfile, states from the hosts
safe = clean_line


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


def _cell(cell: Dict[str, Any], marks, blank: str) -> str:
    if not cell:
        return f"[dim]{blank}[/]"
    sym, style = marks[cell["status"]]
    if cell["status"] in (OK, SKIP):
        return f"[{style}]{sym}[/]"
    return f"[{style}]{sym}[/]\n[{style}]{safe(cell['code'])}[/]"


def _print_wide(out: Console, renderable: Any, need: int) -> None:
    """Print ``renderable`` at least ``need`` cells wide: rich caps ``print(width=)`` at the
    console's width (80 on a pipe), which would squeeze a column to nothing."""
    old = out.width
    out.width = max(old, need)
    try:
        out.print(renderable)
    finally:
        out.width = old


def _ranks(h) -> str:
    """The ranks a fleet host runs, as the table shows them (``0``, ``0-2``, ``0, 2``): every
    rank of the hostfile that lands on it (``node.ranks``), else its first."""
    got = (h.node or {}).get("ranks") if isinstance(h.node, dict) else None
    if not (isinstance(got, list) and got and all(isinstance(x, int) for x in got)):
        return "" if h.rank is None else str(h.rank)
    xs, runs, i = sorted(set(got)), [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        runs.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(runs)


def table(v: Verdict, out: Console) -> None:
    """Print the fleet table and, when the backend uses RDMA, the edge matrix, with the status
    symbols of the result lines (:func:`meshdoctor.render.style.symbols`: ASCII where ``out``
    cannot encode them)."""
    marks = symbols(out)
    blank = BLANK if marks is SYMBOLS else ASCII_BLANK
    fleet = v.fleet or {}
    hosts = fleet.get("hosts", [])
    areas = [
        a
        for a, cells in fleet.get("areas", {}).items()
        if any(c["status"] != SKIP for c in cells.values())
    ]
    if not hosts:  # nothing to draw: the results say why (an empty hostfile)
        return
    ranks = {h.host: _ranks(h) for h in v.hosts}
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
            clean_name(h),
            ranks.get(h, ""),
            *[_cell(fleet["areas"][a].get(h), marks, blank) for a in areas],
        )
    # columns: text + 2 padding + 1 rule each, and the left rule; host names as printed
    need = (
        max([len(clean_name(h)) for h in hosts] + [4])
        + max([len(r) for r in ranks.values()] + [4])
        + 7
        + sum(max(len(AREA_TITLES.get(a, a)), 5) + 3 for a in areas)
    )
    _print_wide(out, t, need)  # a narrow pipe must not squeeze the symbols
    edges = fleet.get("edges")
    if not edges:
        return
    names = edges["hosts"]
    ok, bad = marks[OK], marks[FAIL]
    m = Table(title=f"edges: {safe(edges.get('summary', ''))}", title_justify="left")
    m.add_column("")
    for h in names:
        m.add_column(clean_name(h))
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
                    + (
                        f"[{ok[1]}]{ok[0]}[/]"
                        if good
                        else f"[{bad[1]}]{bad[0]} {safe(s or '?')}[/]"
                    )
                )
            row.append("\n".join(parts) or f"[{bad[1]}]{bad[0]} none[/]")
        m.add_row(clean_name(h), *row)
    _print_wide(out, m, 12 + 22 * len(names))
