"""Human rendering of a verdict with rich. Reached only from the CLI; holds no data of its own
(the symbols, styles and text cleaning it shares with the fleet table are
:mod:`meshdoctor.render.style`).

One line per result (status symbol, code, title, host, summary), the remediation under each
failure, warning and error, and a closing line with the verdict and exit code; before them the
fleet table (fleet mode) or the probe's --pairs matrix.
"""

from __future__ import annotations

import sys
from typing import Optional

from rich.console import Console

from meshdoctor.model import ERROR, FAIL, OK, SKIP, WARN, Verdict
from meshdoctor.render.style import (
    ARROW,
    ASCII_ARROW,
    SYMBOLS,
    VERDICT_STYLE,
    clean_line,
    clean_name,
    symbols,
)
from meshdoctor.streams import to_devnull
from meshdoctor.text import shell_line


class _Console(Console):
    """rich's Console, except that a reader going away (``| head``) silences the output instead
    of exiting with status 1: the exit status is the verdict's, whoever reads."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        to_devnull((sys.stderr if self.stderr else sys.stdout).fileno())


def console(stderr: bool = False) -> Console:
    """The console all human output goes through (highlighting and emoji codes off: data stays
    as written; with emoji on, rich turns ``node:1234:`` in a log line into an emoji)."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def plain_console(file) -> Console:
    """A console writing plain text (no colour, no terminal codes) into ``file`` (a text
    stream): the human format written to ``--output FILE``."""
    return Console(
        file=file, highlight=False, soft_wrap=True, no_color=True, force_terminal=False, width=100
    )


# The probe's own results (check names ``probe.*``, :mod:`meshdoctor.probe.codes`): the fleet
# table summarises the gate's checks only, so these keep their lines, ok ones included, as
# ``probe -n`` prints them (the figures: #wrong, busbw, algbw, time per call).
_OWN_LINE_PREFIX = "probe."


def _own_line(r) -> bool:
    """Whether result ``r`` is printed on its own line even when ok in fleet mode."""
    return str(r.check or "").startswith(_OWN_LINE_PREFIX)


def verdict(v: Verdict, *, quiet: bool = False, out: Optional[Console] = None) -> None:
    """Print ``v``, each result under its own title (the check name when it has none).
    ``quiet`` prints only failures and errors (with ``--strict`` warnings too, since they
    fail), and the verdict line when it is not go."""
    out = out or console()
    multi_host = len({r.host for r in v.results}) > 1
    shown = (FAIL, ERROR, WARN) if v.strict else (FAIL, ERROR)  # --strict: warnings fail
    marks = symbols(out)
    arrow = ARROW if marks is SYMBOLS else ASCII_ARROW
    if v.fleet is not None and not quiet:  # fleet mode: the table, then only what is wrong
        from meshdoctor.render.fleet import table

        table(v, out)
    if v.probe and v.probe.get("pairs") and not quiet:  # the --pairs matrix, then the results
        from meshdoctor.render.probe import pairs_table

        pairs_table(v.probe["pairs"], out)
    for r in v.results:
        if quiet and r.status not in shown:
            continue
        if v.fleet is not None and r.status in (OK, SKIP) and not _own_line(r):
            continue  # the fleet table above stands for it
        sym, style = marks[r.status]
        title = r.title or r.check
        named = r.evidence.get("hosts") if v.fleet is not None else None
        label = (
            ",".join(clean_name(n) for n in named)
            if isinstance(named, list) and named
            else clean_name(r.host)
        )
        host = f"[cyan]{label}[/] " if multi_host else ""
        out.print(
            f"[{style}]{sym}[/] [bold]{clean_line(r.code)}[/] {host}{clean_line(title)}: "
            f"{clean_line(r.summary)}"
        )
        if r.status in (FAIL, WARN, ERROR) and r.remediation is not None:
            out.print(f"    [dim]{arrow}[/] {clean_line(r.remediation.text)}")
            if r.remediation.command:
                out.print(f"      [bold]$ {clean_line(r.remediation.command)}[/]")
    if quiet and v.verdict == "go":
        return
    counts = {s: sum(1 for r in v.results if r.status == s) for s in (OK, WARN, FAIL, ERROR, SKIP)}
    tally = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    line = (
        f"[{VERDICT_STYLE[v.verdict]}]{v.verdict.upper()}[/] (exit {v.exit_code}) "
        f"{v.command}: {tally or 'no results'} in {v.duration_s:.2f} s"
    )
    if v.nothing_assessed:
        line += (
            "; nothing applied here: every check skipped (the reasons are above), so this "
            "node was not assessed"
        )
    if v.needs_reboot:
        line += f"; [bold red]reboot needed: {clean_line(', '.join(v.needs_reboot))}[/]"
    out.print(line)


def actions(items, *, out: Optional[Console] = None, heading: str = "") -> None:
    """Print the typed actions of a fix run (dicts as in the verdict's ``actions``): host, what,
    the command, and the outcome; steps not yet applied are marked ``planned``."""
    out = out or console()
    if heading:
        out.print(f"[bold]{clean_line(heading)}[/]")
    for a in items:
        outcome = str(a.get("outcome", ""))
        style = (
            "yellow"
            if outcome == "planned"
            else "red"
            if outcome.startswith("failed")
            else "dim"
            if outcome.startswith("skipped")
            else "green"
        )
        mark = "*" if a.get("changed") else " "
        host, code = clean_line(a.get("host", "")), clean_line(a.get("code", ""))
        out.print(
            f" {mark} [cyan]{host}[/] [bold]{code}[/] {clean_line(a.get('step', ''))} "
            f"[{style}]({clean_line(outcome)})[/]"
        )
        if a.get("argv"):
            out.print(f"      [dim]$ {clean_line(shell_line(a['argv']))}[/]")
