"""What several commands share of their options: the ``--timeout`` type, ``--hostfile`` parsing
and the check list that ``check`` and ``list-checks`` both read."""

from __future__ import annotations

from typing import List, Optional

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


class Duration(click.ParamType):
    """A positive duration: ``90s``, ``30m``, ``2h``, ``1d`` (a bare number is seconds)."""

    name = "duration"

    def convert(self, value, param, ctx):
        from meshdoctor.triage.collect import parse_duration

        if isinstance(value, float):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def load_checks():
    """Every check; a module in MESHDOCTOR_EXTRA_CHECKS that cannot be used is a usage error
    (exit 2) naming the module and why."""
    from meshdoctor.checker.registry import ExtraCheckError, all_checks

    try:
        return all_checks()
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None


def load_hostfile(path: Optional[str]):
    """The hostfile at ``path`` (``-``: read from standard input; None: none); one that cannot
    be used is a usage error (exit 2) on ``--hostfile``."""
    if path is None:
        return None
    from meshdoctor.hostfile.load import HostfileError, load

    try:
        return load(path)  # "-" is standard input; read up to hostfile.load.MAX_BYTES
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hostfile") from None


def one_host_source(**given) -> None:
    """The one rule of ``check`` and ``probe`` for the options that name the hosts (``given``:
    option -> value, None when not passed, e.g. ``{"--hostfile": ..., "--hosts": ...}``): at
    most one may be passed; two are a usage error (exit 2) naming both, never one silently
    dropped."""
    from meshdoctor.hostfile.rules import host_sources_conflict

    why = host_sources_conflict([name for name, value in given.items() if value is not None])
    if why:
        raise click.UsageError(why)


def check_environment() -> None:
    """meshdoctor's own environment variables that a command reading them would otherwise
    ignore without a word (``MESHDOCTOR_PLATFORM``, ``MESHDOCTOR_ATTRIBUTE_PIDS``,
    ``MESHDOCTOR_MLX_CACHE``): a value
    they cannot mean is a usage error (exit 2) naming the variable, its value and what it may
    be."""
    from meshdoctor.facts.context import platform_env_problem
    from meshdoctor.facts import mlx_cache
    from meshdoctor.facts.mlx_processes import scope_env_problem

    problems = [
        p for p in (platform_env_problem(), scope_env_problem(), mlx_cache.env_problem()) if p
    ]
    if problems:
        raise click.UsageError("; ".join(problems))


def split_list(values: tuple, option: str, what: str) -> List[str]:
    """The words of a repeatable comma-separated option (``--only A,B --only C``), blanks
    dropped; an option that was passed but names nothing (``--only ''``, ``--only ,,``) is a
    usage error (exit 2) rather than no filter at all: ``OPTION names no WHAT``."""
    out: List[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    if values and not out:
        raise click.BadParameter(f"{option} names no {what}", param_hint=option)
    return out


def command_interrupts(command: str):
    """The interrupt handling the running ``command`` answers for from now on
    (:class:`meshdoctor.interrupts.Interrupts`): the one the entry point installed first thing
    (click's context object), else a new one; installed, and not raising until armed."""
    from meshdoctor.interrupts import Interrupts

    ctx = click.get_current_context(silent=True)
    interrupts = ctx.find_object(Interrupts) if ctx is not None else None
    if interrupts is None:
        interrupts = Interrupts()
    interrupts.disarm()
    interrupts.install()
    interrupts.handled_by = command
    return interrupts
