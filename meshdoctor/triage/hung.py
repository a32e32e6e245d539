"""A hang with no error: every rank's output stops part-way and no line says why. A
collective that one rank never enters (a ring or JACCL deadlock, MLX #4475; a rank that skipped
an ``all_sum``, MLX #1210) blocks the others for ever and prints nothing, so the logs simply
end. Triage names it with MD892, a finding it makes itself across the inputs, and says since
when and how to see where the ranks wait.

The rule (:func:`readings`): the logs read (at least one) hold no finding of a rank (the job's
own ``--exit-code`` aside), and their output stopped part-way: the last progress line of a log
(``step 37/200``, ``Iter 40/1000``, tqdm's ``12%|..| 120/1000``, ``progress: 2048/8192``)
shows a count below its total, or a line of another input (a launcher, a supervisor, a
timestamped kill) comes :data:`GAP_S` seconds or more after every rank's last timestamp, or the
job's exit status says it was ended from outside (timeout(1)'s 124, SIGKILL, SIGTERM, SIGINT),
or a log stops where :mod:`meshdoctor.triage.stopped` can say it stopped: inside NCCL's
communicator init (the stage named, with what helps there), short in an nccl-tests table, at a
bare command line with no output at all, or, across ranks (or at a step of communication), at
a step every log announced (``calling sum_scatter``).
"Since when" is the latest of the ranks' last timestamps (else the last progress line). Its
role is ``cause``: the exit status that follows is its consequence.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading, stopped
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why
from meshdoctor.triage.logs import parse_time

CODE = "MD892"
GAP_S = 60.0  # a later line this long after the ranks' last one: their output had stopped
# exit statuses of a job ended from outside: timeout(1) (124), SIGINT (130, -2), SIGKILL (137,
# -9), SIGTERM (143, -15)
_ENDED_FROM_OUTSIDE = {124, 130, 137, 143, -2, -9, -15}

HUNG_SIG = signature(
    CODE,
    "triage.hang-without-error",
    None,
    "The job hung: every rank's output stops part-way (a progress count below its total, or "
    "no line for a long time while the job went on) and no rank printed an error. A "
    "collective that some rank never enters, or a transport that stopped moving data, blocks "
    "the others without a word.",
    "See where each rank waits while it still hangs: `meshdoctor triage --running` on each "
    "host (or `meshdoctor triage --running --hostfile HOSTFILE` for all of them) prints every "
    "rank's Python and native stack and the collective it is blocked in (`py-spy dump --pid "
    "PID` by hand); ranks in different collectives, or the same one from different lines, "
    "mean the program calls them in a different order on different ranks. Next time run the "
    "job under `meshdoctor launch --hang-after SECONDS -- ...`, which takes the stacks when "
    "the output stops.",
    "MLX #4475 (ranks blocked in all_sum, no log output, no exception); MLX #1210 (a rank "
    "that skips an all_sum hangs the others); py-spy dump (https://github.com/benfred/py-spy)",
    examples=(),
    causes=[
        (
            "the ranks call collectives in a different order or number (one inside an "
            "`if rank == 0`, a data-dependent loop length)",
            "stacks: ranks blocked in different collectives, or the same one from different lines",
        ),
        (
            "GPUs of one host that cannot reach each other peer to peer: PCIe ACS or the IOMMU "
            "redirecting their P2P traffic, so NCCL's first transfer between them never "
            "completes (a hang at the first collective on PCIe GPUs without NVLink)",
            "NCCL_P2P_DISABLE=1 makes it pass; `nvidia-smi topo -p2p r`; ACSCtl enabled on the "
            "PCIe bridges (`lspci -vvv`); disable ACS or the IOMMU (iommu=pt) in the BIOS or "
            "kernel, or keep NCCL_P2P_DISABLE=1",
        ),
        (
            "a transport deadlock inside the backend (MLX #4475: ring all_sum on the CPU stream)",
            "stacks: every rank in the same all_sum at the same line, in recv/poll",
        ),
        (
            "a rank is stopped or starved (SIGSTOP, a debugger, swapping)",
            "its process state 'stopped' (T), or its CPU time not growing",
        ),
    ],
)

HUNG_SIG = with_why(
    HUNG_SIG,
    "A hang prints nothing, so nothing else in the logs names a cause: the stacks of "
    "the live ranks are the evidence; the exit status of a job ended after it is its "
    "consequence.",
)

ENTRY = entry(HUNG_SIG, "triage hang without an error")

# progress lines: (done, total)
_PROGRESS = (
    re.compile(r"\d+%\|[^|]*\|\s*(\d+)/(\d+)"),  # tqdm
    re.compile(r"\b(?:step|iter(?:ation)?|epoch|batch|progress)\b\W{0,3}(\d+)\s*/\s*(\d+)", re.I),
)
_LOGS = ("log", "stdin")


# an NCCL of 2.25 on a GeForce RTX 50 (Blackwell, compute capability 12.0): its kernels ask
# more shared memory than the GPU gives (NCCL 2.26.2 release notes: "Fix shared memory usage on
# recent Blackwell GPUs"), so a run stops after init
_NCCL_VERSION = re.compile(r"NCCL version (2\.25\.\d+)")
_RTX_50 = re.compile(r"GeForce RTX 50\d0\b")
_NCCL_2_26_HINT = (
    "Upgrade NCCL to 2.26.2 or later (`pip install -U nvidia-nccl-cu12`, or nccl-tests rebuilt "
    "against it) before anything else: 2.25 does not run on RTX 50 GPUs."
)


def _nccl_too_old(logs: Sequence[Input]) -> Optional[str]:
    """What the logs say when they show NCCL 2.25.x and a GeForce RTX 50 GPU (Blackwell, sm_120,
    which that release does not support), or None."""
    text = "\n".join(x.head + x.tail for x in logs)
    v, gpu = _NCCL_VERSION.search(text), _RTX_50.search(text)
    if not (v and gpu):
        return None
    return (
        f"the log shows NCCL {v.group(1)} on a {gpu.group(0)}: NCCL 2.25 asks these Blackwell "
        "GPUs (compute capability 12.0) for more kernel shared memory than they allow, so the "
        "run stops after init; NCCL 2.26.2 is the first release that supports them"
    )


def progress(text: str) -> Optional[Tuple[int, int]]:
    """``(done, total)`` of a progress line (``step 37/200``, tqdm's ``| 120/1000``), or None."""
    for rx in _PROGRESS:
        m = rx.search(text)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def _tail_lines(inp: Input) -> List[Tuple[int, str]]:
    """``(line number, text)`` of the lines of an input's tail, in order."""
    lines = (inp.tail or inp.head).splitlines()
    if len(inp.head.encode()) < inp.bytes and lines:
        lines = lines[1:]  # the tail's first line may be cut
    first = inp.lines - len(lines) + 1
    return [(first + i, ln) for i, ln in enumerate(lines)]


def _last(inp: Input) -> Tuple[Optional[_dt.datetime], Optional[Tuple[int, str]], bool]:
    """An input's last timestamp, its last progress line ``(line number, text)`` and whether
    that line stops short: one more logged step would still be below its total (the step: the
    difference from the progress line before it with the same total, else 1; so a log every 10
    steps that ends at ``step 190/200`` of steps 0-199 finished, one at ``step 37/200`` did
    not)."""
    when: Optional[_dt.datetime] = None
    prog: Optional[Tuple[int, str]] = None
    last: Optional[Tuple[int, int]] = None
    step = 1
    for lineno, text in reversed(_tail_lines(inp)):
        if when is None:
            when = parse_time(text)
        got = progress(text)
        if got is None:
            continue
        if last is None:
            prog, last = (lineno, text.strip()), got
        elif got[1] == last[1] and got[0] < last[0]:
            step = last[0] - got[0]
            break
    short = last is not None and last[0] + step < last[1]
    return when, prog, short


def _first_time(inp: Input) -> Optional[_dt.datetime]:
    return next((t for t in map(parse_time, inp.head.splitlines()[:50]) if t), None)


_SCATTER = re.compile(r"\b(?:sum_scatter|reduce_scatter)\b")
_SCATTER_HINT = (
    "The ring and mpi backends have no sum_scatter (MLX 0.32.x raises 'sum_scatter not "
    "supported', and it was reported to hang with no error, MLX #4285): use all_sum and take "
    "this rank's slice, or a backend that has it (jaccl from MLX 0.32.1, nccl)."
)


def _stops(logs: Sequence[Tuple[int, Input]]) -> List[Tuple[int, Input, "stopped.Stop"]]:
    """The logs that stop in one of :func:`meshdoctor.triage.stopped.where`'s shapes, when
    that says the job hung: any log that stops inside NCCL's init or short in an nccl-tests
    table; a bare command line when no log holds output; or every log at a step it
    announced."""
    got = [(i, inp, stopped.where(_tail_lines(inp))) for i, inp in logs]
    if any(st is None or st.shape != "command" for _, _, st in got):
        got = [(i, inp, st) for i, inp, st in got if st is None or st.shape != "command"]
    firm = [(i, inp, st) for i, inp, st in got if st is not None and st.shape != "announced"]
    if firm:
        return firm
    if all(st is not None for _, _, st in got) and (
        len(got) >= 2 or any(_COMMUNICATION.search(st.line) for _, _, st in got if st)
    ):
        # every log stops at a step it announced: several ranks alike, or one rank at a
        # step of communication (a prompt, a model load or a chat session alone is no hang)
        return [(i, inp, st) for i, inp, st in got if st is not None]
    return []


_COMMUNICATION = re.compile(
    r"\b(?:all_?sum|all_?gather|sum_scatter|reduce_scatter|all_?reduce|all_to_all|barrier|"
    r"send|recv|broadcast|collective|distributed|init_process_group|rendezvous|connect)",
    re.I,
)


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD892 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read, ``findings`` of them all (the job's exit status among
    them)."""
    if any(not f.job for f in findings):
        return []  # a rank printed something: that is read instead
    logs = [(i, inp) for i, inp in enumerate(inputs) if inp.kind in _LOGS and not inp.error]
    logs = [(i, inp) for i, inp in logs if inp.lines]
    if not logs:
        return []
    lasts = [(i, inp, *_last(inp)) for i, inp in logs]
    later = None  # a line of another input long after the ranks' last ones
    stamped = sorted((x for x in lasts if x[2] is not None), key=lambda x: x[2])
    if len(stamped) >= 2 and (stamped[-1][2] - stamped[-2][2]).total_seconds() >= GAP_S:
        later = stamped[-1][2]
        lasts = [x for x in lasts if x is not stamped[-1]]
    short = [x for x in lasts if x[4]]
    times = [x[2] for x in lasts if x[2] is not None]
    ranks_end = max(times) if times else None
    ended = [
        f
        for f in findings
        if f.job and f.exit and int(f.exit.get("code", 0) or 0) in _ENDED_FROM_OUTSIDE
    ]
    where = _stops(logs) if not short and not ended and later is None else []
    if not short and not ended and later is None and not where:
        return []
    i, inp, when, prog, _ = (short or [x for x in lasts if x[2] == ranks_end] or lasts)[-1]
    lineno, line = prog if prog is not None else (inp.lines, _tail_lines(inp)[-1][1].strip())
    if where:
        i, inp, stop = where[0]
        lineno, line = stop.lineno, stop.line
    since = ranks_end.strftime("%Y-%m-%d %H:%M:%S UTC") if ranks_end else None
    here = []
    if since:
        start = min((t for t in map(_first_time, (x[1] for x in lasts)) if t), default=None)
        ran = (
            f", {int((ranks_end - start).total_seconds())} s after the first line" if start else ""
        )
        here.append(f"the ranks' output stops at {since}{ran}")
    for _, x, _, p, s in lasts:
        if p is not None and s:
            here.append(f"{x.source} stops at '{p[1]}' (line {p[0]})")
    if later is not None and ranks_end is not None:
        here.append(
            f"a later line at {later.strftime('%H:%M:%S')} shows the job still there "
            f"{int((later - ranks_end).total_seconds())} s after"
        )
    for f in ended:
        here.append(f"the job ended with {f.source} (ended from outside: a timeout or a kill)")
    hints = []
    old_nccl = _nccl_too_old([x for _, x, *_ in lasts])
    if old_nccl:
        here.append(old_nccl)
        hints.append(_NCCL_2_26_HINT)
    for _, x, stop in where:
        here.append(f"{x.source} stops at line {stop.lineno} ('{stop.line[:160]}'): {stop.here}")
        if stop.hint and stop.hint not in hints:
            hints.append(stop.hint)
        if _SCATTER.search(stop.line) and _SCATTER_HINT not in hints:
            hints.append(_SCATTER_HINT)
    m = reading.match(
        HUNG_SIG,
        f"{'; '.join(here)}.",
        line=signatures.printable(line),
        lineno=lineno,
        groups={"since": since} if since else {},
        remedy=" ".join(hints + [HUNG_SIG.remedy]) if hints else None,
    )
    rank = inp.rank if len(logs) == 1 else None
    return [reading.at_input(m, i, inp, rank=rank, time=ranks_end)]


STACK_CODE = "MD873"

STACK_SIG = signature(
    STACK_CODE,
    "triage.hang-in-stack",
    None,
    "The job hung: a stack dump given beside the logs shows a rank blocked (in a "
    "collective, a point-to-point receive or a step of the program that holds one) while no "
    "rank printed an error of its own; what the logs show after it (an application's "
    "readiness or request timeout, mlx.launch's -15 and 130/143 after the operator's Ctrl-C) "
    "is its echo, never its cause.",
    "Take the stacks of the other ranks while they still hang and compare where each waits: "
    "`meshdoctor triage --running` on each host (or `meshdoctor triage --running --hostfile "
    "HOSTFILE`), or `py-spy dump --pid PID` of every rank; a rank in a collective while "
    "another waits for its send (or in another collective) means the program's order of "
    "communication differs between ranks: make every rank do the same sends, receives and "
    "collectives in the same order. Next time run the job under `meshdoctor launch "
    "--hang-after SECONDS -- ...`, which takes every rank's stack when the output stops.",
    "py-spy dump (https://github.com/benfred/py-spy); MLX docs, distributed communication "
    "(every rank takes part in each collective; send and recv pair up); "
    "https://github.com/ml-explore/mlx/issues/3149; https://github.com/jundot/omlx/issues/3521",
    examples=(),
    causes=[
        (
            "the ranks communicate in a different order: one enters a collective (an all_sum "
            "inside a generation or training step) while its peer waits for its send",
            "one rank's stack in a collective, the other's in recv or in another collective",
        ),
        (
            "a point-to-point send/recv right after distributed init, before the peer has set "
            "up its buffers (JACCL, mlx #3149): the first receive gets wrong data and the "
            "next one hangs",
            "the receiving rank's own check fails (ok=False, a huge error) then its stack "
            "sits in recv; a barrier after init makes it pass",
        ),
        (
            "a peer that stopped or died without a word",
            "its process gone or stopped (T) on its host",
        ),
    ],
)
STACK_SIG = with_why(
    STACK_SIG,
    "A hang prints nothing, so the stack of the blocked rank is the only evidence; "
    "the timeouts and exit statuses that follow it are consequences, and a job that hung "
    "is never a go.",
)

STACK_ENTRY = entry(STACK_SIG, "triage hang shown by a stack")

# the program's own check of what it received failing (``ok=False``, ``correct: False``)
_BAD_CHECK = re.compile(r"\b(?:ok|correct|passed|match(?:es)?|equal)\s*[=:]\s*False\b", re.I)
# an application's error line that says it waited too long (a readiness or request timeout)
_TIMEOUT = re.compile(
    r"\b(?:ERROR|error|FATAL)\b.*(?:tim(?:ed|e) ?out|no \S+(?: \S+){0,3} (?:data|reply|response) "
    r"for \d+\s*s)",
)
_P2P = ("recv", "recv_like", "send")
_P2P_REMEDY = (
    " Blocked in a point-to-point receive with no error (or after a receive whose own check "
    "failed): a JACCL send/recv right after `mx.distributed.init()` may race the peer's "
    "setup (mlx #3149); synchronise once after init, before the first send/recv pair "
    "(`mx.eval(mx.distributed.all_sum(mx.ones(1)))`), and upgrade MLX (0.32.x could not "
    "reproduce it)."
)


# a thread blocked in tearing a communicator down (NCCL's ncclCommAbort / ncclCommDestroy,
# PyTorch's ProcessGroupNCCL::abort, destroy_process_group); pytorch/pytorch #149153: an
# ncclCommAbort of NCCL 2.25.1 that never returned, fixed in 2.26.2
_TEARDOWN = re.compile(
    r"\bncclComm(?:Abort|Destroy|Finalize)\w*|ProcessGroupNCCL::(?:abort|shutdown|"
    r"~ProcessGroupNCCL)\w*|\bdestroy_process_group\b"
)
_TEARDOWN_REMEDY = (
    "A communicator's abort or destroy that never returns is a defect of the NCCL (or "
    "PyTorch) release in use far more often than of the program: upgrade NCCL (ncclCommAbort "
    "hangs of 2.25.1 were fixed in 2.26.2) and PyTorch; until then, end the process without "
    "tearing the communicator down (exit after the error, or a timeout around "
    "destroy_process_group) and read the error that made it abort, if any, first."
)


def stacked(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD873 finding for a stack dump among ``inputs`` (a log whose text holds one,
    :func:`meshdoctor.triage.mismatch.dumps`) that shows a rank blocked, when no rank printed
    a cause of its own (``findings`` all consequences: -15 after an interrupt, a lost peer)
    and no other reading of a hang (MD891, MD892) was made; empty otherwise."""
    from meshdoctor.triage import mismatch, stacks

    if any(f.code in (CODE, mismatch.CODE) for f in findings):
        return []
    if any(f.role != signatures.CONSEQUENCE for f in findings if not f.job):
        return []
    got = []
    for i, inp in enumerate(inputs):
        if inp.kind in _LOGS and not inp.error:
            got.extend((i, inp, st) for st in mismatch.dumps(inp.head, inp.rank))
    if not got:
        return []
    i, inp, st = got[0]
    w = stacks.waiting(st, inp.host)
    frames = stacks.python_frames(st.python or "")
    inner = frames[0] if frames else None
    where = (
        f"in {w.where()}" if w.op else (f"in {inner[0]} at {inner[1]}:{inner[2]}" if inner else "")
    )
    here = [f"{w.who()} is blocked {where}".rstrip() + f" ({inp.source})"]
    bad = None
    for inp2 in inputs:
        if inp2.kind in _LOGS and not inp2.error:
            bad = bad or next(
                (ln.strip() for ln in inp2.head.splitlines() if _BAD_CHECK.search(ln)), None
            )
    timeout = None
    for inp2 in inputs:
        if inp2.kind in _LOGS and not inp2.error and timeout is None:
            timeout = next(
                (ln.strip() for ln in inp2.head.splitlines() if _TIMEOUT.search(ln)), None
            )
    if timeout:
        here.append(f"the application's own timeout follows it: '{timeout}'")
    if bad:
        here.append(f"the program's own check of what it received failed: '{bad}' (wrong data)")
    echoes = [f for f in findings if f.exit is not None]
    if echoes:
        here.append(
            "the exit statuses that follow ("
            + ", ".join(sorted({f.match.line for f in echoes}))
            + ") are the teardown after it"
        )
    remedy = STACK_SIG.remedy + (_P2P_REMEDY if (w.op in _P2P or bad) else "")
    teardown = _TEARDOWN.search((st.native or "") + "\n" + (st.python or "") + "\n" + inp.head)
    if teardown:
        here.append(
            f"the blocked thread is in the communicator's teardown ({teardown.group(0)}), not "
            "in a collective: the abort or destroy itself does not return"
        )
        remedy = _TEARDOWN_REMEDY
    line = (inner and f"{inner[0]} ({inner[1]}:{inner[2]})") or "(a stack dump)"
    m = reading.match(
        STACK_SIG,
        f"{'; '.join(here)}.",
        line=signatures.printable(line),
        lineno=1,
        groups={"collective": w.op} if w.op else {},
        remedy=remedy,
    )
    return [reading.at_input(m, i, inp, rank=st.rank if st.rank is not None else inp.rank)]
