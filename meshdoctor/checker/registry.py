"""Discovery of checks: every module of ``meshdoctor.checks`` with a ``CHECK``, plus extras.

The engine never imports checks one by one (:func:`meshdoctor.discover.declared` walks the
package); choosing among them (``--only``/``--skip``) is :mod:`meshdoctor.checker.selection`.
Extra check modules (site-specific checks, test doubles) are named, comma-separated, in
``MESHDOCTOR_EXTRA_CHECKS`` as importable module names.
An extra module declares what a built-in one does: ``CHECK = Check(code, name, title, run,
doc=Doc(meaning, why, action, sources))`` with a code in MD101-MD499 that no other check uses;
it then appears in ``list-checks``, ``explain`` and the verdict like any other.
"""

from __future__ import annotations

import os
from typing import Dict, List

from meshdoctor.checker.model import Check
from meshdoctor.discover import declared

EXTRA_ENV = "MESHDOCTOR_EXTRA_CHECKS"


class ExtraCheckError(ValueError):
    """A module named in ``MESHDOCTOR_EXTRA_CHECKS`` cannot be used (it does not import, its
    ``Check`` lacks a complete :class:`meshdoctor.codes.model.Doc`, it defines no ``CHECK``, its
    code is outside the checks' range MD101-MD499, or it reuses a code); the message names the
    module and why. The CLI reports it as a usage error (exit 2)."""


def _extra_names() -> List[str]:
    return [m.strip() for m in os.environ.get(EXTRA_ENV, "").split(",") if m.strip()]


def _refuse(name: str, why: str) -> ExtraCheckError:
    return ExtraCheckError(f"{EXTRA_ENV} names {name!r}, {why}")


def all_checks() -> List[Check]:
    """Every check, sorted by code. Raises :class:`ExtraCheckError` for an extra module that
    does not import, one without a ``CHECK``, or a code defined twice."""
    found: Dict[str, Check] = {}
    extras = set(_extra_names())
    for name, check in declared("meshdoctor.checks", "CHECK", Check, _extra_names(), _refuse):
        if name in extras and not _in_range(check.code):
            raise ExtraCheckError(
                f"{EXTRA_ENV} names {name!r}, whose check code "
                f"{check.code!r} is not a check code (MD101-MD499)"
            )
        if check.code in found and found[check.code] is not check:
            raise ExtraCheckError(
                f"check code {check.code} is defined twice "
                f"({found[check.code].name} and {check.name}); "
                f"check the modules in {EXTRA_ENV}"
            )
        found[check.code] = check
    return sorted(found.values(), key=lambda c: c.code)


def _in_range(code: str) -> bool:
    from meshdoctor.codes.model import CHECK, kind_of

    return kind_of(code) == CHECK
