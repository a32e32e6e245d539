"""Discovery by declaration: the one walk that finds the checks, the fleet checks and the fixes.

A check, fleet check or fix is a module that declares one module-level value (``CHECK``,
``FLEET_CHECK``, ``FIX``); nothing imports them one by one. :func:`declared` walks a package's
modules with :mod:`pkgutil` (names starting with ``_`` are private and left out), then any extra
modules named by the caller (``MESHDOCTOR_EXTRA_CHECKS``), and yields each declared value. It
knows nothing of what it collects: each registry (:mod:`meshdoctor.checker.registry`,
:mod:`meshdoctor.checker.fleet_model`, :mod:`meshdoctor.fixer.registry`) keeps its own rules
(codes, ranges, duplicates). :func:`exporters` reads what the checks declare they export
(``exports``) for the readers that must not name a code.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from meshdoctor.model import EXPORTS, Export


def module_names(package: str) -> List[str]:
    """The full names of the public modules of ``package`` (``meshdoctor.checks``), in
    :func:`pkgutil.iter_modules` order; a name starting with ``_`` is left out."""
    pkg = importlib.import_module(package)
    return [
        f"{pkg.__name__}.{m.name}"
        for m in pkgutil.iter_modules(pkg.__path__)
        if not m.name.startswith("_")
    ]


def declared(
    package: str,
    attr: str,
    kind: type,
    extras: Sequence[str] = (),
    refuse: Optional[Callable[[str, str], Exception]] = None,
) -> Iterator[Tuple[str, Any]]:
    """``(module name, value)`` for each module of ``package`` (:func:`module_names`), then each
    module named in ``extras``, whose ``attr`` is a ``kind``, importing each as it goes.

    A module of ``package`` that fails to import raises its own exception; one whose ``attr`` is
    missing or of another type is not a declaration and is passed over. A module named in
    ``extras`` must declare one: when it does not import, or declares none, the exception
    ``refuse(name, why)`` returns is raised, ``why`` being ``"which could not be imported:
    TYPE: MESSAGE"`` or ``"which defines no ATTR = KIND(...)"`` (``refuse`` is required with
    ``extras``)."""
    extra = set(extras)
    for name in module_names(package) + list(extras):
        try:
            mod = importlib.import_module(name)
        except Exception as exc:
            if name not in extra or refuse is None:
                raise
            raise refuse(
                name, f"which could not be imported: {type(exc).__name__}: {exc}"
            ) from None
        value = getattr(mod, attr, None)
        if isinstance(value, kind):
            yield name, value
        elif name in extra and refuse is not None:
            raise refuse(name, f"which defines no {attr} = {kind.__name__}(...)")


# the packages and attributes of the declarations that may export a value (Check, FleetCheck)
EXPORTING = (("meshdoctor.checks", "CHECK"), ("meshdoctor.checks.fleet", "FLEET_CHECK"))


@functools.lru_cache(maxsize=None)
def _exported() -> Dict[str, Tuple[Tuple[str, str], ...]]:
    found: Dict[str, List[Tuple[str, str]]] = {}
    for package, attr in EXPORTING:
        for _, value in declared(package, attr, object):
            for e in getattr(value, "exports", ()) or ():
                if isinstance(e, Export):
                    found.setdefault(e.name, []).append((value.code, e.key))
    return {name: tuple(sorted(pairs)) for name, pairs in found.items()}


def exporters(name: str) -> Dict[str, str]:
    """Code -> evidence key, for each check that declares it exports ``name`` (a key of
    :data:`meshdoctor.model.EXPORTS`): what a renderer or the sub-mesh split reads instead of
    naming a code. Walks the checks' declarations once (:func:`declared`), importing them."""
    if name not in EXPORTS:
        raise ValueError(f"{name!r} is not an export (meshdoctor.model.EXPORTS)")
    return dict(_exported().get(name, ()))


def exported(result: Any, name: str) -> Any:
    """The value ``result`` (a :class:`meshdoctor.model.Result` or its JSON dict) exports as
    ``name``, None when its check exports no such value or the evidence lacks it."""
    code = result.get("code") if isinstance(result, dict) else result.code
    key = exporters(name).get(code)
    if key is None:
        return None
    ev = result.get("evidence") if isinstance(result, dict) else result.evidence
    return ev.get(key) if isinstance(ev, dict) else None
