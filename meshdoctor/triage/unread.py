"""An error line no signature reads: the input says it failed, in words the catalogue lacks.

A log whose only failure is another program's message (a UCX or NVSHMEM error, a kernel
driver's NVRM line, a tool's "Couldn't ..." line, a logger's ERROR line) matches no signature,
and a verdict of GO on it would tell the user nothing failed. Triage names it with MD883, a
finding it makes itself.

The rule (:func:`readings`): no other finding at all, no ``--exit-code 0`` (a job that
succeeded printed a benign error line), and a line of an input's text (a small
log's whole text; a large one's first and last bytes) at an error level
(:func:`meshdoctor.triage.levels.is_error_line`). The first such line is
the finding's; when the error lines are a Python traceback's frames without its exception
line (a logger that prefixes each line), the innermost frame is named instead, with what a
cut at that call says (:func:`meshdoctor.signatures.native.cut_note`). With no error line, a
debugger's backtrace (gdb's ``#N`` frames) is read instead: its first frame that is not the
system's names the code at fault.
"""

from __future__ import annotations

import re
from typing import List, Sequence, Tuple

from meshdoctor.signatures import mlx_classes, printable, pyerrors, syserrors
from meshdoctor.signatures.frames import is_system_frame, parse_frame
from meshdoctor.signatures.model import signature
from meshdoctor.signatures.native import cut_note, weights_detail
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.collect import exit_source
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.levels import ESTIMATE, is_error_line
from meshdoctor.triage.reading import entry, with_why

CODE = "MD883"

UNREAD_SIG = signature(
    CODE,
    "triage.unread-error",
    None,
    "A line of the input reports an error that no signature of meshdoctor's catalogue reads "
    "(or, with no error line, a debugger's backtrace shows where a process stood): the "
    "program that printed it names its own failure, in its own words, and nothing else in "
    "the input says more. The catalogue reads MLX's, NCCL's, CUDA's, PyTorch's and their "
    "launchers' messages; this one is another program's, or a wording it lacks.",
    "Read that line and the lines before it: the program (named by its tag or file:line) "
    "says what failed; search that program's issue tracker for the message's fixed words "
    "(without addresses, numbers and host names) and rerun with its debug logging. When it "
    "is a benign message of a run that went on, the job's exit status says whether it "
    "failed (`meshdoctor triage LOG --exit-code N`).",
    "meshdoctor's catalogue (`meshdoctor list-checks --coverage`); the program's own documentation",
    examples=(),
    causes=[
        (
            "a failure of a library or tool outside the catalogue (UCX, NVSHMEM, a transfer "
            "engine, a container runtime, the kernel driver)",
            "the line's tag or file:line names it",
        ),
        ("a benign error line of a run that went on", "the job's exit status is 0"),
    ],
)

UNREAD_SIG = with_why(
    UNREAD_SIG,
    "A GO on a log that says it failed would hide the failure; an error no reading explains "
    "is still the first thing to read.",
)

ENTRY = entry(UNREAD_SIG, "triage error line no signature reads")

_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_TAG = re.compile(r"(?P<tag>\b[\w.-]+\.(?:cpp|cc|c|cu|py|h|go|rs):\d+)|^\s*(?P<word>[A-Z]{2,}):")
_MAX_SHOWN = 300
_GDB_FRAME = re.compile(r"^\s*#\d+\s")
_FROM = re.compile(r"^\s+from\s+(?P<img>\S+)")


def _backtrace(inp: Input) -> Tuple[int, str, str]:
    """A debugger's backtrace (gdb's ``#N`` frames, two or more) in ``inp``: (the line number,
    the text and the name of its first frame that is not the system's, with the library a
    following ``from LIB`` line names), or (0, "", "") when there is none."""
    lines = list(input_lines(inp))
    frames = []
    for k, (n, t) in enumerate(lines):
        f = parse_frame(t) if _GDB_FRAME.match(t) else None
        if f is None:
            continue
        img = f[0]
        nxt = _FROM.match(lines[k + 1][1]) if k + 1 < len(lines) else None
        if not img and nxt:
            img = nxt.group("img").rsplit("/", 1)[-1]
        frames.append((n, t, (img, f[1])))
    if len(frames) < 2:
        return 0, "", ""
    n, t, (img, sym) = next((x for x in frames if not is_system_frame(x[2])), frames[0])
    return n, t, f"{sym}" + (f" (in {img})" if img else "")


