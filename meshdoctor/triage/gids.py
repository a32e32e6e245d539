"""A RoCE port whose GID table, as ``show_gids`` prints it, starts past index 0: the container
or pod sees only some of the port's GIDs, and NCCL's automatic GID selection fails there.

``show_gids`` (Mellanox OFED / DOCA, from ``/sys/class/infiniband/DEV/ports/PORT/gids`` and
``gid_attrs/types``) prints one row per GID: ``DEV PORT INDEX GID IPv4 VER NETDEV``. On a host,
every port's table starts at index 0 (its link-local GIDs); inside a container given a
macvlan or SR-IOV sub-interface of the NIC, only the GIDs of that interface are visible, so
the table starts at 4 or later. NCCL picks a GID itself unless NCCL_IB_GID_INDEX is set
(NCCL src/transport/net_ib: ncclIbGetGidIndex reads each index's RoCE version from sysfs),
and the reads of indices the container lacks fail: init fails, or crashes in releases that
did not check it (NVIDIA/nccl #1538: only indices 4-7 visible; NCCL_IB_GID_INDEX=7 fixed it).
Triage names it with MD856, a finding it makes itself.

The rule (:func:`readings`): an input holds a ``show_gids`` table (its header ``DEV PORT INDEX
GID``), some device's lowest index is above 0, and some finding is an NCCL failure or a native
crash, none of which already names NCCL's GID selection (the class nccl.ib-gid-select says it,
with its own remedy). The finding names the first row of that device and says which index to set
(the RoCE v2 GID holding an IPv4 address, per device); it comes just before those failures,
which become its consequences.
"""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD856"

GIDS_SIG = signature(
    CODE,
    "triage.rocee-gids-partial",
    None,
    "The RoCE ports' GID tables start past index 0: this container or pod sees only some "
    "of each port's GIDs (those of a macvlan or SR-IOV sub-interface). NCCL chooses a GID "
    "itself unless told, reading each index's RoCE version from sysfs; the indices this "
    "container lacks fail to read, so NCCL's connection setup fails (or crashes, in "
    "releases that did not check the read) before any data moves.",
    "Give NCCL the GID on every rank: NCCL_IB_GID_INDEX=N, N being the index of the RoCE "
    "v2 GID that holds the interface's IPv4 address (named after 'Here:', per device); "
    "then rerun with NCCL_DEBUG=INFO and check 'NET/IB' names that GID. Upgrading NCCL "
    "turns the crash into an error, but only the setting selects a GID the container has.",
    "show_gids (Mellanox OFED / DOCA: /sys/class/infiniband/DEV/ports/PORT/gids, "
    "gid_attrs/types); NCCL environment variables (NCCL_IB_GID_INDEX); NCCL "
    "src/transport/net_ib (ncclIbGetGidIndex); https://github.com/NVIDIA/nccl/issues/1538",
    examples=(),
    causes=[
        (
            "a container given a sub-interface of the RoCE NIC (macvlan, SR-IOV VF, a "
            "Kubernetes RDMA device plugin)",
            "show_gids inside the container starts at index 4 or later; on the host at 0",
        ),
    ],
)

GIDS_SIG = with_why(
    GIDS_SIG,
    "NCCL's own lines name no GID: a proxy Connect error or a segfault in its setup reads "
    "like a bug or a network fault, while the GID it chose was never there.",
)

ENTRY = entry(GIDS_SIG, "triage RoCE GID table partly visible")

_HEAD = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\b")
_ROW = re.compile(
    r"^\s*(?P<dev>\w+)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>[0-9a-f:]{20,})\s+"
    r"(?:(?P<ipv4>\d+\.\d+\.\d+\.\d+)\s+)?(?P<ver>v[12])\b"
)
_LOGS = ("log", "stdin")


def _names_gid(f: Finding) -> bool:
    """Whether ``f`` already names NCCL's GID selection (its class nccl.ib-gid-select)."""
    cls = f.match.failure_class()
    return cls is not None and cls.name == "nccl.ib-gid-select"


def _bears(f: Finding) -> bool:
    return f.match.name.startswith(("nccl.", "triage.nccl-")) or f.match.name in (
        "native.crash",
        "mpi.rank-signal",
    )


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD856 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (an NCCL failure or crash among
    them)."""
    failures = [f for f in findings if _bears(f)]
    if not failures or any(_names_gid(f) for f in findings):
        return []
    for inp in inputs:
        if inp.kind not in _LOGS or inp.error:
            continue
        lines = list(input_lines(inp))
        if not any(_HEAD.match(t) for _, t in lines):
            continue
        lowest: Dict[str, Tuple[int, int, str]] = {}  # dev -> (index, line, text)
        v2: Dict[str, int] = {}  # dev -> the index of its RoCE v2 IPv4 GID
        for lineno, text in lines:
            r = _ROW.match(text)
            if not r:
                continue
            dev, idx = r.group("dev"), int(r.group("index"))
            if dev not in lowest or idx < lowest[dev][0]:
                lowest[dev] = (idx, lineno, text.strip())
            if r.group("ver") == "v2" and r.group("ipv4"):
                v2.setdefault(dev, idx)
        partial = sorted(d for d, (idx, _, _) in lowest.items() if idx > 0)
        if not partial:
            continue
        _, lineno, text = lowest[partial[0]]
        start = min(lowest[d][0] for d in partial)
        pick = ", ".join(f"{d} {v2[d]}" for d in partial if d in v2)
        here = (
            f"the tables of {', '.join(partial)} start at index {start}"
            + (f"; their RoCE v2 IPv4 GIDs: {pick}" if pick else "")
            + "."
        )
        m = reading.match(
            GIDS_SIG,
            here,
            line=signatures.printable(text),
            lineno=lineno,
            groups={"devices": ",".join(partial)},
        )
        return [reading.explains(m, inp, failures)]
    return []
