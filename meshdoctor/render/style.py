"""What the human renderers share: the status symbols and their styles (with ASCII stand-ins),
the blank of an empty table cell, the verdict styles, and the one way text from outside reaches
a rich console (:func:`clean`, :func:`clean_line`).

Used by :mod:`meshdoctor.render.verdict` (result lines) and :mod:`meshdoctor.render.fleet` (the
fleet table), so that both print the same symbols and neither imports the other's printing.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from rich.console import Console
from rich.markup import escape

from meshdoctor.model import ERROR, FAIL, OK, SKIP, WARN
from meshdoctor.text import one_line, printable

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
BLANK, ASCII_BLANK = "·", "."  # a fleet table cell with nothing in it
VERDICT_STYLE = {"go": "bold green", "no-go": "bold red", "unknown": "bold magenta"}


# C0 controls except tab and newline (ESC starts terminal escape sequences, CR overwrites a
# line, NUL and BEL), DEL, the C1 controls (U+0080-U+009F: CSI and friends) and the bidi
# formatting characters (meshdoctor.text)
plain = printable  # output that does not go through rich (meshdoctor.text)


def clean(text: object) -> str:
    """:func:`plain`, and rich markup escaped (``[red]`` prints as ``[red]``): the one way any
    string that came from outside (tools, hostfiles, logs, rank stderr) reaches a rich console."""
    return escape(plain(text))


def clean_line(text: object) -> str:
    """:func:`clean` on one line (:func:`meshdoctor.text.one_line`: newlines shown as ``\\n``):
    every field of a result, an action and a table cell is printed this way, so text from
    outside cannot forge a line of meshdoctor's own."""
    return escape(one_line(text))


def clean_name(name: object) -> str:
    """A host (or device) name as printed: cut for display when it is long
    (:func:`meshdoctor.text.display_name`), then :func:`clean_line`; an empty name (an entry
    without ``ssh``) reads ``(no ssh name)`` instead of a blank."""
    from meshdoctor.text import display_name

    text = str(name) if name is not None else ""
    return clean_line(display_name(text)) if text else "(no ssh name)"


def encodes(encoding: Optional[str], text: str = "✔✘→") -> bool:
    """Whether a stream in ``encoding`` can carry ``text`` (the symbols the renderers print)."""
    try:
        text.encode(encoding or "utf-8")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def symbols(out: Console) -> Dict[str, Tuple[str, str]]:
    """status -> ``(symbol, style)`` for ``out``: :data:`SYMBOLS`, or the characters of
    :data:`ASCII_SYMBOLS` where the stream cannot encode them (the one symbol table of the
    result lines and the fleet table)."""
    if encodes(out.encoding):
        return SYMBOLS
    return {s: (ASCII_SYMBOLS[s], style) for s, (_, style) in SYMBOLS.items()}
