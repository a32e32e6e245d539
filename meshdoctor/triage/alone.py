"""Every rank alone in a group of size 1: the launcher started N processes, and each reports
rank 0 of a world of 1 (``rank 0 of 1``, ``rank=0 world_size=1``), or ``Distributed
available: False``, or an ``all_sum`` of ones that comes back as ones. No line says it is an
error: MLX's non-strict ``mx.distributed.init()`` (the default) returns the singleton group
(``rank() == 0``, ``size() == 1``) when no backend forms a group (MLX
``mlx/distributed/distributed.cpp``; ``mlx/distributed/mpi/no_mpi.cpp``: a build without a
backend), so each process runs the whole job on its own. Triage names it with MD890, a
finding it makes itself from what the ranks printed, across the inputs.

The rule (:func:`readings`): in the logs read (their first and last bytes, :attr:`Input.head`
and :attr:`Input.tail`), lines that say a rank is alone (:data:`ALONE`), and a job of more than
one process: a launcher line (``mpirun -np 2``, ``mlx.launch -n 2`` or ``--hosts a,b``) names
N of 2 or more, or two or more such lines came from different processes (different text, or
different inputs); no line shows a rank other than 0 or a world larger than 1. An ``all_sum``
of ones that is still ones is counted only with the launcher's N or from two processes, like
the others. The finding is a ``cause``: the rest of the job's errors (a whole model loaded on
every rank, ranks that never meet) follow from it.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading, stopped
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD890"

ALONE_SIG = signature(
    CODE,
    "triage.alone-in-size-1-group",
    None,
    "Every rank of this job is alone in a group of size 1: the launcher started several "
    "processes, but each reports rank 0 of 1 (or 'Distributed available: False', or an "
    "all_sum of ones equal to 1). MLX's default, non-strict init returns a group of size 1 "
    "when no backend forms a group, without an error, so each process ran the whole job by "
    "itself.",
    'Find out why no backend formed the group: `python -c "import mlx.core as mx; '
    'print(mx.distributed.is_available())"` on each host (False: this MLX build has no '
    "distributed backend, install the release wheel or a build with it); launch with the "
    "backend the program asks for (`mlx.launch --backend ring|jaccl|mpi ...`: mlx.launch sets "
    "that backend's environment only); and init strictly "
    "(`mx.distributed.init(strict=True, backend=...)`) so the real error is printed instead of "
    "a group of size 1.",
    "MLX mlx/distributed/distributed.cpp (non-strict init: the singleton group) and "
    "mlx/distributed/mpi/no_mpi.cpp; mlx #1196 (a wheel without MPI: every process rank 0, "
    "fixed by MLX PR #1199); MLX PR #4558 (a failed non-strict init cached)",
    examples=(),
    check="MD102",
    causes=[
        (
            "this MLX build has no such backend (a wheel or source build without MPI, ring "
            "or JACCL)",
            "'Distributed available: False', or mx.distributed.is_available() False on the host",
        ),
        (
            "the launcher did not pass the backend the program asks for (mpirun for a "
            "program that inits jaccl or ring, mlx.launch --backend ring for one that inits "
            "jaccl, or plain python/ssh with no launcher environment)",
            "the program's init(backend=...) differs from the launcher's --backend; no "
            "MLX_RANK / MLX_HOSTFILE / OMPI_COMM_WORLD_RANK in the ranks' environment",
        ),
        (
            "nccl-tests (or another MPI program) built without MPI, or against another MPI "
            "than the mpirun that started it: each process runs as a job of its own (make "
            "MPI=1 MPI_HOME=... with the MPI whose mpirun launches it)",
            "each process prints its own nccl-tests header and its own '#  Rank  0' line; "
            "`ldd all_reduce_perf | grep mpi` names another MPI than `which mpirun`",
        ),
        (
            "the program inits with backend 'any' (init() without backend=), which tries nccl, "
            "ring, mpi and jaccl in that order and takes the first group it gets, so under "
            "`mlx.launch --backend jaccl` an earlier backend's group of size 1 wins (mlx "
            "#3442; mlx.launch exports MLX_DISTRIBUTED_BACKEND since MLX PR #3440)",
            "mlx.launch --backend jaccl (or mpi) and mx.distributed.init() with no backend=",
        ),
        (
            "an earlier non-strict init failed and its group of size 1 was cached, so a "
            "later init returns it (MLX PR #4558)",
            "the program calls init() more than once (a library inits first); a strict init "
            "run alone forms the group",
        ),
    ],
)

ALONE_SIG = with_why(
    ALONE_SIG,
    "Nothing fails at the moment it happens: every process computes alone (its "
    "all_sum returns its own data, each loads the whole model), so the job is wrong, "
    "slow or runs out of memory later; what follows is a consequence of this.",
)

ENTRY = entry(ALONE_SIG, "triage every rank alone")

# a rank that says it is rank 0 of a world of 1
_RANK0_OF_1 = re.compile(r"\brank\W{0,3}0\s*(?:/|of|out of)\s*1\b", re.I)
_RANK0 = re.compile(r"\brank(?:\(\))?\W{0,3}0\b", re.I)
_SIZE1 = re.compile(r"\b(?:world[ _.]?)?size(?:\(\))?\W{0,3}1\b", re.I)
# a group size of 1 said on its own: "world_size=1", "group size: 1", "size()=1", or a bare
# "size=1" / "Actual: size=1" that no other word qualifies (not "batch size=1", "step_size=1")
_SIZE1_ALONE = re.compile(
    r"\b(?:world[ _.]?size|group[ _.]?size|size\(\))\s*(?:=|:|==|is)?\s*1\b|"
    r"(?:^|[^\w\s.]\s*|\b(?:actual|got|but|only|returns?|reports?)\W{0,2})size\s*[=:]\s*1\b"
    r"|\bsingleton\b",
    re.I,
)
# words that say a line speaks for every process ("size=1 on each rank", "every rank")
_EACH = re.compile(
    r"\b(?:on|for|in) (?:each|every|all) (?:rank|process|node|host)s?\b|\b"
    r"(?:each|every|all) (?:rank|process|node)s?\b",
    re.I,
)
_UNAVAILABLE = re.compile(r"\bdistributed[ _.](?:is[ _.])?available(?:\(\))?\W{0,4}false\b", re.I)
# an all_sum of ones printed as ones: array([1, 1, ..., 1], dtype=float32)
_ONES = re.compile(r"\barray\(\[\s*1(?:\.0*)?(?:\s*,\s*(?:1(?:\.0*)?|\.\.\.))+\s*\]")
# a line that shows a real group: a rank above 0, or a world of 2 or more
_GROUP = re.compile(
    r"\brank(?:\(\))?\W{0,3}0*[1-9]\d*\s*(?:/|of|out of)\s*\d+|"
    r"\b(?:world[ _.]?)?size(?:\(\))?\W{0,3}(?:[2-9]|[1-9]\d+)\b|"
    r"\bdistributed[ _.](?:is[ _.])?available(?:\(\))?\W{0,4}true\b",
    re.I,
)
# the launcher's command line with the number of processes it starts
_MPIRUN = re.compile(r"\b(?:mpirun|mpiexec|prterun)\b.*?\s-(?:np|n|c)\s+(\d+)")
_LAUNCH_N = re.compile(r"\bmlx\.launch\b.*?\s(?:-n|--nproc)\s+(\d+)")
_LAUNCH_HOSTS = re.compile(r"\bmlx\.launch\b.*?\s--hosts[ =](\S+)")
# mlx.launch or mpirun given a hostfile: a job of its hosts (2 or more: a hostfile of one host
# is no distributed job)
_LAUNCH_HOSTFILE = re.compile(
    r"\b(?:mlx\.launch|mpirun|mpiexec)\b.*?\s(?:--hostfile|-hostfile|--machinefile)[ =]\S+"
)

# the launcher's backend and the program's init call, to say when they disagree
_LAUNCH_BACKEND = re.compile(r"\bmlx\.launch\b.*?\s--backend[ =](\w+)")
_INIT_CALL = re.compile(r"\bdistributed\.init\(([^)]*)\)")

_LOGS = ("log", "stdin")


def _lines(inp: Input) -> Iterator[Tuple[int, str]]:
    """``(line number, text)`` of the lines in an input's head and tail (each line once)."""
    head = inp.head.splitlines()
    yield from enumerate(head, 1)
    if inp.tail and len(inp.head.encode()) < inp.bytes:  # the tail holds lines past the head
        tail = inp.tail.splitlines()[1:]  # its first line may be cut
        first = inp.lines - len(tail) + 1
        for i, ln in enumerate(tail):
            if first + i > len(head):
                yield first + i, ln


