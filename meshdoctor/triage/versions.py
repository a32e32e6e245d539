"""Ranks that run different NCCL versions: each input's ``NCCL version 2.20.5+cuda12.4`` banner
(NCCL_DEBUG=INFO prints it at init) or the version PyTorch names in its NCCL error
(``DistBackendError: NCCL error in: ..., NCCL version 2.20.5``), compared across the inputs.
NCCL's bootstrap and connection messages are not kept compatible between releases, so ranks of
different versions fail at init with errors that do not name the cause (an internal error,
``ncclSocketInit: connecting to address with family 0``: NVIDIA/nccl #1267, where one node had
nvidia-nccl-cu12 2.20.5 and the others 2.19.3). Triage names it with MD893, a finding it makes
itself across the inputs.

The rule (:func:`readings`): the logs read (their first and last bytes, :attr:`Input.head`
and :attr:`Input.tail`) name NCCL versions (major.minor.patch), and two inputs name different
ones. Two versions inside one input are not compared (one log may hold two runs, before and
after an upgrade). The finding sits on the first line naming the version fewest inputs run
(of two as common, the newer: usually the one host upgraded alone); its role is ``cause``: the
init errors that follow are its consequences.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD893"

VERSIONS_SIG = signature(
    CODE,
    "triage.nccl-versions-differ",
    None,
    "The ranks run different NCCL versions. NCCL's bootstrap and connection messages are not "
    "kept compatible between releases, so ranks of different versions fail at init with "
    "errors that do not name the cause: an internal error (ncclInternalError), "
    "'ncclSocketInit: connecting to address with family 0', a truncated message or a hang.",
    "Install the same NCCL on every host: the same nvidia-nccl-cu* wheel and the same PyTorch "
    "or MLX build (a system libnccl that LD_LIBRARY_PATH finds first counts too); compare the "
    "'NCCL version' line each rank prints with NCCL_DEBUG=INFO, or `python -c \"import torch; "
    'print(torch.cuda.nccl.version())"` on each host.',
    "NVIDIA/nccl #1267 (nvidia-nccl-cu12 2.20.5 on one node, 2.19.3 on the others: the same "
    "NCCL on every machine fixed it); NCCL's init banner 'NCCL version X+cudaY' "
    "(NCCL_DEBUG=INFO)",
    examples=(),
    causes=[
        (
            "hosts with different nvidia-nccl-cu* wheels or PyTorch builds",
            "`pip show nvidia-nccl-cu12` (or -cu13) differs between hosts",
        ),
        (
            "a system libnccl loaded before the wheel's on some hosts",
            "LD_LIBRARY_PATH or `ldconfig -p | grep nccl` on those hosts",
        ),
    ],
)

VERSIONS_SIG = with_why(
    VERSIONS_SIG,
    "No rank says the versions differ: each fails in its own way at init (or hangs), "
    "and those errors are consequences of this; fix it before reading them.",
)

ENTRY = entry(VERSIONS_SIG, "triage NCCL versions differ")

# NCCL's banner ("NCCL version 2.20.5+cuda12.4", also behind "NCCL INFO") and PyTorch's
# "..., NCCL version 2.20.5" at the end of its NCCL error
_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)(?:\+cuda[\d.]+)?\b")
_LOGS = ("log", "stdin")


def _key(version: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD893 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings``
    are the others (unused but for symmetry with the other readings)."""
    del findings
    # version -> the inputs naming it, each with its first line naming it
    seen: Dict[str, Dict[int, Tuple[int, str]]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            for m in _VERSION.finditer(text):
                seen.setdefault(m.group(1), {}).setdefault(i, (lineno, text.strip()))
    if len(seen) < 2:
        return []
    ins = {v: set(by) for v, by in seen.items()}
    if not any(ins[a] - ins[b] and ins[b] - ins[a] for a in ins for b in ins if a != b):
        return []  # only one input names two versions: perhaps two runs of one rank
    counts = Counter({v: len(by) for v, by in seen.items()})
    odd = min(counts, key=lambda v: (counts[v], tuple(-x for x in _key(v))))
    i = min(seen[odd], key=lambda k: inputs[k].source)
    inp = inputs[i]
    lineno, text = seen[odd][i]

    def who(v: str) -> str:
        return ", ".join(sorted(inputs[k].source for k in seen[v]))

    listed = "; ".join(f"{v} in {who(v)}" for v in sorted(seen, key=_key, reverse=True))
    m = reading.match(
        VERSIONS_SIG,
        f"NCCL {listed}.",
        line=signatures.printable(text),
        lineno=lineno,
        groups={"versions": ", ".join(sorted(seen, key=_key, reverse=True))},
    )
    return [reading.at_input(m, i, inp)]


WHEELS_CODE = "MD898"

WHEELS_SIG = with_why(
    signature(
        WHEELS_CODE,
        "triage.two-nccl-wheels",
        None,
        "One Python environment holds two NCCL wheels (nvidia-nccl-cu12 beside "
        "nvidia-nccl-cu13, as `pip list` or PyTorch's collect_env shows): each installs its "
        "own libnccl.so.2, and which one the loader finds first decides the NCCL that "
        "PyTorch, CuPy or vLLM runs. A build for one CUDA major then loads the other's NCCL: "
        "an import that fails on an undefined nccl symbol, or NCCL errors and hangs of a "
        "release the program was not built with.",
        "Keep the one NCCL wheel that matches the build's CUDA (`python -c \"import torch; "
        'print(torch.version.cuda)"`): `pip uninstall nvidia-nccl-cu12` under a CUDA 13 '
        "build, or nvidia-nccl-cu13 under CUDA 12; then check which libnccl loads "
        '(`python -c "import torch; print(torch.cuda.nccl.version())"`) on every host.',
        "PyTorch's collect_env ('[pip3] nvidia-nccl-cu12==...'); the nvidia-nccl-cu12 and "
        "nvidia-nccl-cu13 wheels on PyPI (each ships nvidia/nccl/lib/libnccl.so.2); "
        "https://github.com/pytorch/pytorch/issues/186591",
        examples=(),
        causes=[
            (
                "a package that pins the other CUDA's NCCL wheel (an older vLLM, CuPy, a "
                "framework's requirements) installed into a CUDA 13 environment",
                "`pip show nvidia-nccl-cu12 nvidia-nccl-cu13`: both installed, and who requires each",
            ),
        ],
    ),
    "Nothing says which libnccl was loaded; the import or NCCL errors that follow are "
    "consequences of the two wheels; fix that first.",
)

WHEELS_ENTRY = entry(WHEELS_SIG, "triage two NCCL wheels in one environment")

# "[pip3] nvidia-nccl-cu12==2.29.3", "nvidia-nccl-cu13    2.29.7" (pip list), "... 2.29.7 pypi"
_WHEEL = re.compile(r"\bnvidia-nccl-(cu\d+)\s*(?:==|\s)\s*(\d+\.\d+\.\d+)")


def wheels(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD898 finding when one input lists two NCCL wheels of different CUDA majors
    (:data:`_WHEEL`), or none: ``inputs`` in the order read; ``findings`` unused."""
    del findings
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error or "nvidia-nccl-cu" not in inp.head:
            continue
        seen: Dict[str, Tuple[str, int, str]] = {}
        for lineno, text in input_lines(inp):
            for m in _WHEEL.finditer(text):
                seen.setdefault(m.group(1), (m.group(2), lineno, text.strip()))
        if len(seen) < 2:
            continue
        listed = ", ".join(f"nvidia-nccl-{cu} {v}" for cu, (v, _, _) in sorted(seen.items()))
        _v, lineno, text = min(seen.values(), key=lambda x: x[1])
        m = reading.match(
            WHEELS_SIG,
            f"{inp.source} lists {listed}.",
            line=signatures.printable(text),
            lineno=lineno,
        )
        return [reading.at_input(m, i, inp)]
    return []
