"""GPU memory that nccl-tests leaves to NCCL: when NCCL runs out of GPU memory (MD800) in a
run of nccl-tests, the benchmark's own buffers took the rest.

nccl-tests allocates its send, receive and (with data checking, -c 1, the default) expected
buffers at the run's maximum size (-e) on every GPU before NCCL allocates its own, and caps
-e so that (memory - a reserve of 1 GiB per 16 GiB, at most 4 GiB - 1 GiB) holds those three
buffers (two without the check), printing 'Reducing maxBytes to N due to memory limitation'.
NCCL's buffers then take NCCL_BUFFSIZE (4 MiB by default) per channel and peer connection;
all-to-all connects every peer. Sources: NVIDIA/nccl-tests src/common.cu (AllocateBuffs and
the maxBytes cap, commit a0b82b2); NCCL documentation, NCCL_BUFFSIZE."""

from __future__ import annotations

import re
from typing import List, Sequence

from meshdoctor.signatures import printable
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input

CODE = "MD800"  # nccl.cuda-oom
_TESTS = re.compile(
    r"Test (?:NCCL|CUDA) failure|Test failure common\.cu|#\s+nThread \d+ nGpus|"
    r"\b(?:all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|gather|"
    r"scatter|hypercube)_perf\b"
)
_MAXBYTES = re.compile(r"(?:-e|--maxbytes)[ =](?P<e>\d+[KMGT]?)\b|maxBytes (?P<m>\d+)")
_BUFFSIZE = re.compile(r"NCCL_BUFFSIZE=(?P<b>\d+)")


def amend(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """Adds nothing; NCCL's GPU out-of-memory findings of a run whose inputs show nccl-tests
    get what the benchmark's buffers leave to NCCL in their meaning, with the run's -e and
    NCCL_BUFFSIZE where the inputs show them."""
    ooms = [f for f in findings if f.code == CODE]
    if not ooms:
        return []
    text = [t for inp in inputs for _, t in input_lines(inp)]
    if not any(_TESTS.search(t) for t in text):
        return []
    e = next((m.group("e") or m.group("m") for t in text for m in [_MAXBYTES.search(t)] if m), None)
    b = next((m.group("b") for t in text for m in [_BUFFSIZE.search(t)] if m), None)
    said = printable(
        "the job is nccl-tests: it allocates its send, receive and expected buffers at the "
        "run's maximum size (-e) on every GPU before NCCL's own, and caps -e to leave only a "
        "reserve of 1 GiB per 16 GiB of GPU memory (at most 4 GiB) plus 1 GiB; NCCL's buffers "
        "(NCCL_BUFFSIZE per channel and peer; all-to-all connects every peer) must fit in that "
        "rest"
        + (f"; this run's maximum size is {e}" if e else "")
        + (f" and NCCL_BUFFSIZE={b}" if b else "")
        + ". Lower -e (or leave it at the default), set NCCL_BUFFSIZE back to its 4 MiB "
        "default, or run with -c 0 (no expected buffer); the benchmark's sizes, not the "
        "GPU, are what to change"
    )
    for f in ooms:
        reading.add_here(f, said)
    return []
