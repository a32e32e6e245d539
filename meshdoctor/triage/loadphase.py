"""A GPU out of memory at load: a Metal command buffer that ran out of memory (MD661,
kIOGPUCommandBufferCallbackErrorOutOfMemory or 'Insufficient Memory') right after the program
said it was loading or warming up its model failed before any request, so what did not fit is
the model and its warm-up in the memory free at that moment, not a cache that grew.

Which lines say so: a loader's own words a few lines above the error (loading, weights,
warm-up, compiled). Source: Metal's command buffer errors (MTLCommandBufferError; IOGPU's
kIOGPUCommandBufferCallbackErrorOutOfMemory), MLX's lazy evaluation (weights are evaluated,
and take memory, when the program first evaluates them)."""

from __future__ import annotations

import re
from typing import List, Sequence

from meshdoctor.signatures import printable
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input

CODE = "MD661"  # metal.command-buffer-failed
_OOM = ("OutOfMemory", "Insufficient Memory")
_LOADING = re.compile(
    r"\b(?:[Ll]oad(?:ing|ed)? (?:the )?(?:model|weights|shard)|[Ww]eights|[Ww]arm(?:ing)?[- ]?up|"
    r"[Cc]ompil(?:ed|ing)\b|[Ll]oading)"
)
WINDOW = 8  # a loader's line this many lines above the error


def amend(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; a Metal out-of-memory finding whose input says, within :data:`WINDOW`
    lines above it, that the model was loading or warming up gets that in its meaning."""
    by_source = {x.source: x for x in inputs}
    for f in findings:
        if f.code != CODE or not any(w in f.match.line for w in _OOM):
            continue
        inp = by_source.get(f.source)
        if inp is None:
            continue
        at = f.match.lineno
        above = [
            (n, t) for n, t in input_lines(inp) if at - WINDOW <= n < at and _LOADING.search(t)
        ]
        if not above:
            continue
        n, text = above[-1]
        said = printable(
            f"it failed while the model was loading or warming up ({f.source}:{n}: "
            f"'{text.strip()[:160]}'), before any request: the weights and the warm-up did not "
            "fit in the memory free at that moment. Most often another process still held "
            "memory (an earlier instance of this server not yet exited after a restart, "
            "another model server or app: `ps -axm -o pid,rss,comm | head`, Activity "
            "Monitor), else the model is too large for this Mac; let the old process exit "
            "(or stop it) before loading, or load a smaller model"
        )
        reading.add_here(f, said)
    return []
