"""The catalogue of every signature: the families in their order, merged into one list
(:data:`CATALOGUE`), indexed by code (:data:`BY_CODE`), and the signatures recognised by a crash
record's faulting frame (:data:`FRAME_SIGNATURES`). The scanner and the package's entries read
them from here."""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from meshdoctor.signatures import cuda, jaccl, launch, native, nccl, pytorch, ring
from meshdoctor.signatures.model import Signature

# The families; a crash record's line that holds the frames of two signatures is read as the
# first family's (the Thunderbolt driver's tbt_post_recv before JACCL's ibv_reg_mr).
FAMILIES = (native, jaccl, ring, nccl, cuda, pytorch, launch)


def _merge(families: Sequence[Sequence[Signature]]) -> List[Signature]:
    """The families' signatures as one list: each family keeps its own order, and the next
    signature is always the family head with the lowest code (so a family may list a
    signature before a lower code it explains: NCCL's warning before the NCCL error)."""
    heads = [list(f) for f in families]
    out: List[Signature] = []
    while any(heads):
        first = min((h for h in heads if h), key=lambda h: h[0].code)
        out.append(first.pop(0))
    return out


CATALOGUE: List[Signature] = _merge([f.SIGNATURES for f in FAMILIES])
BY_CODE: Dict[str, Signature] = {s.code: s for s in CATALOGUE}
FRAME_SIGNATURES: Tuple[Signature, ...] = tuple(
    s for f in FAMILIES for s in f.SIGNATURES if s.frame is not None
)
