"""The vocabulary of codes: :class:`Doc` (a code's explanation in fixed parts), :class:`Entry`
(one catalogued code), the kinds and their ranges, and the headings ``explain`` prints.

It imports nothing of meshdoctor, so every producer of a code (a check, a fleet check, a fix, a
signature, a probe outcome, the engine) can declare its :class:`Entry` here without pulling in
the others; :mod:`meshdoctor.catalogue` collects them. Codes are stable: never renumber, only add.

Kinds and their ranges (:data:`RANGES`): ``internal`` MD100; ``check`` MD101-MD499 (MD1xx node
and runtime, MD2xx RDMA and Thunderbolt, MD3xx memory and processes, MD4xx hostfile and fleet);
``probe`` MD5xx; ``signature`` MD6xx and, once MD6xx was full, MD8xx; ``fix`` MD7xx.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

INTERNAL, CHECK, PROBE, SIGNATURE, FIX = "internal", "check", "probe", "signature", "fix"
KINDS = (INTERNAL, CHECK, PROBE, SIGNATURE, FIX)

# kind -> its spans of code numbers, each (lowest, highest), inclusive
RANGES: Dict[str, Tuple[Tuple[int, int], ...]] = {
    INTERNAL: ((100, 100),),
    CHECK: ((101, 499),),
    PROBE: ((500, 599),),
    SIGNATURE: ((600, 699), (800, 899)),
    FIX: ((700, 799),),
}

# The role a finding plays when several ranks fail together: a ``cause`` (something went wrong
# here), ``either`` (a cause when alone, often the echo of another rank's failure), or a
# ``consequence`` (another rank failed first). Failure signatures, exit statuses and the probe's
# culprits speak of roles.
CAUSE, EITHER, CONSEQUENCE = "cause", "either", "consequence"
ROLES = (CAUSE, EITHER, CONSEQUENCE)

HEADINGS = ("What it means", "Why it matters", "What to do")


@dataclass(frozen=True)
class Doc:
    """The explanation of a code in fixed parts: ``meaning`` (what the code says was found, and
    how it is found), ``why`` (why it matters to a launch or a job), ``action`` (what to do),
    ``sources`` (the public sources its facts and thresholds rest on: MLX or exo PR and issue
    numbers, MLX versions, Apple or tool documentation). Every part is required: raises
    ValueError when one is empty (a check module named in ``MESHDOCTOR_EXTRA_CHECKS`` that
    declares an incomplete doc is then a usage error naming it)."""

    meaning: str
    why: str
    action: str
    sources: Tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.sources, str):
            object.__setattr__(self, "sources", (self.sources,))
        for part in ("meaning", "why", "action"):
            text = getattr(self, part)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"Doc.{part} must be non-empty text")
            object.__setattr__(self, part, _flow(text))
        if not self.sources or not all(isinstance(s, str) and s.strip() for s in self.sources):
            raise ValueError("Doc.sources must name at least one public source")


def _flow(text: str) -> str:
    """``text`` stripped, its paragraphs kept (blank lines) and its lines as written."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


@dataclass(frozen=True)
class Entry:
    """One code of the catalogue: ``code`` (``MD203``), ``kind`` (one of :data:`KINDS`),
    ``title`` (one line, shown beside each result), ``doc`` (the fixed parts), ``names`` (the
    names ``explain`` also accepts: a check's or fix's name, a signature's name, the ``check``
    field of the results that carry the code; the first is its name), ``fixes`` (the MD7xx
    codes of the fixes that resolve it), ``details`` (further headed sections, ``(heading,
    text)``: a signature's known causes, the platforms a check applies to)."""

    code: str
    kind: str
    title: str
    doc: Doc
    names: Tuple[str, ...] = ()
    fixes: Tuple[str, ...] = ()
    details: Tuple[Tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        """The entry's first name (what results carry as ``check``); '' when it has none."""
        return self.names[0] if self.names else ""


def kind_of(code: str) -> Optional[str]:
    """The kind whose range holds ``code`` (``MD602`` -> ``signature``), None if none does."""
    c = code.strip().upper()
    if len(c) != 5 or not c.startswith("MD") or not c[2:].isdigit():
        return None
    n = int(c[2:])
    return next((k for k, spans in RANGES.items() if any(lo <= n <= hi for lo, hi in spans)), None)
