"""What several commands share of their options: the ``--timeout`` and duration types, ``--hostfile`` parsing
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


class OutputFile(click.Path):
    """A file meshdoctor writes at the user's word (``--output``, ``--healthy-hostfile``,
    ``launch --json``/``--log``, ``bundle -o``, ``probe --save-baseline``): judged when the
    options are read, before any work, by :func:`meshdoctor.receipts.output_problem` (a folder,
    a block device, a link owned by another user or into another user's folder, a folder that
    does not exist or cannot be written: a usage error, exit 2). Completed as a file name."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value, param, ctx):
        from meshdoctor.receipts import output_problem
        from meshdoctor.text import one_line

        value = super().convert(value, param, ctx)
        why = output_problem(value)
        if why is not None:
            self.fail(f"{one_line(value)!r}: {one_line(why)}", param, ctx)
        return value


def load_checks():
    """Every check; a module in MESHDOCTOR_EXTRA_CHECKS that cannot be used is a usage error
    (exit 2) naming the module and why."""
    from meshdoctor.checker.registry import ExtraCheckError, all_checks

    try:
        return all_checks()
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None


# Seconds a hostfile may take to arrive. A file reads at once; a pipe (``--hostfile -``,
# ``<(...)``) or a FIFO whose writer has not finished within this is not going to send a
# hostfile of a few KB: the read is given up (the command ends as a usage error saying so).
HOSTFILE_READ_S = 30.0


def load_hostfile(path: Optional[str], interrupts=None):
    """The hostfile at ``path`` (``-``: read from standard input; None: none); one that cannot
    be used is a usage error (exit 2) on ``--hostfile``. The read runs under a deadline of
    :data:`HOSTFILE_READ_S` seconds (a FIFO with no writer, a pipe that never ends) and, while
    it waits, a signal stops it: ``KeyboardInterrupt(<signal name>)`` is raised here, through
    ``interrupts`` (:class:`meshdoctor.interrupts.Interrupts`, armed for the wait; None: the
    one of click's context, else a recorded signal is raised when the wait ends)."""
    if path is None:
        return None
    from meshdoctor import deadline
    from meshdoctor.hostfile.load import HostfileError, load
    from meshdoctor.interrupts import Interrupts

    if interrupts is None:
        ctx = click.get_current_context(silent=True)
        interrupts = ctx.find_object(Interrupts) if ctx is not None else None
    was_armed = bool(interrupts is not None and interrupts.is_armed)
    try:
        if interrupts is not None:
            interrupts.arm()  # a signal while the read waits stops the wait (PEP 475 would retry)
        # "-" is standard input; read up to hostfile.load.MAX_BYTES
        finished, hf = deadline.call(lambda: load(path), HOSTFILE_READ_S, name="hostfile")
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hostfile") from None
    finally:
        if interrupts is not None and not was_armed:
            interrupts.disarm()
    if not finished:
        where = "standard input" if path == "-" else path
        raise click.BadParameter(
            f"{where}: no complete hostfile within {HOSTFILE_READ_S:g} s (a pipe or FIFO whose "
            "writer did not finish); pass the mlx.launch hostfile as a file",
            param_hint="--hostfile",
        )
    return hf


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


def output_options(command):
    """The output options every command that ends in a verdict takes (``check``, ``probe``,
    ``triage``, ``fix``), as one decorator put right above the function:
    ``--format human|json|prometheus|oneline|junit``, ``--output FILE`` (written atomically,
    :func:`meshdoctor.output.write_atomic`) and ``--unknown-as go|no-go``. ``--json`` stays as
    it was (``--format json``); ``--json`` with another format is a usage error (exit 2). The
    choice becomes the command's :class:`meshdoctor.output.Sink`; a machine format also passes
    ``as_json=True`` to the command, so nothing but the verdict reaches its output."""
    import functools

    from meshdoctor.output import FORMATS, Sink, use_sink

    @functools.wraps(command)
    def run(*args, fmt=None, output=None, unknown_as=None, **kwargs):
        if kwargs.get("as_json") and fmt not in (None, "json"):
            raise click.UsageError(f"--json and --format {fmt} ask for two formats: give one")
        fmt = fmt or ("json" if kwargs.get("as_json") else "human")
        use_sink(Sink(fmt, output, unknown_as))
        if fmt != "human" and "as_json" in kwargs:
            kwargs["as_json"] = True
        return command(*args, **kwargs)

    for option in reversed(
        (
            click.option(
                "--format",
                "fmt",
                type=click.Choice(FORMATS),
                default=None,
                help="How to print the verdict: human (default), json (as --json), "
                "prometheus (node_exporter textfile), oneline (node-problem-detector, at most "
                "80 bytes), junit (JUnit XML for CI).",
            ),
            output_option(
                "Write the verdict to FILE instead of standard output, atomically "
                "(a temporary file in the same folder, then renamed over FILE; a device or "
                "FIFO is written in place, a folder refused)."
            ),
            click.option(
                "--unknown-as",
                "unknown_as",
                type=click.Choice(["go", "no-go"]),
                default=None,
                help="Exit status of an unknown verdict (could not assess): go 0, no-go 1 "
                "(default 3); the verdict printed stays unknown.",
            ),
        )
    ):
        run = option(run)
    return run


