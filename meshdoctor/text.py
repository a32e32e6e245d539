"""Text that came from outside (tools' output, hostfiles, logs, rank stderr, other hosts'
verdicts) made safe for a terminal: the one rule every printer uses.

A control character (C0 except tab and newline, DEL, C1) is written as a visible escape
(``\\x1b``, ``\\x00``), so such text can neither move the cursor, recolour or clear the screen,
nor set the window title, and what was there stays visible. rich markup is escaped separately
by the renderers (:func:`meshdoctor.render.clean`); this module imports nothing heavy, so the
``--json`` path can use it.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """``str(text)`` with every control character but tab and newline written as ``\\xNN``.

    >>> printable("a\\x1b[2Jb\\x00")
    'a\\\\x1b[2Jb\\\\x00'
    """
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def one_line(text: object) -> str:
    """:func:`printable` with tabs and newlines also escaped: for a value shown inside a line
    (a device name from a hostfile, a state another host sent)."""
    return printable(text).replace("\t", "\\x09").replace("\n", "\\x0a")
