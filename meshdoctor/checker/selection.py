"""Choosing checks by ``--only``/``--skip``: the one filter and the one set of usage rules.

``meshdoctor check`` (one node) and its fleet mode (:mod:`meshdoctor.checker.fleet`, node and
cross-node checks together) validate a selection the same way, with the same messages: a code
or name no check has is unknown, and a selection that leaves nothing to run is refused (a gate
that runs nothing must not say go). Both are usage errors (exit 2) on ``--only/--skip``.
"""

from __future__ import annotations

from typing import Iterable, List, Sequence, Set, TypeVar

NOTHING_TO_RUN = "--only and --skip leave no check to run; a gate that runs nothing must not say go"

C = TypeVar("C")  # a Check or a FleetCheck: anything with a ``code`` and a ``name``


class SelectionError(ValueError):
    """``--only``/``--skip`` name an unknown check or leave nothing to run (a usage error, exit
    2, on ``--only/--skip``); the message says which."""


def keys(check) -> Set[str]:
    """The words that select ``check``: its code and its name, lower case."""
    return {check.code.lower(), check.name.lower()}


def select(checks: Sequence[C], only: Sequence[str], skip: Sequence[str]) -> List[C]:
    """Filter by codes or names (``--only``/``--skip``); matching is case-insensitive. An empty
    ``only`` keeps every check."""
    only_l = {k.lower() for k in only}
    skip_l = {k.lower() for k in skip}
    return [c for c in checks if (not only_l or keys(c) & only_l) and not keys(c) & skip_l]


def refuse_unknown(words: Iterable[str], checks: Iterable) -> None:
    """Raise :class:`SelectionError` naming each of ``words`` that is neither the code nor the
    name of one of ``checks``."""
    known = set().union(*(keys(c) for c in checks))
    unknown = [k for k in words if k.lower() not in known]
    if unknown:
        raise SelectionError(f"unknown check {', '.join(unknown)}; see `meshdoctor list-checks`")


def chosen(checks: Sequence[C], only: Sequence[str], skip: Sequence[str]) -> List[C]:
    """:func:`select` after :func:`refuse_unknown`; raises :class:`SelectionError` for an
    unknown word or an empty selection (:data:`NOTHING_TO_RUN`)."""
    refuse_unknown(list(only) + list(skip), checks)
    out = select(checks, only, skip)
    if not out:
        raise SelectionError(NOTHING_TO_RUN)
    return out
