"""The rank missing from PyTorch's watchdog timeouts: the one that left the collective first.

When one rank of a process group stops calling collectives (it failed in code of its own, a
checkpoint save, an exception caught and logged, or it hangs elsewhere), every other rank's
NCCL watchdog times out in the collective it waits in and prints ``[Rank N] Watchdog caught
collective operation timeout: WorkNCCL(SeqNum=S, ...)`` (PyTorch
torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp). The rank that left prints no such line for
that collective: the timeouts are all the others' echo, and its own log holds the cause.
Triage names it with MD857, a finding it makes itself.

The rule (:func:`readings`): two or more watchdog timeouts (MD837) of different ranks, all of
one SeqNum when they name one, and ranks between 0 and the highest seen that printed none.
The finding names those ranks and comes just before the timeouts, which become its
consequences (the ranks' order of SeqNum, when they differ, is MD891's reading).
"""

from __future__ import annotations

from typing import List, Sequence

from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD857"

LAGGARD_SIG = signature(
    CODE,
    "triage.watchdog-rank-missing",
    None,
    "Every rank of the group but these timed out in the same collective: the ranks "
    "without a watchdog timeout are the ones that left it first (they failed or stopped in "
    "code of their own, before entering the collective), and the others' timeouts are their "
    "echo.",
    "Read the missing ranks' own logs (stderr, the rank's log file) for their error or "
    "where they stopped: an exception in the job's own code (a checkpoint save, an "
    "evaluation step on one rank), a hang (py-spy dump --pid on that rank); a longer "
    "timeout only delays the same end. TORCH_NCCL_DUMP_ON_TIMEOUT=1 with "
    "TORCH_NCCL_TRACE_BUFFER_SIZE=2000 records each rank's last collectives.",
    "PyTorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the watchdog's 'Watchdog "
    "caught collective operation timeout'); https://github.com/meta-pytorch/torchtune/"
    "issues/1165 (rank 0 failed in its checkpoint save; ranks 1-3 timed out in the "
    "all-gather)",
    examples=(),
    causes=[
        (
            "the missing rank raised in code of its own (a save or evaluation on one rank)",
            "its own log ends in a traceback before the others' timeouts",
        ),
        ("the missing rank died (OOM-killed, a signal)", "its exit status; dmesg"),
    ],
)

LAGGARD_SIG = with_why(
    LAGGARD_SIG,
    "The timeouts are printed by the ranks that waited, so they are the loudest lines of "
    "the job and say nothing about the one that left.",
)

ENTRY = entry(LAGGARD_SIG, "triage rank missing from the watchdog timeouts")


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD857 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (watchdog timeouts among them)."""
    timeouts = [f for f in findings if f.code == "MD837" and f.rank is not None]
    ranks = {f.rank for f in timeouts}
    if len(ranks) < 2:
        return []
    seqs = {f.match.groups.get("seq") for f in timeouts if f.match.groups.get("seq")}
    if len(seqs) > 1:
        return []
    missing = sorted(set(range(max(ranks) + 1)) - ranks)  # type: ignore[arg-type]
    if not missing:
        return []
    first = min(timeouts, key=lambda f: f.seq)
    index = next(i for i, inp in enumerate(inputs) if inp.source == first.source)
    who = ", ".join(map(str, missing))
    here = (
        f"ranks {', '.join(map(str, sorted(ranks)))} timed out"
        + (f" in SeqNum {next(iter(seqs))}" if seqs else "")
        + f"; rank{'s' if len(missing) > 1 else ''} {who} printed no timeout: read "
        + ("their" if len(missing) > 1 else "its")
        + " own log first."
    )
    m = reading.match(
        LAGGARD_SIG,
        here,
        line=first.match.line,
        lineno=first.match.lineno,
        groups={"missing": who},
    )
    f = reading.explains(m, inputs[index], timeouts)
    f.rank = missing[0] if len(missing) == 1 else None  # the rank it is about
    return [f]
