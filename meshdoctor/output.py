"""How a command ends: its verdict printed (human, JSON, or another ``--format``, to standard output
or written atomically to ``--output FILE``) and the exit code, and the one place an unexpected
exception becomes the internal-error result MD100 and exit 3 (:func:`internal_error`).

The ``--json`` path never imports rich: :mod:`meshdoctor.render.verdict` is imported only for human output.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from typing import NoReturn, Optional, Sequence

import click

from meshdoctor.codes.engine import INTERNAL_ERROR
from meshdoctor.model import EXIT_UNKNOWN, Result, Verdict
from meshdoctor.streams import to_devnull
from meshdoctor.text import one_line, shell_line

# Key in click's ``Context.meta`` (shared by the group's and the command's contexts) under which a
# command leaves the verdict it is building, with how to print it (:func:`report_to`).
_REPORT = "meshdoctor.report"
# Key in ``Context.meta`` under which the command's output options leave its :class:`Sink`.
_SINK = "meshdoctor.sink"

FORMATS = ("human", "json", "prometheus", "oneline", "junit")
# the modules of meshdoctor.render that write each machine format from the verdict document
_RENDERERS = {"prometheus": "prometheus", "oneline": "oneline", "junit": "junit"}


@dataclass(frozen=True)
class Sink:
    """Where and how the running command's verdict goes: ``fmt`` one of :data:`FORMATS`,
    ``path`` the ``--output`` file (None: standard output), ``unknown_as`` the exit status of an
    unknown verdict (``go``, ``no-go``; None: 3, :meth:`meshdoctor.model.Verdict.exit_status`)."""

    fmt: str = "human"
    path: Optional[str] = None
    unknown_as: Optional[str] = None


def use_sink(sink: Sink) -> None:
    """Make ``sink`` the way the running click command prints its verdict (:func:`emit`)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_SINK] = sink


def _sink(as_json: bool) -> Sink:
    ctx = click.get_current_context(silent=True)
    sink = ctx.meta.get(_SINK) if ctx is not None else None
    return sink if sink is not None else Sink("json" if as_json else "human")


def rendered(verdict: Verdict, fmt: str, *, quiet: bool = False) -> str:
    """``verdict`` as the text of format ``fmt`` (:data:`FORMATS`; human: plain text without
    colour, as written to a file)."""
    if fmt == "json":
        return to_json(verdict.to_dict()) + "\n"
    if fmt in _RENDERERS:
        import importlib

        module = importlib.import_module(f"meshdoctor.render.{_RENDERERS[fmt]}")
        return module.render(verdict.to_dict())
    import io

    from meshdoctor.render import verdict as render

    buf = io.StringIO()
    render.verdict(verdict, quiet=quiet, out=render.plain_console(buf))
    return buf.getvalue()


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` with :func:`meshdoctor.receipts.write_path`: a
    regular file is replaced as a reader never sees half of it (a temporary file in the same
    folder named ``.NAME.PID.RANDOM.tmp``, which node_exporter's textfile collector ignores: it
    reads only ``*.prom``; fsynced, renamed over it), mode 0644 less the umask (node_exporter
    reads it as another user); a device, FIFO or ``/dev/stdout`` is written in place, never
    replaced. Raises OSError."""
    from meshdoctor.receipts import write_path

    write_path(path, text.encode("utf-8"), mode=0o644)


def _finite(obj):
    """``obj`` with every NaN or infinity replaced by None (they are not JSON)."""
    import math

    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(doc: dict) -> str:
    """Strict JSON text of a verdict document: no NaN/Infinity, unknown types as strings."""
    try:
        return json.dumps(doc, indent=2, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(doc), indent=2, default=str, allow_nan=False)


def report_to(verdict: Verdict, *, as_json: bool, quiet: bool = False) -> Verdict:
    """Make ``verdict`` the one the running command reports, printed as ``as_json``/``quiet``
    say: from now until :func:`emit`, an unexpected exception becomes its internal-error result
    (:func:`internal_error`) instead of a lost verdict. Returns ``verdict``. Outside a click
    command (no current context) it only returns ``verdict``."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_REPORT] = (verdict, as_json, quiet)
    return verdict


# A remedy that asks to run the same command again ("probe again", "Run the check again",
# "probe again without --timeout"): its command is that command with the options that produced
# the result (a re-run of bare ``meshdoctor probe`` would probe two local ranks instead).
_AGAIN = re.compile(
    r"\b(probe|run the check|check|run it) again(?: without (--[a-z][a-z-]*))?", re.IGNORECASE
)
_WORDS = {"probe": "probe", "run the check": "check", "check": "check"}


def rerun_command(verdict: Verdict, argv: Sequence[str], text: str) -> Optional[str]:
    """The command line to paste for a remedy ``text`` that asks to run ``verdict``'s command
    again: ``meshdoctor`` with ``argv`` (the command's own words, ``sys.argv[1:]``), an option
    the text says to leave out (``without --timeout``) dropped with its value; None when the
    text asks for no re-run of this command, or ``argv`` is not this command's (a node check
    run by the fleet check: ``--facts``)."""
    m = _AGAIN.search(text)
    if not m or not argv or argv[0] != verdict.command or "--facts" in argv:
        return None
    if _WORDS.get(m.group(1).lower(), verdict.command) != verdict.command:
        return None
    words, drop = list(argv), m.group(2)
    if drop:
        kept = []
        skip = False
        for i, w in enumerate(words):
            if skip:
                skip = False
                continue
            if w == drop:
                nxt = words[i + 1] if i + 1 < len(words) else ""
                skip = bool(nxt) and not nxt.startswith("-")
                continue
            if w.startswith(drop + "="):
                continue
            kept.append(w)
        words = kept
    return shell_line(["meshdoctor", *words])


def program(argv0: Optional[str] = None, path: Optional[str] = None) -> str:
    """How to run this meshdoctor again where the user is: ``meshdoctor`` when that name on
    ``PATH`` (``path``, default this process's) is the program that ran, else the path the user
    typed (``argv0``, default ``sys.argv[0]``: ``.venv/bin/meshdoctor`` from a venv that is not
    on ``PATH``), as one word (quote it with :func:`meshdoctor.text.shell_line`).
    ``python -m meshdoctor`` and a bare name typed stay ``meshdoctor``."""
    import shutil

    argv0 = sys.argv[0] if argv0 is None and sys.argv else (argv0 or "")
    if os.path.basename(argv0) != "meshdoctor" or os.sep not in argv0:
        return "meshdoctor"
    found = shutil.which("meshdoctor", path=path)
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return "meshdoctor"
    return argv0


def as_run(text: str, prog: Optional[str] = None) -> str:
    """``text`` (a remedy's command, or prose quoting commands in backquotes) with each
    ``meshdoctor ...`` command it gives written with :func:`program` (``prog``) instead."""
    prog = shell_line([prog or program()])
    if prog == "meshdoctor" or "meshdoctor" not in text:
        return text
    if text.startswith("meshdoctor "):
        text = prog + text[len("meshdoctor") :]
    return re.sub(r"(`|\$ )meshdoctor(?= )", lambda m: m.group(1) + prog, text)


