"""Where a Python process stood when it died of a native error: the dump Python's
faulthandler prints after ``Fatal Python error: Aborted`` (or ``Segmentation fault``, ``Bus
error``), one block per thread, each ``File "PATH", line N in FUNC`` from the innermost call
outwards. A native failure read from the line before it (an MLX allocation too large, a Metal
command buffer error, a C++ exception that aborted) says what failed; the dump's innermost
frame says which code of the program asked for it.

Source: Python's faulthandler module documentation (its dump format; "Current thread" marks
the thread that crashed since Python 3.12's all-threads dump)."""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from meshdoctor.signatures import CONSEQUENCE, printable
from meshdoctor.signatures.pyerrors import package_of
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input

_FATAL = re.compile(r"^Fatal Python error: (?P<what>\S.*)")
_THREAD = re.compile(r"^(?P<current>Current thread|Thread) 0x[0-9a-fA-F]+ .*most recent call first")
_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
BEFORE = 40  # a finding this many lines above the dump is the failure it follows
DUMP_LINES = 400  # the dump is read this far for its crashed thread


def _innermost(lines: Sequence[Tuple[int, str]]) -> Optional[Tuple[int, str, str, str]]:
    """The crashed thread's innermost frame in a dump's ``lines`` (after its Fatal line): the
    ``Current thread`` block's first frame, else the first block's; (line number, file, line,
    function) or None."""
    blocks: List[Tuple[bool, List[Tuple[int, str, str, str]]]] = []
    for n, text in lines[:DUMP_LINES]:
        head = _THREAD.match(text)
        if head:
            blocks.append((head.group("current") == "Current thread", []))
            continue
        fr = _FRAME.match(text)
        if fr and blocks:
            blocks[-1][1].append((n, fr.group("file"), fr.group("line"), fr.group("func")))
    chosen = next((b for cur, b in blocks if cur and b), None) or next(
        (b for _, b in blocks if b), None
    )
    return chosen[0] if chosen else None


def amend(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; a finding of the lines just above a faulthandler dump (within
    :data:`BEFORE` lines, not a consequence) gets the dump's innermost frame, and the package
    whose code it is, in its meaning."""
    by_source = {}
    for f in findings:
        if f.role != CONSEQUENCE and f.match.lineno:
            by_source.setdefault(f.source, []).append(f)
    for inp in inputs:
        mine = by_source.get(inp.source)
        if not mine:
            continue
        lines = list(input_lines(inp))
        at = next((k for k, (_, t) in enumerate(lines) if _FATAL.match(t)), None)
        if at is None:
            continue
        fatal_no = lines[at][0]
        frame = _innermost(lines[at + 1 :])
        near = [f for f in mine if 0 <= fatal_no - f.match.lineno <= BEFORE]
        if frame is None or not near:
            continue
        n, file, line, func = frame
        pkg = package_of(file)
        said = printable(
            f"Python's faulthandler dump ({inp.source}:{n}) shows where the process stood: "
            f"{file}, line {line}, in {func}, the innermost frame of the thread that crashed"
            + (f" ({pkg}'s code asked for the operation that failed)" if pkg else "")
        )
        f = max(near, key=lambda x: x.match.lineno)
        reading.add_here(f, said)
    return []
