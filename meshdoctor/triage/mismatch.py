"""Ranks waiting in different collectives: the stack dumps of a hung job's ranks (``py-spy
dump``, gdb's or lldb's backtraces, macOS ``sample``) given to triage as files are read by
:func:`meshdoctor.triage.stacks.order_reading`, the reading that ``triage --running`` and
``launch --hang-after`` give of the live ranks too. Ranks blocked in different collectives,
or in the same one from different lines of the program, are a collective-order mismatch:
MD891, a finding triage makes itself, naming each rank's collective and its ``file:line``.

A dump is split into one process per section: py-spy's ``Process N:`` header, lldb's
``Process N stopped``, sample's ``Analysis of sampling ... (pid N)``, or a short line naming
a rank (``== rank 1 ==``); a section's rank is the one such a line names, else the input's
(``rank1.txt``). The finding's role is ``cause``: the ranks' later errors (a timeout, a kill)
follow from it.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import stacks
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as _input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD891"

ORDER_SIG = signature(
    CODE,
    "triage.collective-order",
    None,
    "A collective-order mismatch: the ranks' stacks show them blocked in different "
    "collectives, or in the same collective called from different lines of the program. A "
    "collective completes only when every rank of the group enters the same one, so each "
    "waits for peers that are elsewhere, for ever, and nothing is printed.",
    "Make every rank call the same collectives in the same order and number: no collective "
    "inside `if rank == ...` (compute it on every rank, print on one), no loop whose length "
    "depends on the rank's data (agree on it first with an all_sum or all_max); the "
    "file:line of each rank says where each one went.",
    "MLX #1210 (a rank that skips an all_sum hangs the others); MLX docs, distributed "
    "communication (every process must take part in each collective)",
    examples=(),
    causes=[
        (
            "a collective inside a branch taken on some ranks only (`if rank == 0: "
            "print(all_sum(x))`)",
            "one rank's file:line is inside an `if rank` block",
        ),
        (
            "ranks that run a different number of steps (a data-dependent loop, uneven shards)",
            "the same collective from the same loop on every rank, one rank past its end",
        ),
        (
            "an exception caught on one rank that skips a collective",
            "that rank's log shows the caught error, or its stack is outside the loop",
        ),
    ],
)

ORDER_SIG = with_why(
    ORDER_SIG,
    "A hang of the program, not of the mesh: every link may be fine, and no backend "
    "prints an error; what follows (a timeout, a kill) is its consequence.",
)

ENTRY = entry(ORDER_SIG, "triage collective-order mismatch")

# what marks a stack dump, and where one process's part of a file starts
_PY_SPY = re.compile(r"^Thread (?:0x)?[0-9A-Fa-f]+ \((?:idle|active)", re.M)
_DUMP = re.compile(
    r"^(?:Thread (?:0x)?[0-9A-Fa-f]+ \((?:idle|active)|Thread \d+ \(Thread |#\d+\s+0x|"
    r"\s*\*?\s*frame #\d+: 0x|Call graph:)",
    re.M,
)
_SECTION = re.compile(
    r"^(?:Process (?P<pid>\d+)(?::| stopped)|Analysis of sampling \S+ \(pid (?P<spid>\d+)\)|"
    r"(?P<sep>[=#\-*\s\[]*rank[ _:=#]?(?P<rank>\d{1,4})\b.{0,60}))$",
    re.I | re.M,
)
_LOGS = ("log", "stdin")


def dumps(text: str, rank: Optional[int] = None) -> List[stacks.RankStack]:
    """The processes of one stack-dump text, each a :class:`~.stacks.RankStack` (its
    ``python`` the py-spy text, its ``native`` the whole section); ``rank``: the input's rank,
    for a text of one process. Empty when ``text`` holds no stack dump."""
    if not _DUMP.search(text):
        return []
    cuts: List[Tuple[int, Optional[int], int]] = []  # (offset, rank, pid)
    for m in _SECTION.finditer(text):
        if m.group("sep") is not None and _DUMP.match(m.group(0)):
            continue
        r = int(m.group("rank")) if m.group("rank") else None
        pid = int(m.group("pid") or m.group("spid") or 0)
        if cuts and cuts[-1][1] is not None and r is None and m.start() - cuts[-1][0] < 200:
            cuts[-1] = (cuts[-1][0], cuts[-1][1], pid)  # a rank line, then its process header
            continue
        cuts.append((m.start(), r, pid))
    if not cuts:
        cuts = [(0, rank, 0)]
    out = []
    for n, (at, r, pid) in enumerate(cuts):
        part = text[at : cuts[n + 1][0] if n + 1 < len(cuts) else len(text)]
        if not _DUMP.search(part):
            continue
        r = r if r is not None else (rank if len(cuts) == 1 else None)
        out.append(
            stacks.RankStack(r, pid, python=part if _PY_SPY.search(part) else None, native=part)
        )
    return out


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD891 finding for the stack dumps among ``inputs`` (logs whose text holds one), or
    none: when :func:`~.stacks.order_reading` of all their processes says they wait in
    different collectives or at different lines."""
    del findings
    got: List[Tuple[int, Input, stacks.RankStack]] = []
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for st in dumps(inp.head, inp.rank):
            got.append((i, inp, st))
    order = stacks.order_reading([dict(st.to_dict(), host=inp.host) for _, inp, st in got])
    if order is None or not order.mismatch:
        return _watchdog_records(inputs)
    i, inp, _ = got[0]
    m = reading.match(
        ORDER_SIG,
        f"{order.summary}.",
        line=signatures.printable(order.summary.split(": the ranks are in")[0]),
        lineno=1,
    )
    return [reading.at_input(m, i, inp, rank=None)]


