"""The failure-signature catalogue: known error text -> code (MD6xx), meaning, causes, what helps.

Strings are matched on their stable part, numbers and names as placeholders, in the wording of
each MLX version that printed them (MLX v0.30.1-v0.32.4 ``mlx/distributed/{jaccl,ring,nccl}``,
``mlx/_distributed_utils/launch.py``; the Thunderbolt RDMA crash of mlx #4192/#4319; the JACCL
progress guard of the community guard PR; NCCL's and CUDA's own error texts).

One module per family, each signature where its text comes from:

* :mod:`~meshdoctor.signatures.jaccl`: the JACCL backend (``[jaccl]`` lines, the librdma
  dlopen, its ``MeshImpl`` frames);
* :mod:`~meshdoctor.signatures.ring`: the ring backend (``[ring]`` lines, its hostfile);
* :mod:`~meshdoctor.signatures.nccl`: the NCCL backend, NCCL's own texts and CUDA errors;
* :mod:`~meshdoctor.signatures.cuda`: CUDA's own error texts in any wrapper, by the CUDA
  runtime's table (:mod:`~meshdoctor.signatures.cuda_errors`);
* :mod:`~meshdoctor.signatures.native`: what lies under MLX (the Thunderbolt RDMA driver, Metal,
  crash signals, Python exceptions);
* :mod:`~meshdoctor.signatures.launch`: mlx.launch and MLX's distributed init (the backend
  chosen, ranks that ended, the exit statuses ranks end with).

:mod:`~meshdoctor.signatures.model` holds the vocabulary (roles, :class:`Signature` with its
Doc and examples, :class:`Match`), :mod:`~meshdoctor.signatures.errnos` the socket errnos,
:mod:`~meshdoctor.signatures.scanner` the matching (it names no code),
:mod:`~meshdoctor.signatures.frames` a crashed thread's frames (from text, or a crash report)
and the frame signature they name. Parsers run nothing:
this package only reads text. Codes are stable: never renumber, only add. :func:`entries` gives
the catalogue (:mod:`meshdoctor.catalogue`) every signature's entry for ``meshdoctor explain``.
"""

from __future__ import annotations

from typing import Iterable, List

from meshdoctor.codes.model import SIGNATURE, Entry
from meshdoctor.signatures.families import BY_CODE, CATALOGUE, FAMILIES, FRAME_SIGNATURES
from meshdoctor.signatures.frames import classify_frames
from meshdoctor.signatures.model import (
    CAUSE,
    CONSEQUENCE,
    EITHER,
    ROLES,
    Cause,
    Match,
    Signature,
    causes_text,
)
from meshdoctor.signatures.scanner import (
    ANCHORS,
    CONTEXT_LINES,
    LINE_CHARS,
    RECORD_WINDOW,
    WHOLE,
    Scanner,
    classify,
    classify_exit,
    make_match,
    match_line,
    printable,
    shape_values,
    strip_ansi,
)

__all__ = [
    "ANCHORS",
    "BY_CODE",
    "CATALOGUE",
    "CAUSE",
    "CONSEQUENCE",
    "CONTEXT_LINES",
    "EITHER",
    "FAMILIES",
    "FRAME_SIGNATURES",
    "LINE_CHARS",
    "RECORD_WINDOW",
    "ROLES",
    "WHOLE",
    "Cause",
    "Match",
    "Scanner",
    "Signature",
    "classify",
    "classify_exit",
    "classify_frames",
    "codes",
    "entries",
    "make_match",
    "match_line",
    "printable",
    "shape_values",
    "strip_ansi",
]


def codes() -> Iterable[str]:
    """Every signature code, in catalogue order."""
    return [s.code for s in CATALOGUE]


def entries() -> List[Entry]:
    """The catalogue entries of every signature, in catalogue order (title ``signature NAME``,
    the signature's Doc, the known causes and the failure classes as details)."""
    out = []
    for s in CATALOGUE:
        details = (("Known causes, most common first", causes_text(s)),) if s.causes else ()
        if s.classes:  # each class with its meaning, cause, what helps and source
            details += (
                (
                    "Failure classes",
                    "\n".join(f"- {c.name}: {c.text()} [{c.source}]" for c in s.classes),
                ),
            )
        out.append(
            Entry(
                code=s.code,
                kind=SIGNATURE,
                title=f"signature {s.name}",
                doc=s.doc,
                names=(s.name,),
                details=details,
            )
        )
    return out
