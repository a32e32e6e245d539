"""How a command ends: its verdict printed (JSON or rich) and the exit code, and the one place an
unexpected exception becomes the internal-error result MD100 and exit 3 (:func:`internal_error`).

The ``--json`` path never imports rich: :mod:`meshdoctor.render.verdict` is imported only for human output.
"""

from __future__ import annotations

import json
import re
import sys
from typing import NoReturn, Optional, Sequence

import click

from meshdoctor.codes.engine import INTERNAL_ERROR
from meshdoctor.model import EXIT_UNKNOWN, Result, Verdict
from meshdoctor.streams import to_devnull
from meshdoctor.text import one_line, shell_line

# Key in click's ``Context.meta`` (shared by the group's and the command's contexts) under which a
# command leaves the verdict it is building, with how to print it (:func:`report_to`).
_REPORT = "meshdoctor.report"


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


def _reruns(verdict: Verdict) -> None:
    """Give every remedy that asks to run this command again, and has no command of its own,
    the command with its options (:func:`rerun_command`)."""
    argv = sys.argv[1:]
    for r in verdict.results:
        rem = r.remediation
        if rem is not None and not rem.command:
            rem.command = rerun_command(verdict, argv, rem.text)


def emit(verdict: Verdict, *, as_json: bool, quiet: bool = False) -> NoReturn:
    """Print ``verdict`` (JSON or rich) and exit with its exit code. Each result carries the
    title its producer gave it (its code's entry's title). A crash while printing is not added
    to the verdict again: it ends as :func:`internal_error` does without a verdict."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.pop(_REPORT, None)
    verdict.finish()
    _reruns(verdict)
    try:
        if as_json:
            sys.stdout.write(to_json(verdict.to_dict()) + "\n")
            sys.stdout.flush()
        else:
            from meshdoctor.render import verdict as render

            render.verdict(verdict, quiet=quiet)
    except BrokenPipeError:  # the reader went away (`| head`): the exit code still tells
        to_devnull(1)
    sys.exit(verdict.exit_code)


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
    """
    report = ctx.meta.pop(_REPORT, None) if ctx is not None else None
    if report is not None:
        verdict, as_json, quiet = report
        verdict.results.append(internal_error_result(exc))
        emit(verdict, as_json=as_json, quiet=quiet)
    if isinstance(exc, BrokenPipeError):
        to_devnull(1)
        sys.exit(0)
    sys.stderr.write(f"meshdoctor: {one_line(internal_error_result(exc).summary)}\n")
    sys.exit(EXIT_UNKNOWN)
