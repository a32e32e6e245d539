"""What several commands share of their options: the ``--timeout`` type, ``--hostfile`` parsing
and the check list that ``check`` and ``list-checks`` both read."""

from __future__ import annotations

import sys
from typing import Optional

import click


class Seconds(click.ParamType):
    """A finite number of seconds within [``low``, ``high``] (rejects nan and inf, which would
    disable a deadline)."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        import math

        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(v) or not self.low <= v <= self.high:
            self.fail(
                f"{value!r} must be a number of seconds from {self.low:g} to {self.high:g}",
                param,
                ctx,
            )
        return v


def load_checks():
    """Every check; a module in MESHDOCTOR_EXTRA_CHECKS that cannot be used is a usage error
    (exit 2) naming the module and why."""
    from ..registry import ExtraCheckError, all_checks

    try:
        return all_checks()
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None


def load_hostfile(path: Optional[str]):
    """The hostfile at ``path`` (``-``: read from standard input; None: none); one that cannot
    be used is a usage error (exit 2) on ``--hostfile``."""
    if path is None:
        return None
    from ..hostfile import HostfileError, load, parse

    try:
        return parse(sys.stdin.read(), "<stdin>") if path == "-" else load(path)
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hostfile") from None
