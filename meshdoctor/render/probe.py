"""Human rendering of the probe's ``--pairs`` matrix: senders down, receivers across, each cell
the pair's busbw in GB/s (1e9 bytes/s, nccl-tests), ``#wrong`` where values arrived wrong, ``-``
where the backend connects no such pair, ``?`` where a pair was not measured.

Reached only from :mod:`meshdoctor.render.verdict`; reads the verdict's ``probe["pairs"]``
(``$defs/probe_pairs`` of the verdict schema)."""

from __future__ import annotations

from typing import Any, Dict

from rich.console import Console
from rich.table import Table


def _cell(pf: Dict[str, Any], s: int, d: int, slowest) -> str:
    if s == d:
        return "[dim]·[/]"
    bw = pf["busbw_gbs"][s][d]
    wrong = (pf.get("wrong") or [[None]])[s][d] if pf.get("wrong") else None
    if bw is None:
        return "[dim]-[/]" if [s, d] in (pf.get("unsupported") or []) else "[yellow]?[/]"
    text = f"{bw:.3f}"
    if wrong:
        return f"[red]{text} #wrong {wrong}[/]"
    if slowest and slowest.get("src") == s and slowest.get("dst") == d:
        return f"[bold yellow]{text}[/]"
    return text


def pairs_table(pf: Dict[str, Any], out: Console) -> None:
    """Print the pair matrix ``pf`` (the probe section's ``pairs``) as a table on ``out``; the
    slowest pair is highlighted, a note (ring neighbours only) follows it."""
    matrix = pf.get("busbw_gbs") or []
    n = len(matrix)
    if not n:
        return
    out.print("[bold]send/recv busbw GB/s (rows send, columns receive)[/]")
    table = Table()
    table.add_column("src\\dst", justify="right", style="bold")
    for d in range(n):
        table.add_column(str(d), justify="right")
    slowest = pf.get("slowest")
    for s in range(n):
        table.add_row(str(s), *(_cell(pf, s, d, slowest) for d in range(n)))
    out.print(table)
    if pf.get("note"):
        out.print(f"[dim]{pf['note']} (-: not connected)[/]")