def picture_ready(path: str, option: str) -> None:
    """A usage error before anything runs when ``path`` cannot be drawn (its suffix, or
    matplotlib not installed: how to install it)."""
    from meshdoctor.render.pictures import PictureError, require

    try:
        require(path)
    except PictureError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


def draw_picture(draw, path: str) -> None:
    """Draw a picture; one that cannot be written is said on stderr, the verdict kept."""
    try:
        draw()
    except Exception as exc:  # a picture is never worth the verdict
        from meshdoctor.text import one_line

        click.echo(f"meshdoctor: could not write {one_line(path)}: {one_line(exc)}", err=True)


# The options several commands take, each declared once (as pip's ``cmdoptions``): a factory
# gives the click decorator; what differs between commands (what the hostfile is for, the
# deadline's bounds) is its argument, the rest (name, flags, type, default) is written here.
# tests/invariants/test_options.py checks no command declares one of these names itself.
SHARED = ("--json", "--quiet", "--strict", "--hostfile", "--hosts", "--timeout", "--python")
SHARED += ("--output", "--yes", "--healthy-hostfile", "--local-only", "--no-check")


def json_option(help: str = "Print the verdict as one JSON document."):
    """``--json`` (a flag, the parameter ``as_json``): the verdict (or listing) as one JSON
    document on standard output."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def json_file_option(help: str):
    """``--json FILE`` (the parameter ``json_path``) of a command whose standard output is not
    its own (``launch``: the job's): the verdict written to FILE (:class:`OutputFile`)."""
    return click.option(
        "--json", "json_path", default=None, metavar="FILE", type=OutputFile(), help=help
    )


def quiet_option():
    """``--quiet``/``-q``: print only failures and errors."""
    return click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")


def strict_option():
    """``--strict``: warnings count as failures (no-go)."""
    return click.option("--strict", is_flag=True, help="Treat warnings as failures (no-go).")


def yes_option(help: str):
    """``--yes``/``-y``: do what is planned without asking (destructive actions need it)."""
    return click.option("--yes", "-y", is_flag=True, help=help)


def hostfile_option(help: str, *, stdin: bool = False):
    """``--hostfile PATH`` (None when not passed; read by :func:`load_hostfile`): the
    mlx.launch hostfile; ``stdin``: ``-`` reads it from standard input (``help`` says so)."""
    return click.option(
        "--hostfile", type=click.Path(dir_okay=False, allow_dash=stdin), default=None, help=help
    )


def hosts_option(help: str, *, metavar: str = "HOSTS"):
    """``--hosts A,B,C`` (None when not passed): the hosts named instead of a hostfile; at most
    one of the two (:func:`one_host_source`)."""
    return click.option("--hosts", default=None, metavar=metavar, help=help)


def timeout_option(help: str, *, high: float = 3600, default: Optional[float] = 10.0):
    """``--timeout SECONDS``: a deadline in seconds from 0.1 to ``high`` (:class:`Seconds`);
    ``default`` is shown in the help unless None (the command then sizes its own)."""
    return click.option(
        "--timeout",
        type=Seconds(0.1, high),
        default=default,
        show_default=default is not None,
        help=help,
    )


def python_option():
    """``--python PATH``: the interpreter that runs meshdoctor on remote hosts."""
    return click.option(
        "--python",
        "python",
        default=None,
        metavar="PATH",
        help="Interpreter that runs meshdoctor on remote hosts (default: "
        "MESHDOCTOR_REMOTE_PYTHON, else this interpreter's path).",
    )


def output_option(help: str, *, metavar: str = "FILE", short: bool = False):
    """``--output FILE`` (``-o`` too with ``short``): a file meshdoctor writes
    (:class:`OutputFile`, judged before any work)."""
    names = ("-o", "--output") if short else ("--output",)
    return click.option(*names, type=OutputFile(), default=None, metavar=metavar, help=help)


def healthy_hostfile_option(help: str):
    """``--healthy-hostfile OUT``: the hostfile restricted to the hosts that passed
    (:mod:`meshdoctor.submesh`), written to OUT (:class:`OutputFile`)."""
    return click.option(
        "--healthy-hostfile",
        "healthy_hostfile",
        type=OutputFile(),
        default=None,
        metavar="OUT",
        help=help,
    )


def local_only_option(help: str, *, hidden: bool = False):
    """``--local-only``: this host's share only (fleet mode runs it on each host)."""
    return click.option("--local-only", is_flag=True, hidden=hidden, help=help)


def no_check_option(help: str):
    """``--no-check``: skip the fleet check that gates a launch."""
    return click.option("--no-check", is_flag=True, help=help)