def error_lines(inp: Input) -> List[Tuple[int, str]]:
    """The lines of ``inp`` at an error level (:func:`meshdoctor.triage.levels.is_error_line`)
    or holding MLX's or a model loader's own message (:func:`mlx_classes.logged`: a loader's
    message printed bare), in order: (line number, text)."""
    return [
        (n, t) for n, t in input_lines(inp) if is_error_line(t) or mlx_classes.logged(t) is not None
    ]


# a warning's level word at the start of a line, after at most a timestamp's worth of
# digits and punctuation (bounded: a line is matched whole)
_WARNING = re.compile(r"^[^A-Za-z]{0,40}(?:warning|warn)\b", re.I)


def _first(errors: Sequence[Tuple[int, str]]) -> Tuple[int, str]:
    """The error line that speaks for ``errors``: the first holding MLX's or a model
    loader's own message (:func:`mlx_classes.logged`); else the first, unless it is at a
    warning level (a tool's ``warning:`` before the program's own failure): then the first
    that is neither a warning nor an indented line continuing one, else the first."""
    known = next((e for e in errors if mlx_classes.logged(e[1]) is not None), None)
    if known is not None:
        return known
    if not _WARNING.search(errors[0][1]):
        return errors[0]
    # past the warning and the indented lines that continue it
    return next(
        (e for e in errors if not _WARNING.search(e[1]) and not e[1][:1].isspace()), errors[0]
    )


def _here(inp: Input, errors: Sequence[Tuple[int, str]]) -> Tuple[str, int, str]:
    """What the finding says of ``errors`` (of ``inp``): (its Here part, the line number, the
    line shown)."""
    frames = [(n, t, _FRAME.search(t)) for n, t in errors]
    frames = [(n, t, m) for n, t, m in frames if m]
    n, text = _first(errors)
    more = len(errors) - 1
    if frames and not any(_EXCEPTION.search(t) for _, t in errors):
        # a traceback's frames, each behind a logger's prefix, and no exception line
        fn, ft, fm = frames[-1]
        after = [t for k, t in input_lines(inp) if k > fn][:3]
        code = next((t.split("]", 1)[-1].strip() for t in after if not _FRAME.search(t)), "")
        here = (
            f"a Python traceback whose exception line is not in the input (each line behind a "
            f"logger's prefix); its innermost frame is {fm.group('file')}:{fm.group('line')} "
            f"in {fm.group('func')}" + (f", at `{code}`" if code else "") + cut_note(code + ft)
        )
        return here + ".", fn, ft
    tag = _TAG.search(text)
    who = ""
    if tag is not None:
        who = f" (printed at {tag.group('tag')})" if tag.group("tag") else f" ({tag.group('word')})"
    shown = text.strip()
    if len(shown) > _MAX_SHOWN:
        shown = shown[: _MAX_SHOWN - 3] + "..."
    here = f"'{shown}'{who}" + (
        f"; {more} more error line{'s' if more > 1 else ''} after it" if more else ""
    )
    errno = syserrors.reading(text)
    guard = ESTIMATE.search(text)
    defect = pyerrors.reading(text)
    known = mlx_classes.logged(text)
    if known is not None:  # MLX's or a model loader's own message, logged by the program
        here += f"; the message is MLX's or its model loader's own: {known.text()}"
        detail = weights_detail(text) if known.name == "model.weights-mismatch" else None
        if detail:
            here += f"; {detail}"
    elif errno:
        here += f"; {errno}"
    elif defect:
        here += f"; {defect}"
    elif guard and guard.group("peak"):
        here += (
            "; it is the program's own memory guard stopping the work when the process's "
            "memory passed its ceiling: when memory falls back right after, that was a "
            "transient peak of one step, most often one prefill chunk's attention "
            "activations (they grow with the chunk's length times the context), not resident "
            "memory; prefill in smaller chunks (the engine's prefill or chunk size) or upgrade "
            "the engine (jundot/omlx PR #1523 sizes each chunk by its predicted peak), else "
            "raise the ceiling or shorten the context"
        )
    elif guard:
        here += (
            "; it is the program's own preflight check refusing the work by its estimate, "
            "before anything failed: the estimate may be wrong for this model (a KV cache "
            "or attention it does not model, e.g. a compressed or latent (MLA) cache counted "
            "as dense, as jundot/omlx PR #2626 fixed), so compare the estimated term with "
            "what the model really takes; if it over-estimates, upgrade the program (or relax "
            "its guard), else raise its limit or shorten the context"
        )
    return here + ".", n, text


