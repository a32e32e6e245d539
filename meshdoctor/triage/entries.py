"""Triage's own readings across inputs (the findings it makes itself rather than a
signature's match): :data:`READINGS`, the calls triage makes in order, and :data:`ENTRIES`,
their catalogue entries in the order ``explain`` lists them. The verdict (:mod:`.report`, for
their titles), the catalogue (:mod:`meshdoctor.catalogue`) and triage's command
(:mod:`.command`) all read these lists, so a new reading adds itself here and nowhere else."""

from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

from meshdoctor.codes.model import Entry
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage import (
    address,
    alone,
    benchmem,
    customar,
    gids,
    headless,
    hung,
    ifname,
    laggard,
    injected,
    lastwarn,
    loadphase,
    masteraddr,
    misspelt,
    mismatch,
    netdiff,
    pyfault,
    samegpu,
    silent,
    stale,
    topology,
    slowpath,
    unread,
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
    versions.WHEELS_ENTRY,
    ifname.ENTRY,
    injected.ENTRY,
    netdiff.ENTRY,
    samegpu.ENTRY,
    topology.ENTRY,
    misspelt.ENTRY,
    customar.ENTRY,
    address.ENTRY,
    masteraddr.ENTRY,
    gids.ENTRY,
    laggard.ENTRY,
    slowpath.ENTRY,
    slowpath.GDR_ENTRY,
    unread.ENTRY,
)

# a reading: (the inputs in the order read, the findings so far) -> the findings it adds
Reading = Callable[[Sequence[Input], Sequence[Finding]], List[Finding]]

# after the per-line signatures and the silent-rank readings (MD691, MD872, MD689), in this
# order: each sees the findings of those before it
READINGS: Tuple[Reading, ...] = (
    lastwarn.readings,  # MD653, NCCL's WARN text printed bare (PyTorch's 'Last error:')
    alone.readings,  # MD890, every rank alone in a group of one
    mismatch.readings,  # MD891, ranks in different collectives
    laggard.readings,  # MD857, the rank missing from the watchdog timeouts
    netdiff.readings,  # MD895, networks differ between hosts
    samegpu.readings,  # MD896, two ranks on one GPU
    hung.readings,  # MD892, a hang with no error
    hung.stacked,  # MD873, a stack shows the hang
    stale.readings,  # MD874, RDMA stale after a drop
    views.readings,  # MD875, hostfiles differ
    versions.readings,  # MD893, NCCL versions differ
    versions.wheels,  # MD898, two NCCL wheels in one environment
    ifname.readings,  # MD894
    injected.readings,  # MD834
    topology.readings,  # MD897, a GPU topology through the CPU
    misspelt.readings,  # MD877, an NCCL setting NCCL does not read
    customar.readings,  # MD878, an engine's custom all-reduce in play
    address.readings,  # MD879, an address other hosts cannot reach
    masteraddr.readings,  # MD855, the rendezvous address dialled is not the configured one
    gids.readings,  # MD856, RoCE GID tables partly visible
    slowpath.readings,  # MD813, NCCL between hosts over sockets (only when nothing else)
    slowpath.gdr,  # MD814, NCCL without GPUDirect RDMA (only when nothing else)
    headless.amend,  # a traceback pasted without its header (amends a bare exception line)
    pyfault.amend,  # a faulthandler dump's innermost frame (amends the failure above it)
    benchmem.amend,  # what nccl-tests' buffers leave to NCCL (amends MD800)
    loadphase.amend,  # a Metal out of memory by its phase: loading or training (amends MD661)
    unread.logged,  # a cut traceback's logger message (amends MD663)
    unread.wrapped,  # a bare exception's message wrapped onto the next lines (amends MD663)
    unread.readings,  # MD883, an error line no signature reads (last: only when nothing else)
)