# nccl-tests' device list: "#  Rank  0 Group  0 Pid    798 on  hw14 device  0 [0x0f] H800";
# two processes that each list their own Rank 0 ran as two jobs
_TESTS_RANK0 = re.compile(r"^#\s+Rank\s+0\s+Group\s+\d+\s+Pid\s+(\d+)\s+on\s+(\S+)")


def alone_line(text: str) -> Optional[str]:
    """Why ``text`` says its rank is alone (``"rank 0 of 1"``, ``"no backend"``, ``"ones"``), or
    None."""
    if _UNAVAILABLE.search(text):
        return "no backend"
    if (
        _RANK0_OF_1.search(text)
        or (_RANK0.search(text) and _SIZE1.search(text))
        or _SIZE1_ALONE.search(text)
    ):
        return "rank 0 of 1"
    if _ONES.search(text):
        return "ones"
    m = _TESTS_RANK0.search(text)
    if m:
        return "tests rank 0"
    return None


_TESTS_REMEDY = (
    "Each process ran nccl-tests alone: rebuild nccl-tests with MPI against the MPI whose "
    "mpirun starts it (`make MPI=1 MPI_HOME=/path/to/that/mpi`; `ldd build/all_reduce_perf | "
    "grep -i mpi` must name the library of `which mpirun`'s installation), then one header "
    "and one list of all ranks (-np x -g of them) is printed; with one GPU per process "
    "use -g 1."
)


