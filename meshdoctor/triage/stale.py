"""The RDMA stack left stale: a JACCL link or peer drop in the middle of a job (``[jaccl] Recv
failed with errno=60`` / ``errno=2``), then every later start on every node failing ``[jaccl]
Changing queue pair to RTR failed with errno 22``. Read one line at a time, RTR errno 22 is a
port without a usable IPv4-mapped GID (MD601, a setup problem); after a drop, on nodes where
the same job ran before, it is the Thunderbolt RDMA state the drop and the repeated init and
teardown left behind, which only a reboot (or a replug of the cables) clears (exo #1847;
exo #1712 and PR #1467). Triage names it with MD874, a finding it makes itself across the
inputs.

The rule (:func:`readings`): a drop finding (:data:`DROPS`) earlier than RTR errno 22 findings
that come from at least two inputs (nodes) or recur (two runs or more). Its role is ``cause``,
placed at the drop: the drop and the RTR failures after it are its consequences.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Sequence

from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD874"
DROPS = ("jaccl.recv-errno-60", "jaccl.recv-errno-2", "jaccl.peer-gone")
_RTR = "jaccl.rtr-errno-22"

STALE_SIG = signature(
    CODE,
    "triage.rdma-stale-after-drop",
    None,
    "The RDMA stack was left in a bad state: a JACCL link or peer drop in the middle of the "
    "job, then every later start fails to move its queue pairs to RTR (errno 22) on every "
    "node. The same nodes connected before the drop, so it is not a GID or address setup "
    "problem: the Thunderbolt RDMA state the drop and the repeated init/teardown left behind "
    "refuses new queue pairs until it is reset.",
    "Reboot every node of the mesh (or replug the Thunderbolt 5 cables of the affected "
    "links); clearing the application's state alone does not help, and `ibv_devinfo` may hang "
    "until then (`meshdoctor check --only MD205` after the reboot confirms the ports). Then "
    "keep one long-lived distributed session rather than loading and unloading the model "
    "often: every init/teardown cycle after a drop risks the same state.",
    "https://github.com/exo-explore/exo/issues/1847 (RTR errno 22 on all nodes after a Recv "
    "loss, only a reboot recovers); exo #1712 and exo PR #1467 (replug or reboot); mlx #4530 "
    "(a wedged RDMA driver)",
    examples=(),
    causes=[
        (
            "a link drop or a peer that went away mid-inference (Recv errno 60/2), then "
            "repeated re-inits on the stale RDMA state",
            "RTR errno 22 on every node only after the drop; a reboot of all nodes clears it",
        ),
        (
            "a port that really lost its IPv4 address (MD601's reading) at the same time",
            "`ifconfig` of the Thunderbolt ports shows no inet address after the reboot",
        ),
    ],
)
STALE_SIG = with_why(
    STALE_SIG,
    "Read alone, each RTR errno 22 sends the reader to the GID and address setup, "
    "which was fine; the drop before them and their recurrence on every node say the "
    "RDMA state needs a reset.",
)
STALE_SIG = replace(STALE_SIG, needs_reboot=True)

ENTRY = entry(STALE_SIG, "triage RDMA stale after a drop")


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD874 finding (the rule in the module's docstring) for ``findings`` of ``inputs``,
    or none."""
    del inputs
    drops = [f for f in findings if f.match.name in DROPS and f.time is not None]
    if not drops:
        return []
    first = min(drops, key=lambda f: f.time)  # type: ignore[arg-type,return-value]
    rtr = [
        f
        for f in findings
        if f.match.name == _RTR and f.time is not None and f.time > first.time  # type: ignore
    ]
    sources = {f.source for f in rtr}
    runs = sum(f.count for f in rtr)
    if not rtr or (len(sources) < 2 and runs < 2):
        return []
    dropped = sorted({f.source for f in drops})
    m = reading.match(
        # the reboot is named for the hosts the inputs named; files given by path name none
        STALE_SIG if first.host else replace(STALE_SIG, needs_reboot=False),
        f"the drop '{first.match.line}' "
        f"({', '.join(dropped)} at {first.time.strftime('%H:%M:%S')}), then RTR errno 22 in "  # type: ignore[union-attr]
        f"{', '.join(sorted(sources))} ({runs} line(s), every start after it).",
        line=first.match.line,
        lineno=first.match.lineno,
    )
    return [reading.at_finding(m, first)]
