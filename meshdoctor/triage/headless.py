"""A Python traceback pasted without its ``Traceback (most recent call last):`` header: its
``File "PATH", line N, in FUNC`` frames right above the exception line, which the scanner then
reads as a bare exception (no record opens without the header). The frames say where it was
raised and whose code that is, as a whole traceback's would.

Source: the Python reference, "traceback" module (the frame lines' format)."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from meshdoctor.signatures import printable
from meshdoctor.signatures.scanner import innermost
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input

_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')
ABOVE = 60  # the frames are looked for this many lines above the exception line


def _frames_above(lines: Dict[int, str], at: int) -> Tuple[List[str], int]:
    """The traceback lines just above line ``at`` (frames, their code and ``^^^`` marks, blank
    lines; indented lines of a logger's record too), outermost first, and the number of the
    first of them; ``([], at)`` when no frame line is among them."""
    block: List[str] = []
    first = at
    for n in range(at - 1, max(0, at - ABOVE) - 1, -1):
        text = lines.get(n)
        if text is None or not (_FRAME.match(text) or text[:1] in (" ", "\t") or not text.strip()):
            break
        block.append(text)
        first = n
    block.reverse()
    if not any(_FRAME.match(t) for t in block):
        return [], at
    return block, first


def amend(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; a bare exception line (a match with group ``bare``) that has traceback
    frames right above it is read as the whole traceback: its class and innermost frame (and
    the code that called a library which only carried the call) go into its groups, its
    meaning and remedy are the signature's for them, and the Here says the header was not
    pasted."""
    by_source = {x.source: x for x in inputs}
    cache: Dict[str, Dict[int, str]] = {}
    for f in findings:
        groups = f.match.groups
        inp = by_source.get(f.source)
        if not groups.get("bare") or inp is None or not f.match.lineno or f.match.sig is None:
            continue
        if f.source not in cache:
            cache[f.source] = dict(input_lines(inp))
        frames, first = _frames_above(cache[f.source], f.match.lineno)
        if not frames:
            continue
        new = {k: v for k, v in groups.items() if k != "bare"}
        new["type"] = groups["bare"]
        new.update(innermost(frames))
        sig = f.match.signature
        f.match.groups = new
        f.match.meaning = sig.meaning_for(new)
        f.match.remedy = sig.remedy_for(new)
        f.match.context = [printable(t.strip()) for t in frames if t.strip()][-4:]
        reading.add_here(
            f,
            printable(
                f"its traceback's frames are on the lines above it ({f.source}:{first}-"
                f"{f.match.lineno - 1}), pasted without the `Traceback (most recent call "
                "last):` header"
            ),
        )
    return []