def _parallel_headers(inp: Input) -> List[Tuple[int, str]]:
    """nccl-tests headers of one input printed side by side (a second before the first run's
    table): each process of the launch ran a test of its own. ``(line number, text)``."""
    heads: List[Tuple[int, str]] = []
    for lineno, text in _lines(inp):
        if stopped.TESTS_HEAD.search(text):
            heads.append((lineno, text.strip()))
        elif stopped.TESTS_DONE.search(text) or stopped.TESTS_ROW.match(text):
            break  # the first run's table: a later header is another run
    return heads if len(heads) >= 2 else []


def started(text: str) -> Optional[int]:
    """The number of processes a launcher line starts (``mpirun -np 2``, ``mlx.launch -n 2``,
    ``mlx.launch --hosts a,b``; 2, at least, for ``mlx.launch --hostfile FILE``), or None."""
    for rx in (_MPIRUN, _LAUNCH_N):
        m = rx.search(text)
        if m:
            return int(m.group(1))
    m = _LAUNCH_HOSTS.search(text)
    if m:
        return len([h for h in m.group(1).split(",") if h])
    return 2 if _LAUNCH_HOSTFILE.search(text) else None


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD890 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings``
    are the others (unused but for symmetry with the other readings)."""
    del findings
    said: List[Tuple[int, Input, int, str, str]] = []  # (input index, input, line, text, why)
    n: Optional[int] = None
    backend: Optional[str] = None  # the launcher's --backend
    init_any = False  # a program's init() that names no backend
    by_hostfile = False  # the launcher's N read as "a hostfile's hosts"
    tests_heads = 0  # nccl-tests headers printed side by side in one input
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in _lines(inp):
            if _GROUP.search(text):
                return []  # a real group (or part of one) was formed
            b = _LAUNCH_BACKEND.search(text)
            backend = b.group(1) if b else backend
            c = _INIT_CALL.search(text)
            init_any = init_any or bool(c and "backend" not in c.group(1))
            got = started(text)
            if got is not None:
                n = max(n or 0, got)
                named = any(rx.search(text) for rx in (_MPIRUN, _LAUNCH_N, _LAUNCH_HOSTS))
                by_hostfile = by_hostfile or not named
            why = alone_line(text)
            if why:
                said.append((i, inp, lineno, text.strip(), why))
    for i, inp in enumerate(inputs):
        if inp.kind in _LOGS and not inp.error:
            heads = _parallel_headers(inp)
            said.extend((i, inp, at, f"{t} (x{len(heads)})", "tests header") for at, t in heads[:1])
            tests_heads = max(tests_heads, len(heads))
    if not said:
        return []
    processes = max(len({(i, text) for i, _, _, text, _ in said}), tests_heads)
    tests = {
        m.group(1, 2)
        for *_, text, w in said
        if w == "tests rank 0"
        for m in [_TESTS_RANK0.search(text)]
    }
    if any(w == "tests rank 0" for *_, w in said) and len(tests) < 2:
        said = [x for x in said if x[4] != "tests rank 0"]  # one process's own rank 0
        if not said:
            return []
    if any(_EACH.search(text) for _, _, _, text, _ in said):
        processes = max(processes, 2)  # one line that speaks for every rank
    if (n or processes) < 2:
        return []
    i, inp, lineno, text, _ = said[0]
    count = n or processes
    whys = sorted({w for *_, w in said})
    what = {
        "no backend": "'Distributed available: False'",
        "rank 0 of 1": "rank 0 of a group of size 1",
        "ones": "an all_sum of ones that is still ones",
        "tests rank 0": "nccl-tests' own 'Rank 0' in each process (each printed its own header "
        "and device list)",
        "tests header": "an nccl-tests header printed by each process side by side (each ran "
        "a test of its own)",
    }
    mismatch = ""
    if backend and backend not in ("ring", "any") and init_any:
        mismatch = (
            f" mlx.launch starts it with --backend {backend} but the program calls "
            "mx.distributed.init() without backend=, that is backend 'any', which tries nccl, "
            "ring, mpi and jaccl in that order and can take a group of size 1 from an earlier "
            f"one: call init(backend='{backend}', strict=True)."
        )
    m = reading.match(
        ALONE_SIG,
        (
            "the launcher started a process on each host of its hostfile"
            if by_hostfile and n == 2
            else f"{count} processes were started" + (" (the launcher's line)" if n else "")
        )
        + f" and {len(said)} line(s) report {', '.join(what[w] for w in whys)}."
        + mismatch,
        line=signatures.printable(text),
        lineno=lineno,
        remedy=_TESTS_REMEDY if {"tests header", "tests rank 0"} & set(whys) else None,
    )
    last = said[-1][2] if said[-1][0] == i else lineno
    return [reading.at_input(m, i, inp, last_lineno=last, count=len(said))]
