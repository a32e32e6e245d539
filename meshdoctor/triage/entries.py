"""The catalogue entries of triage's own readings across inputs (the findings it makes itself
rather than a signature's match), in the order ``explain`` lists them: one list that the
verdict (:mod:`.report`, for their titles) and the catalogue (:mod:`meshdoctor.catalogue`)
both read, so a new reading adds its entry here and nowhere else."""

from __future__ import annotations

from typing import Tuple

from meshdoctor.codes.model import Entry
from meshdoctor.triage import (
    alone,
    hung,
    ifname,
    injected,
    mismatch,
    netdiff,
    samegpu,
    silent,
    stale,
    versions,
    views,
)

ENTRIES: Tuple[Entry, ...] = (
    silent.ENTRY,
    alone.ENTRY,
    mismatch.ENTRY,
    hung.ENTRY,
    silent.WEDGE_ENTRY,
    hung.STACK_ENTRY,
    stale.ENTRY,
    views.ENTRY,
    versions.ENTRY,
    ifname.ENTRY,
    injected.ENTRY,
    netdiff.ENTRY,
    samegpu.ENTRY,
)
