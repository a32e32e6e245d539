"""Discovery of fixes: every module of ``meshdoctor.fixes`` that defines ``FIX = Fix(...)``, found
by :func:`meshdoctor.discover.declared` (nothing imports a fix by name), and the choice of fixes
for a set of failed checks.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional

from meshdoctor.discover import declared
from meshdoctor.fixer.model import FLEET_SCOPE, HOST_SCOPE, Fix


def all_fixes() -> List[Fix]:
    """Every fix, sorted by code. Raises ValueError for a code or name defined twice."""
    found: Dict[str, Fix] = {}
    names: Dict[str, str] = {}
    for _, fx in declared("meshdoctor.fixes", "FIX", Fix):
        if fx.code in found or fx.name in names:
            raise ValueError(f"fix {fx.code} {fx.name} is defined twice")
        found[fx.code], names[fx.name] = fx, fx.code
    return sorted(found.values(), key=lambda f: f.code)


def lookup(key: str) -> Optional[Fix]:
    """The fix whose code (``MD701``) or name (``stale-ranks``) is ``key``, else None."""
    k = key.strip()
    return next((f for f in all_fixes() if f.code == k.upper() or f.name == k.lower()), None)


def fixes_for(codes: Iterable[str], backend: Optional[str] = None) -> List[Fix]:
    """The fixes that resolve any of the check ``codes``, in code order. ``backend``: the
    hostfile's backend; a fix that does not list it in its ``backends`` is not chosen (None: no
    hostfile, every fix may be). A fleet-scope fix is chosen only for the codes no chosen
    host-scope fix resolves: the fix of one host comes before the one across the fleet."""
    codes = set(codes)
    fixes = [f for f in all_fixes() if backend is None or backend in f.backends]
    chosen = [f for f in fixes if f.scope == HOST_SCOPE and codes & set(f.resolves)]
    covered = {c for f in chosen for c in f.resolves}
    chosen += [f for f in fixes if f.scope == FLEET_SCOPE and (codes - covered) & set(f.resolves)]
    return sorted(chosen, key=lambda f: f.code)
