"""Human rendering of a verdict with rich. Reached only from the CLI; holds no data of its own.

One line per result (status symbol, code, title, host, summary), the remediation under each
failure, warning and error, and a closing line with the verdict and exit code.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

from rich.console import Console
from rich.markup import escape

from .model import ERROR, FAIL, OK, SKIP, WARN, Verdict
from .text import printable

SYMBOLS = {
    OK: ("✔", "green"),
    WARN: ("!", "yellow"),
    FAIL: ("✘", "bold red"),
    SKIP: ("-", "dim"),
    ERROR: ("?", "bold magenta"),
}
# For a stream that cannot encode the symbols above (PYTHONIOENCODING=ascii, a latin-1 terminal).
ASCII_SYMBOLS = {OK: "+", WARN: "!", FAIL: "x", SKIP: "-", ERROR: "?"}
ARROW, ASCII_ARROW = "→", "->"
VERDICT_STYLE = {"go": "bold green", "no-go": "bold red", "unknown": "bold magenta"}


# C0 controls except tab and newline (ESC starts terminal escape sequences, CR overwrites a
# line, NUL and BEL), DEL, and the C1 controls (U+0080-U+009F: CSI and friends)
plain = printable  # output that does not go through rich (meshdoctor.text)


def clean(text: object) -> str:
    """:func:`plain`, and rich markup escaped (``[red]`` prints as ``[red]``): the one way any
    string that came from outside (tools, hostfiles, logs, rank stderr) reaches a rich console."""
    return escape(plain(text))


class _Console(Console):
    """rich's Console, except that a reader going away (``| head``) silences the output instead
    of exiting with status 1: the exit status is the verdict's, whoever reads."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (sys.stderr if self.stderr else sys.stdout).fileno())


def encodes(encoding: Optional[str], text: str = "✔✘→") -> bool:
    """Whether a stream in ``encoding`` can carry ``text`` (the symbols this module prints)."""
    try:
        text.encode(encoding or "utf-8")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def console(stderr: bool = False) -> Console:
    """The console all human output goes through (highlighting off: data stays as written)."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True)


def verdict(v: Verdict, *, quiet: bool = False, out: Optional[Console] = None) -> None:
    """Print ``v``, each result under its own title (the check name when it has none).
    ``quiet`` prints only failures and errors (with ``--strict`` warnings too, since they
    fail), and the verdict line when it is not go."""
    out = out or console()
    multi_host = len({r.host for r in v.results}) > 1
    shown = (FAIL, ERROR, WARN) if v.strict else (FAIL, ERROR)  # --strict: warnings fail
    plain = not encodes(out.encoding)
    arrow = ASCII_ARROW if plain else ARROW
    if v.fleet is not None and not quiet:  # fleet mode: the table, then only what is wrong
        from .render_fleet import table

        table(v, out, SYMBOLS)
    for r in v.results:
        if quiet and r.status not in shown:
            continue
        if v.fleet is not None and r.status in (OK, SKIP):
            continue
        sym, style = SYMBOLS[r.status]
        if plain:
            sym = ASCII_SYMBOLS[r.status]
        title = r.title or r.check
        named = r.evidence.get("hosts") if v.fleet is not None else None
        label = ",".join(map(str, named)) if isinstance(named, list) and named else r.host
        host = f"[cyan]{clean(label)}[/] " if multi_host else ""
        out.print(
            f"[{style}]{sym}[/] [bold]{clean(r.code)}[/] {host}{clean(title)}: {clean(r.summary)}"
        )
        if r.status in (FAIL, WARN, ERROR) and r.remediation is not None:
            out.print(f"    [dim]{arrow}[/] {clean(r.remediation.text)}")
            if r.remediation.command:
                out.print(f"      [bold]$ {clean(r.remediation.command)}[/]")
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
        line += f"; [bold red]reboot needed: {clean(', '.join(v.needs_reboot))}[/]"
    out.print(line)


def actions(items, *, out: Optional[Console] = None, heading: str = "") -> None:
    """Print the typed actions of a fix run (dicts as in the verdict's ``actions``): host, what,
    the command, and the outcome; steps not yet applied are marked ``planned``."""
    out = out or console()
    if heading:
        out.print(f"[bold]{clean(heading)}[/]")
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
        host, code = clean(str(a.get("host", ""))), clean(str(a.get("code", "")))
        out.print(
            f" {mark} [cyan]{host}[/] [bold]{code}[/] {clean(str(a.get('step', '')))} "
            f"[{style}]({clean(outcome)})[/]"
        )
        if a.get("argv"):
            import shlex

            out.print(f"      [dim]$ {clean(' '.join(shlex.quote(x) for x in a['argv']))}[/]")