# PyTorch's ProcessGroupNCCL watchdog names the collective each rank timed out in, one line or
# wrapped: "[PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout:
# WorkNCCL(SeqNum=6, OpType=ALLREDUCE, NumelIn=57344, NumelOut=57344, Timeout(ms)=600000)"
_WORK = re.compile(
    r"(?:\[PG ID (?P<pg>\d+)[^\]]*?Rank (?P<rank>\d+)\][^\n]*?)?WorkNCCL\(\s*SeqNum=(?P<seq>\d+),"
    r"\s*OpType=(?P<op>\w+)(?:,\s*NumelIn=(?P<nin>\d+),\s*NumelOut=(?P<nout>\d+))?"
)
TORCH_DESYNC = (
    " With PyTorch: rerun with TORCH_NCCL_DESYNC_DEBUG=1 (the watchdog then says which rank "
    "was elsewhere) or the flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE=2000, "
    "TORCH_NCCL_DUMP_ON_TIMEOUT=1) and compare each rank's last collectives."
)


def _watchdog_records(inputs: Sequence[Input]) -> List[Finding]:
    """The MD891 finding when PyTorch's watchdog records (:data:`_WORK`) of one process group
    (or of no named group) in ``inputs`` name different collectives: another sequence number,
    type or size. Ranks of one group time out in the same collective when they are in step."""
    # process group -> (SeqNum, OpType, NumelIn) -> (input index, line, rank)
    seen: Dict[Optional[str], Dict[Tuple[str, str, str], Tuple[int, int, Optional[str]]]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error or "WorkNCCL(" not in inp.head + inp.tail:
            continue
        text = inp.head if inp.tail in inp.head else inp.head + "\n" + inp.tail
        for m in _WORK.finditer(text):
            key = (m.group("seq"), m.group("op"), m.group("nin") or "?")
            rank = m.group("rank") or (str(inp.rank) if inp.rank is not None else None)
            seen.setdefault(m.group("pg"), {}).setdefault(
                key, (i, text.count("\n", 0, m.start()) + 1, rank)
            )
    for pg, works in seen.items():
        if len(works) < 2:
            continue
        listed = "; ".join(
            f"{'rank ' + r + ' ' if r else ''}SeqNum {seq} {op}"
            + (f" of {n} elements" if n != "?" else "")
            for (seq, op, n), (_i, _l, r) in sorted(works.items(), key=lambda kv: int(kv[0][0]))
        )
        group = f"process group {pg}" if pg is not None else "one process group (if they are)"
        (i, lineno, _r) = min(works.values())
        text = next((t for n, t in _input_lines(inputs[i]) if n == lineno), "WorkNCCL(")
        m = reading.match(
            ORDER_SIG,
            f"PyTorch's watchdog timed out in different collectives of {group}: {listed}. "
            "Ranks in step time out in the same one; these were elsewhere, so one rank issued "
            "collectives the others did not (another count, order or size).",
            line=signatures.printable(text.strip()),
            lineno=lineno,
            remedy=ORDER_SIG.remedy + TORCH_DESYNC,
        )
        return [reading.at_input(m, i, inputs[i], rank=None)]
    return []
