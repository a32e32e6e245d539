"""Human rendering of a verdict with rich. Reached only from the CLI; holds no data of its own.

One line per result (status symbol, code, title, host, summary), the remediation under each
failure, warning and error, and a closing line with the verdict and exit code.
"""

from __future__ import annotations

import os
import sys
from typing import Dict, Optional

from rich.console import Console
from rich.markup import escape

from .model import ERROR, FAIL, OK, SKIP, WARN, Verdict

SYMBOLS = {OK: ("✔", "green"), WARN: ("!", "yellow"), FAIL: ("✘", "bold red"),
           SKIP: ("-", "dim"), ERROR: ("?", "bold magenta")}
# For a stream that cannot encode the symbols above (PYTHONIOENCODING=ascii, a latin-1 terminal).
ASCII_SYMBOLS = {OK: "+", WARN: "!", FAIL: "x", SKIP: "-", ERROR: "?"}
ARROW, ASCII_ARROW = "→", "->"
VERDICT_STYLE = {"go": "bold green", "no-go": "bold red", "unknown": "bold magenta"}


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


def verdict(v: Verdict, *, quiet: bool = False, titles: Optional[Dict[str, str]] = None,
            out: Optional[Console] = None) -> None:
    """Print ``v``. ``quiet`` prints only failures and errors (with ``--strict`` warnings too,
    since they fail), and the verdict line when it is not go."""
    out = out or console()
    titles = titles or {}
    multi_host = len({r.host for r in v.results}) > 1
    shown = (FAIL, ERROR, WARN) if v.strict else (FAIL, ERROR)  # --strict: warnings fail
    plain = not encodes(out.encoding)
    arrow = ASCII_ARROW if plain else ARROW
    for r in v.results:
        if quiet and r.status not in shown:
            continue
        sym, style = SYMBOLS[r.status]
        if plain:
            sym = ASCII_SYMBOLS[r.status]
        title = titles.get(r.code, r.check)
        host = f"[cyan]{escape(r.host)}[/] " if multi_host else ""
        out.print(f"[{style}]{sym}[/] [bold]{r.code}[/] {host}{escape(title)}: "
                  f"{escape(r.summary)}")
        if r.status in (FAIL, WARN, ERROR) and r.remediation is not None:
            out.print(f"    [dim]{arrow}[/] {escape(r.remediation.text)}")
            if r.remediation.command:
                out.print(f"      [bold]$ {escape(r.remediation.command)}[/]")
    if quiet and v.verdict == "go":
        return
    counts = {s: sum(1 for r in v.results if r.status == s) for s in (OK, WARN, FAIL, ERROR, SKIP)}
    tally = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    line = (f"[{VERDICT_STYLE[v.verdict]}]{v.verdict.upper()}[/] (exit {v.exit_code}) "
            f"{v.command}: {tally or 'no results'} in {v.duration_s:.2f} s")
    if v.needs_reboot:
        line += f"; [bold red]reboot needed: {escape(', '.join(v.needs_reboot))}[/]"
    out.print(line)