def _reruns(verdict: Verdict) -> None:
    """Give every remedy that asks to run this command again, and has no command of its own,
    the command with its options (:func:`rerun_command`); then write every ``meshdoctor ...``
    command of a remedy as the program that ran is called (:func:`as_run`)."""
    argv = sys.argv[1:]
    prog = program()
    for r in verdict.results:
        rem = r.remediation
        if rem is not None and not rem.command:
            rem.command = rerun_command(verdict, argv, rem.text)
        if rem is not None and prog != "meshdoctor":
            rem.text = as_run(rem.text, prog)
            rem.command = as_run(rem.command, prog) if rem.command else rem.command


def emit(verdict: Verdict, *, as_json: bool, quiet: bool = False) -> NoReturn:
    """Print ``verdict`` as the command's :class:`Sink` says (set by its output options,
    ``--format``/``--output``/``--unknown-as``; without one JSON or rich as ``as_json`` says)
    and exit with its exit status (:meth:`meshdoctor.model.Verdict.exit_status`). Each result
    carries the title its producer gave it (its code's entry's title). A crash while printing is
    not added to the verdict again: it ends as :func:`internal_error` does without a verdict.
    An ``--output`` file that cannot be written is said on stderr, exit 3."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.pop(_REPORT, None)
    sink = _sink(as_json)
    verdict.finish()
    _reruns(verdict)
    status = verdict.exit_status(sink.unknown_as)
    try:
        if sink.path is not None:
            try:
                write_atomic(sink.path, rendered(verdict, sink.fmt, quiet=quiet))
            except OSError as exc:
                sys.stderr.write(
                    f"meshdoctor: cannot write --output {one_line(sink.path)}: "
                    f"{one_line(exc.strerror or exc)}\n"
                )
                sys.exit(EXIT_UNKNOWN)
        elif sink.fmt == "human":
            from meshdoctor.render import verdict as render

            render.verdict(verdict, quiet=quiet)
            if status != verdict.exit_code:
                sys.stdout.write(f"--unknown-as {sink.unknown_as}: exit {status}\n")
        else:
            sys.stdout.write(rendered(verdict, sink.fmt, quiet=quiet))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): the exit code still tells
        to_devnull(1)
    sys.exit(status)


def internal_error_result(exc: BaseException) -> Result:
    """The result an unexpected exception becomes: code MD100
    (:data:`meshdoctor.codes.engine.INTERNAL_ERROR`), status error."""
    return Result(
        code=INTERNAL_ERROR.code,
        check="meshdoctor",
        title=INTERNAL_ERROR.title,
        status="error",
        summary=f"internal error: {type(exc).__name__}: {exc}",
    )


def internal_error(exc: Exception, ctx: Optional[click.Context] = None) -> NoReturn:
    """End the command that raised ``exc`` (an exception no part of it handled), the one place
    this happens for every command:

    * while the command builds a verdict (:func:`report_to`, looked up in ``ctx``): the verdict
      so far gets the internal-error result MD100 and is printed as usual (``--json`` stays one
      document); exit 3, could not assess, or 1 when something had already failed;
    * else a reader that went away (``| head``, EPIPE) ends it quietly with status 0: a closed
      pipe is not a verdict;
    * else one line ``meshdoctor: internal error: TYPE: MESSAGE`` on stderr, exit 3.

    Standard output that cannot be written (:class:`meshdoctor.streams.StdoutUnwritable`, a
    full disk) comes first: one line ``meshdoctor: cannot write standard output: ...``, exit 3.
    """
    from meshdoctor.streams import StdoutUnwritable, say_unwritable

    report = ctx.meta.pop(_REPORT, None) if ctx is not None else None
    if isinstance(exc, StdoutUnwritable):  # the verdict cannot reach its reader: say why
        say_unwritable(exc)
        sys.exit(EXIT_UNKNOWN)
    if report is not None:
        verdict, as_json, quiet = report
        verdict.results.append(internal_error_result(exc))
        emit(verdict, as_json=as_json, quiet=quiet)
    if isinstance(exc, BrokenPipeError):
        to_devnull(1)
        sys.exit(0)
    sys.stderr.write(f"meshdoctor: {one_line(internal_error_result(exc).summary)}\n")
    sys.exit(EXIT_UNKNOWN)
