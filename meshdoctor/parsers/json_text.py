"""JSON that came from outside (a tool's output, another host's verdict, a crash report, a file in
the state directory) read with one rule: whatever cannot be read is a :class:`ValueError`.

:func:`json.loads` raises :class:`RecursionError`, not :class:`ValueError`, for arrays or objects
nested past Python's recursion limit (a line of ``[`` a few thousand long), so a reader that
catches only ``ValueError`` would lose its whole verdict to one bad input; here that is a
``ValueError`` like any other unreadable text (Python docs, ``json`` module: "RecursionError"
for deeply nested input, https://docs.python.org/3/library/json.html).
"""

from __future__ import annotations

import json
from typing import Any


class TooDeep(ValueError):
    """JSON nested past Python's recursion limit."""


def loads(text: Any) -> Any:
    """``json.loads(text)``; raises :class:`ValueError` (:class:`TooDeep` for nesting past
    Python's recursion limit, :class:`json.JSONDecodeError` for anything else not JSON)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep(
            "JSON nested too deeply to read (arrays or objects inside each other "
            "beyond Python's recursion limit)"
        ) from None
