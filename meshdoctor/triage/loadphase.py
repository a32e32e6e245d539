"""A GPU out of memory by the phase it failed in: a Metal command buffer that ran out of memory (MD661,
kIOGPUCommandBufferCallbackErrorOutOfMemory or 'Insufficient Memory') right after the program
said it was loading or warming up its model failed before any request, so what did not fit is
the model and its warm-up in the memory free at that moment, not a cache that grew; one after a
trainer said training began (mlx-lm's "Training", "Iter N:") failed on one step's activations,
the longest sequences when mlx-lm warned of them.

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
    r"[Cc]ompil(?:ed|ing)\b|[Ll]oading(?! (?:the )?(?:data|train|valid|test)))"
)
# a line that says the load is over and training began (mlx-lm's trainer: "Training",
# "Starting training..., iters: N", "Iter N: Train loss ...")
_TRAINING = re.compile(r"^\s*(?:Training\b|Starting training|Iter \d+:)")
# mlx-lm's trainer (tuner/trainer.py, iterate_batches): "[WARNING] Some sequences are longer
# than 2048 tokens. ... Consider pre-splitting your data to save memory."
_LONG = re.compile(r"Some sequences are longer than (?P<n>\d+) tokens")
WINDOW = 8  # a loader's line this many lines above the error
TRAIN_WINDOW = 40  # a trainer's lines this many lines above it


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
        lines = [(n, t) for n, t in input_lines(inp) if at - TRAIN_WINDOW <= n < at]
        trained = [n for n, t in lines if _TRAINING.search(t)]
        if trained:
            _in_training(f, lines, trained[0])
            continue
        above = [(n, t) for n, t in lines if at - WINDOW <= n and _LOADING.search(t)]
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


def _in_training(f: Finding, lines: Sequence[tuple], began: int) -> None:
    """A Metal out of memory after a trainer said training began (line ``began``): the
    activations of one step did not fit; with mlx-lm's warning of long sequences, those."""
    long = next((m for _, t in lines for m in [_LONG.search(t)] if m), None)
    said = (
        f"it failed in training ({f.source}:{began} says training began), after the trainer "
        f"warned that some sequences are longer than {long.group('n')} tokens: the "
        "activations of the longest sequences did not fit; pre-split or shorten the data "
        "(mlx_lm.lora --max-seq-length), --batch-size 1, fewer layers (--num-layers), "
        "--grad-checkpoint, or a quantized model (QLoRA)"
        if long
        else f"it failed in training ({f.source}:{began} says training began): one step's "
        "activations did not fit; lower the batch size or the sequence length, train fewer "
        "layers, or turn on gradient checkpointing"
    )
    reading.add_here(f, printable(said))
