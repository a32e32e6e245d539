"""Known MLX defects that make a collective hang, and which MLX versions have them: the probe
names one as a hang's likely cause only on a mesh running such a version.

A version "has" a defect from the first MLX release it was reported with through the last one
(``reported``), unless ``fixed`` names the release that fixed it earlier. A release after the
last reported one with no fix known is not said to have it: the hang then stays unexplained
rather than blamed on a defect nobody saw there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple

from meshdoctor.parsers.macos import version_tuple

Version = Tuple[int, ...]


@dataclass(frozen=True)
class HangDefect:
    """One known MLX hang: ``what`` it is (a phrase), the ``backends`` it hits, the first and
    last MLX versions it was ``reported`` with, the version that ``fixed`` it (None: none
    known), its public ``source`` and the ``remedy`` to add where it is named."""

    what: str
    backends: Tuple[str, ...]
    reported: Tuple[Version, Version]
    fixed: Optional[Version]
    source: str
    remedy: str

    def has(self, version: str) -> bool:
        """Whether MLX ``version`` (``"0.32.2"``) is one that has this defect (module doc); an
        unreadable version has none."""
        v = version_tuple(version or "")
        if not v:
            return False
        first, last = self.reported
        if self.fixed is not None and v >= self.fixed:
            return False
        return first <= v[: len(last)] <= last


RING_ALL_SUM_HANG = HangDefect(
    what="the ring backend's CPU-stream all_sum deadlock (a few % of calls at 3+ ranks)",
    backends=("ring",),
    reported=((0, 32, 2), (0, 32, 2)),
    fixed=None,
    source="MLX #4475 (ring backend: CPU-stream all_sum deadlocks in ~3-4 % of calls, "
    "reported with mlx 0.32.2)",
    remedy="run collectives on stream=mx.cpu, upgrade mlx, and gate long jobs on --soak",
)

HANG_DEFECTS: Tuple[HangDefect, ...] = (RING_ALL_SUM_HANG,)


def hang_defects(backend: str, versions: Iterable[str]) -> List[Tuple[HangDefect, List[str]]]:
    """The known hang defects of ``backend`` that some of the MLX ``versions`` (the ranks',
    as they reported them) have, each with those versions (sorted, distinct)."""
    seen = sorted({str(v) for v in versions if v})
    out = []
    for d in HANG_DEFECTS:
        if backend in d.backends:
            hit = [v for v in seen if d.has(v)]
            if hit:
                out.append((d, hit))
    return out


def hang_note(backend: str, versions: Iterable[str]) -> str:
    """The sentence that names a known defect as a hang's likely cause on a mesh running
    ``versions`` of MLX with ``backend`` (``"A hang without any rank dying matches ... : run
    ..."``), or ``""`` when no version there has one."""
    found = hang_defects(backend, versions)
    if not found:
        return ""
    d, hit = found[0]
    return (
        f"A {backend} hang without any rank dying matches {d.what}, known in mlx "
        f"{', '.join(hit)} ({d.source}): {d.remedy}."
    )
