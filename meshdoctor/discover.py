"""Discovery by declaration: the one walk that finds the checks, the fleet checks and the fixes.

A check, fleet check or fix is a module that declares one module-level value (``CHECK``,
``FLEET_CHECK``, ``FIX``); nothing imports them one by one. :func:`declared` walks a package's
modules with :mod:`pkgutil` (names starting with ``_`` are private and left out), then any extra
modules named by the caller (``MESHDOCTOR_EXTRA_CHECKS``), and yields each declared value. It
knows nothing of what it collects: each registry (:mod:`meshdoctor.checker.registry`,
:mod:`meshdoctor.checker.fleet_model`, :mod:`meshdoctor.fixer.registry`) keeps its own rules
(codes, ranges, duplicates).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple


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
