"""Codes that no check module owns (probe, fleet), for ``meshdoctor explain``.

Check codes are described by their own modules (``Check.explain``); this table holds the rest,
each as ``code -> (title, explanation)``. Codes are stable: never renumber, only add.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

CATALOGUE: Dict[str, Tuple[str, str]] = {
    "MD100": ("internal error",
              "meshdoctor itself failed before it could assess the node (a bug, or a broken "
              "install). The verdict is 'unknown' (exit 3). Re-run with --json and report the "
              "evidence."),
    "MD700": ("fix run could not start",
              "`meshdoctor fix` did not apply anything: another fix run holds the lock in "
              "meshdoctor's state directory (two runs must not interleave), or the hosts could "
              "not be assessed. The verdict is 'unknown' (exit 3). Wait for the other run, then "
              "run the fix again."),
}


def register(code: str, title: str, explanation: str) -> None:
    """Add a code owned by an engine part (the probe registers its MD5xx codes here)."""
    CATALOGUE[code] = (title, explanation)


def lookup(key: str) -> Optional[Tuple[str, str, str]]:
    """``(code, title, explanation)`` for a code (``MD601``) or the name its title ends with
    (``jaccl.rtr-errno-22``), case-insensitive; None if unknown."""
    k = key.strip()
    if k.upper() in CATALOGUE:
        title, text = CATALOGUE[k.upper()]
        return k.upper(), title, text
    for code, (title, text) in CATALOGUE.items():
        if title.split()[-1:] == [k.lower()]:
            return code, title, text
    return None
