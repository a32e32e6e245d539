"""Text that came from outside (tools' output, hostfiles, logs, rank stderr, other hosts'
verdicts) made safe for a terminal: the one rule every printer uses.

A control character (C0 except tab and newline, DEL, C1) is written as a visible escape
(``\\x1b``, ``\\x00``), so such text can neither move the cursor, recolour or clear the screen,
nor set the window title, and what was there stays visible. The Unicode bidirectional
formatting characters (Bidi_Control: U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) are
written as ``\\u202e``: they reorder what a terminal shows, so a line could read differently
from what it holds ("Trojan Source", CVE-2021-42574); so are the line and paragraph separators
U+2028 and U+2029. :func:`one_line` also escapes newlines and tabs, for a value shown inside a
line: a result is rendered field by field, each on one line, so no text from outside can
forge a line of its own. rich markup is escaped separately by the renderers
(:func:`meshdoctor.render.style.clean`); this module imports nothing heavy, so the ``--json`` path
can use it. :func:`shell_line` is the one way a command line a user may copy is built from
words that came from outside.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable

BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI}\u2028\u2029]")


def _escape(m: "re.Match[str]") -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: object) -> str:
    """``str(text)`` with every control character but tab and newline written as ``\\xNN``
    and every bidirectional formatting character (and U+2028, U+2029) as ``\\uNNNN``.

    >>> printable("a\\x1b[2Jb\\x00")
    'a\\\\x1b[2Jb\\\\x00'
    >>> printable("ok\\u202etxt.exe")
    'ok\\\\u202etxt.exe'
    """
    return CONTROL.sub(_escape, str(text))


def one_line(text: object) -> str:
    """:func:`printable` with newlines written as ``\\n`` and tabs as ``\\t``: for anything
    shown as one line (a result's code, title, summary, remediation, a host name, a table
    cell), so text from outside cannot start a line that looks like meshdoctor's own.

    >>> one_line("host\\nFAKE ok")
    'host\\\\nFAKE ok'
    """
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def _ansi_c(word: str) -> str:
    """``word`` in ANSI-C quotes, ``$'...'`` (bash manual, "ANSI-C Quoting"; zsh and ksh93 read
    it alike): backslash and quote escaped, newline and tab as ``\\n`` and ``\\t``, every
    other control or bidirectional character as ``\\xNN`` (below U+0080) or ``\\uNNNN``, as
    GNU ls --quoting-style=shell-escape writes a name it cannot show."""
    out = []
    for ch in word:
        c = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch in "\n\t":
            out.append("\\n" if ch == "\n" else "\\t")
        elif CONTROL.match(ch):
            out.append(f"\\x{c:02x}" if c < 0x80 else f"\\u{c:04x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def shell_line(words: Iterable[object]) -> str:
    """A command line a user may copy into a shell: every word quoted with
    :func:`shlex.quote` (Python docs, shlex), so a word from outside (a host name, a path, a
    pid another host sent) stays one word and runs nothing; a word holding a control or
    bidirectional character (an escape sequence in a host name) is written in ANSI-C quotes
    instead (:func:`_ansi_c`), so the line shows what it holds and pastes as the same word.

    >>> shell_line(["kill", 12, "a;b"])
    "kill 12 'a;b'"
    >>> shell_line(["ssh", "h\x1b[2J"])
    "ssh $'h\\\\x1b[2J'"
    """
    return " ".join(
        _ansi_c(w) if CONTROL.search(w) or "\n" in w or "\t" in w else shlex.quote(w)
        for w in map(str, words)
    )


# the longest name printed whole: longer ones (a hostfile may hold anything; MD401 refuses
# names over 255 characters) are cut for display so a table stays readable
DISPLAY_NAME_MAX = 64


def display_name(name: object, limit: int = DISPLAY_NAME_MAX) -> str:
    """``name`` for a person to read: whole up to ``limit`` characters, else its first
    characters, an ellipsis and its length (``"aaaa... (5000 characters)"``); the JSON keeps
    every name whole. Not escaped (see :func:`one_line`).

    >>> display_name("a" * 100, 40)
    'aaaaaaaaaaaaaaaaaaaa... (100 characters)'
    """
    text = str(name)
    if len(text) <= limit:
        return text
    return text[: limit // 2] + f"... ({len(text)} characters)"