LOGGED_LINES = 3  # a logger's message this many lines above a traceback is its own


def logged(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; completes a traceback cut before its exception line (MD663 with group
    ``cut``) with what the logger printed just above it: ``logger.exception(msg)`` (Python's
    logging, loguru) writes its message, then the traceback, so a log cut inside the
    traceback still holds the error in that message (``ERROR ] socket.accept() out of system
    resource``). The message, and the system error it names
    (:mod:`meshdoctor.signatures.syserrors`), join the finding's meaning."""
    by_source = {x.source: x for x in inputs}
    for f in findings:
        if f.match.name != "python.exception" or not f.match.groups.get("cut"):
            continue
        inp = by_source.get(f.source)
        if inp is None:
            continue
        start = f.match.lineno
        above = [
            (n, t) for n, t in error_lines(inp) if start - LOGGED_LINES <= n < start and t.strip()
        ]
        if not above:
            continue
        n, text = above[-1]
        shown = text.strip()[:_MAX_SHOWN]
        told = syserrors.reading(text)
        said = printable(
            f"the logger's message above the traceback ({f.source}:{n}) is the error it "
            f"logged: '{shown}'" + (f"; {told}" if told else "")
        )
        reading.add_here(f, said)
    return []


WRAPPED_LINES = 3  # a bare exception line's message may go on this many lines


def wrapped(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; completes a bare exception line (MD663 with group ``bare``) whose
    message was wrapped where it was pasted (``AssertionError: Failed to download X from`` and
    the URL and the status on the next lines): the system error or HTTP status that the
    message and its next lines, up to a blank one, end in
    (:mod:`meshdoctor.signatures.syserrors`) joins the finding's meaning."""
    by_source = {x.source: x for x in inputs}
    for f in findings:
        if f.match.name != "python.exception" or not f.match.groups.get("bare"):
            continue
        inp = by_source.get(f.source)
        msg = f.match.groups.get("msg", "")
        if inp is None or syserrors.reading(msg):
            continue
        at, more = f.match.lineno, []
        for n, t in input_lines(inp):
            if n <= at:
                continue
            if n > at + WRAPPED_LINES or not t.strip():
                break
            more.append(t.strip())
        told = syserrors.reading(" ".join([msg.strip()] + more)) if more else None
        if not told:
            continue
        said = printable(
            f"with the {len(more)} line(s) after it, which go on with its message, {told}"
        )
        reading.add_here(f, said)
    return []


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD883 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (any one of them: none)."""
    if findings or any(x.kind == "exit-code" and x.source == exit_source(0) for x in inputs):
        return []
    for index, inp in enumerate(inputs):
        if inp.kind not in ("log", "stdin") or inp.error:
            continue
        errors = error_lines(inp)
        if not errors:
            lineno, line, frame = _backtrace(inp)
            if not frame:
                continue
            here = (
                "no error line, but a debugger's backtrace: its first frame that is not the "
                f"system's is {frame}. The crash (or the wait) is in that code: upgrade the "
                "library it is in first (a fixed release may exist), then report the backtrace "
                "to its project with its version."
            )
            m = reading.match(
                UNREAD_SIG, printable(here), line=printable(line.strip()), lineno=lineno
            )
            return [reading.at_input(m, index, inp)]
        here, lineno, line = _here(inp, errors)
        m = reading.match(UNREAD_SIG, printable(here), line=printable(line.strip()), lineno=lineno)
        return [reading.at_input(m, index, inp, count=len(errors))]
    return []
