"""Codes that no check module owns (probe, fleet), for ``meshdoctor explain``.

Check codes are described by their own modules (``Check.explain``); this table holds the rest,
each as ``code -> (title, explanation)``. Codes are stable: never renumber, only add.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

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
    "MD190": ("check interrupted",
              "meshdoctor check was interrupted (Ctrl-C, SIGTERM from a supervisor, SIGHUP from a "
              "closed terminal) before every check finished. Every command it had started was "
              "killed with its process group; the checks that had finished keep their results, "
              "the others are in error. The node was not fully assessed: the verdict is "
              "'unknown' (exit 3), or 'no-go' (exit 1) if a finished check had already failed. "
              "Run the check again."),
}


# Result names (the ``check`` field of a result, e.g. ``probe.leftovers``) -> the codes they
# carry, for ``meshdoctor explain NAME``.
NAMES: Dict[str, List[str]] = {}


def register_name(name: str, *codes: str) -> None:
    """Let ``explain NAME`` find ``codes`` by a result's ``check`` name (``probe.leftovers``)."""
    NAMES.setdefault(name.lower(), [])
    NAMES[name.lower()].extend(c for c in codes if c not in NAMES[name.lower()])


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


def lookup_all(key: str) -> List[Tuple[str, str, str]]:
    """Every ``(code, title, explanation)`` that ``key`` names: a code, a signature name (see
    :func:`lookup`) or a result name registered with :func:`register_name` (one name can carry
    two codes: ``probe.all_sum`` is MD504 and MD505); empty if unknown."""
    found = lookup(key)
    if found is not None:
        return [found]
    return [(c,) + CATALOGUE[c] for c in NAMES.get(key.strip().lower(), []) if c in CATALOGUE]


def all_keys() -> List[str]:
    """Every code and name ``explain`` accepts (for shell completion)."""
    names = [t.split()[-1] for t, _ in CATALOGUE.values() if t.split() and "." in t.split()[-1]]
    return sorted(set(CATALOGUE) | set(names) | set(NAMES))
