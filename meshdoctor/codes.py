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
    "MD190": ("check interrupted",
              "meshdoctor check was interrupted (Ctrl-C, SIGTERM from a supervisor, SIGHUP from a "
              "closed terminal) before every check finished. Every command it had started was "
              "killed with its process group; the checks that had finished keep their results, "
              "the others are in error. The node was not fully assessed: the verdict is "
              "'unknown' (exit 3), or 'no-go' (exit 1) if a finished check had already failed. "
              "Run the check again."),
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
