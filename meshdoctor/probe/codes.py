"""The probe's finding codes (MD5xx): one :class:`meshdoctor.codes.model.Entry` per code (its
title, its :class:`meshdoctor.codes.model.Doc` and the ``check`` names of the results that carry
it), the code itself (``GROUP`` is ``GROUP_ENTRY.code``) and :data:`ENTRIES`, which
:mod:`meshdoctor.catalogue` collects. :func:`result` makes a probe result that carries its code's
title. Codes are stable: never renumber, only add."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from meshdoctor.codes.model import PROBE, Doc, Entry
from meshdoctor.model import Result
from meshdoctor.probe.worker import OPS

NCCL_TESTS = "nccl-tests doc/PERFORMANCE.md (algbw, busbw, #wrong)"
MLX_DIST = "MLX mlx.distributed API (init, all_sum, all_gather, send, recv)"
# the ``check`` names of the per-op results (``probe.all_sum``, ...: ``explain probe.all_sum``)
_OP_NAMES = tuple(f"probe.{op}" for op in list(OPS) + ["bare_all_sum"])

GROUP_ENTRY = Entry(
    code="MD501",
    kind=PROBE,
    title="probe group formation",
    names=("probe.group",),
    doc=Doc(
        meaning="The ranks could not form a group with the real backend (mlx.distributed.init). "
        "The evidence holds the backend's own message from the first rank that failed, "
        "matched against the failure signatures (MD6xx). Also raised before launch when "
        "a local rank's address is not assigned on this machine.",
        why="A mesh whose ranks cannot form a group runs no job at all.",
        action="Fix the hostfile or the link the message names (`meshdoctor explain` the "
        "signature code in the evidence), then probe again.",
        sources=(MLX_DIST,),
    ),
)
GROUP = GROUP_ENTRY.code

DEAD_ENTRY = Entry(
    code="MD502",
    kind=PROBE,
    title="probe dead rank",
    names=("probe.rank",),
    doc=Doc(
        meaning="A rank exited before the probe finished: its exit status or signal, the step "
        "it was in, and its stderr tail are in the evidence. The other ranks usually "
        "fail right after it ('[ring] connection to a peer was lost'); the first rank to "
        "die is the cause.",
        why="mlx.launch would have exited 0 here (mlx 0.32.4 launch.py exits 0 when a rank "
        "fails): a job on this mesh can die while its wrapper reports success.",
        action="Read the first dead rank's stderr tail and the signature matched in it; fix "
        "that host, then probe again.",
        sources=("mlx/_distributed_utils/launch.py (mlx 0.32.4: exit 0 when a rank fails)",),
    ),
)
DEAD = DEAD_ENTRY.code

HANG_ENTRY = Entry(
    code="MD503",
    kind=PROBE,
    title="probe hang",
    names=("probe.hang",),
    doc=Doc(
        meaning="A collective made no progress within the per-step deadline (--timeout, else "
        "size / 20 MB/s + 10 s + 0.05 s per ring step, times the ranks per CPU of an "
        "oversubscribed host, and at least 5 x the slowest warm-up call). The evidence names the step (op and iteration), which "
        "ranks waited inside it, which never arrived, which stopped heartbeating "
        "(stopped or wedged process), and the Python stacks of the waiting ranks. All "
        "ranks were torn down (SIGTERM, then SIGKILL).",
        why="Upstream backends have no deadline of their own: a job that meets this hang "
        "waits forever (MLX #3910, #4278).",
        action="Look at the ranks that never arrived or stopped heartbeating first; check their "
        "hosts (`meshdoctor check`), then probe again.",
        sources=("MLX #3910, #4278 (survivors spin with no timeout)",),
    ),
)
HANG = HANG_ENTRY.code

WRONG_ENTRY = Entry(
    code="MD504",
    kind=PROBE,
    title="probe correctness",
    names=_OP_NAMES,
    doc=Doc(
        meaning="A collective returned values that differ from the exact expected result "
        "(#wrong elements, as in nccl-tests), or a rank's all_gather slice arrived with "
        "a different digest than the one it sent.",
        why="Upstream JACCL does not check completion status, so only a checksum finds silent "
        "corruption (still open upstream as of mlx 0.32.4): a job on this mesh computes "
        "wrong results without an error.",
        action="Do not run jobs on this mesh; re-seat cables, reboot the nodes named, probe again.",
        sources=(NCCL_TESTS, "MLX mlx/distributed/jaccl (completion status unchecked, mlx 0.32.4)"),
    ),
)
WRONG = WRONG_ENTRY.code

BANDWIDTH_ENTRY = Entry(
    code="MD505",
    kind=PROBE,
    title="probe bandwidth",
    names=_OP_NAMES + ("probe.gpu_clocks",),
    doc=Doc(
        meaning="Bandwidth figures of one op in nccl-tests convention: the time per call of "
        "the timed batches (each rank's batch over its iterations, the slowest rank), laps "
        "min/median/max, algbw = bytes / 1e9 / seconds, busbw = algbw x 2(n-1)/n for all_sum, x (n-1)/n for all_gather, x 1 "
        "for send/recv.",
        why="busbw compares across world sizes and with the link's rate: a figure far below "
        "the link shows a slow cable, a dock or the wrong backend.",
        action="Compare busbw with the link rate; with --pairs find the slow pair, then check "
        "its link (`meshdoctor check --only MD205`).",
        sources=(NCCL_TESTS,),
    ),
)
BANDWIDTH = BANDWIDTH_ENTRY.code

LEFTOVER_ENTRY = Entry(
    code="MD506",
    kind=PROBE,
    title="probe leftovers",
    names=("probe.leftovers",),
    doc=Doc(
        meaning="After teardown a process carrying this probe run's marker "
        "(MESHDOCTOR_PROBE_ID) was still there. It was sent SIGKILL.",
        why="A leftover rank holds ports, queue pairs and memory; one that survives SIGKILL "
        "(uninterruptible sleep in the driver) puts its host in needs_reboot.",
        action="Reboot the hosts listed in needs_reboot; otherwise nothing is left to do.",
        sources=("MLX #3910, #4278 (ranks stuck in native code)",),
    ),
)
LEFTOVER = LEFTOVER_ENTRY.code

SOAK_ENTRY = Entry(
    code="MD507",
    kind=PROBE,
    title="probe soak hang rate",
    names=("probe.soak",),
    doc=Doc(
        meaning="--soak N ran each op N times with a per-call deadline, relaunching the ranks "
        "after each hang; the hang rate is reported.",
        why="Any hang fails: a ring that deadlocks a few percent of calls (reported with "
        "mlx 0.32.2 on CPU-stream all_sum at 3+ ranks, MLX #4475) makes long jobs certain to "
        "die. The remedy names that defect only when the ranks run a version it was "
        "reported with.",
        action="Upgrade MLX on every node and soak again; report the hang rate upstream with "
        "the evidence.",
        sources=("MLX #4475 (ring backend: CPU-stream all_sum deadlocks, mlx 0.32.2)",),
    ),
)
SOAK = SOAK_ENTRY.code

PAIRS_ENTRY = Entry(
    code="MD508",
    kind=PROBE,
    title="probe pair matrix",
    names=("probe.pairs",),
    doc=Doc(
        meaning="--pairs measured send/recv between every ordered pair of ranks the backend "
        "connects (the ring backend only connects ring neighbours) and names the "
        "slowest pair; a pair with wrong values or a failure fails.",
        why="One slow or failing link slows or breaks every collective that crosses it.",
        action="Check the cable and ports of the pair named (`meshdoctor check --only MD205`), "
        "then probe again.",
        sources=(NCCL_TESTS, MLX_DIST),
    ),
)
PAIRS = PAIRS_ENTRY.code

START_ENTRY = Entry(
    code="MD509",
    kind=PROBE,
    title="probe rank start-up",
    names=("probe.start",),
    doc=Doc(
        meaning="A rank could not be started or died before reporting ready: ssh refused or "
        "unreachable, Python or mlx missing on that host, or this host did not have the "
        "memory the run needs available right now (nothing was started). The evidence has the "
        "rank's stderr, or the bytes needed and available.",
        why="The mesh was not assessed (exit 3). When the interpreter of this machine's ranks "
        "(MESHDOCTOR_PYTHON) is missing or has no MLX, it fails (exit 1), the same answer "
        "`meshdoctor check` gives (MD102).",
        action="Fix ssh (ssh -o BatchMode=yes HOST) or install MLX on the host named; point "
        "MESHDOCTOR_PYTHON at the ranks' interpreter.",
        sources=("ssh(1) BatchMode", "MLX installation documentation"),
    ),
)
START = START_ENTRY.code

INTERRUPTED_ENTRY = Entry(
    code="MD510",
    kind=PROBE,
    title="probe interrupted",
    names=("probe.interrupted",),
    doc=Doc(
        meaning="meshdoctor was interrupted (Ctrl-C, or SIGTERM from a supervisor) before the "
        "probe finished. Every rank was still torn down and checked for leftovers.",
        why="The mesh was not assessed (exit 3).",
        action="Probe again.",
        sources=("signal(7): SIGINT, SIGTERM, SIGHUP",),
    ),
)
INTERRUPTED = INTERRUPTED_ENTRY.code

COVERAGE_ENTRY = Entry(
    code="MD511",
    kind=PROBE,
    title="probe ran no collective",
    names=("probe.coverage",),
    doc=Doc(
        meaning="The ranks formed a group but every collective asked for (--op) was skipped "
        "because the backend lacks it in this MLX version (the ring backend has no "
        "sum_scatter; jaccl adds it in MLX 0.32.1; nccl has no send/recv), so no "
        "collective ran. The evidence names each op, the backend and the MLX version "
        "that adds it.",
        why="Nothing was measured: a gate such as `meshdoctor probe --op X || exit 1` must "
        "not pass on a probe that did not probe (exit 3, could not assess).",
        action="Probe an op the backend has (all_sum, all_gather, send_recv), pick a backend "
        "that has the op, or upgrade MLX to the version named.",
        sources=(
            "MLX sources v0.30.1-v0.32.4 mlx/distributed/{ring,jaccl,nccl}: "
            "'sum_scatter not supported.'",
            "MLX #4285 (ring sum_scatter)",
        ),
    ),
)
COVERAGE = COVERAGE_ENTRY.code

OVERSUBSCRIBED_ENTRY = Entry(
    code="MD512",
    kind=PROBE,
    title="probe host oversubscribed",
    names=("probe.oversubscribed",),
    doc=Doc(
        meaning="More probe ranks run on this host than it has CPUs (the evidence has both "
        "counts): the ranks take turns on the cores. The per-step deadline was raised by the "
        "same factor, and grows further with the slowest warm-up call.",
        why="Oversubscribed ranks wait for a core inside every collective: the times and "
        "bandwidths measure the scheduler, not the links, and a slow call is not a hang of "
        "MLX.",
        action="Probe with at most one rank per CPU on each host (-n, or fewer hostfile "
        "entries per host), or read the figures as a load test.",
        sources=(
            "MLX distributed docs (one process per rank, launched by mlx.launch)",
            NCCL_TESTS,
        ),
    ),
)
OVERSUBSCRIBED = OVERSUBSCRIBED_ENTRY.code

JUDGEMENT_ENTRY = Entry(
    code="MD513",
    kind=PROBE,
    title="probe bandwidth judgement",
    names=("probe.min_busbw", "probe.link_class", "probe.baseline"),
    doc=Doc(
        meaning="The figures judged: below --min-busbw RATE an op or pair fails; below the "
        "stated fraction of what its link class should carry (--link CLASS: Thunderbolt 5 "
        "RDMA or IP, Thunderbolt 4 IP, 10/25/100 GbE, NVLink 3/4/5, PCIe gen 3-5 by lanes) "
        "it warns; below 80 % of a healthy run's figure (--baseline FILE, written by "
        "--save-baseline FILE) it warns, naming the op or the pair and its wire.",
        why="A link that trained at a lower speed (a Thunderbolt 5 cable at 40 Gb/s, a port at "
        "10 GbE) still moves exact data: only a judgement of the rate finds it.",
        action="Check the link named (cable, port speed, the path the hostfile routes "
        "through: `meshdoctor check --only MD205`), then probe again with the same options.",
        sources=(
            NCCL_TESTS,
            "Intel Thunderbolt 4 / 5 specifications (40 / 80 Gb/s per cable)",
            "IEEE 802.3ae, 802.3by, 802.3ba (10, 25, 100 Gb/s Ethernet)",
            "NVIDIA A100, H100/H200, B200 datasheets (NVLink per GPU)",
            "PCI-SIG PCI Express Base Specification 3.0-5.0",
        ),
    ),
)
JUDGEMENT = JUDGEMENT_ENTRY.code

ENTRIES: Tuple[Entry, ...] = (
    GROUP_ENTRY,
    DEAD_ENTRY,
    HANG_ENTRY,
    WRONG_ENTRY,
    BANDWIDTH_ENTRY,
    LEFTOVER_ENTRY,
    SOAK_ENTRY,
    PAIRS_ENTRY,
    START_ENTRY,
    INTERRUPTED_ENTRY,
    COVERAGE_ENTRY,
    OVERSUBSCRIBED_ENTRY,
    JUDGEMENT_ENTRY,
)
BY_CODE: Dict[str, Entry] = {e.code: e for e in ENTRIES}


def result(code: str, check: str, status: str, summary: str, **kw: Any) -> Result:
    """A :class:`meshdoctor.model.Result` of the probe code ``code`` (a key of :data:`BY_CODE`),
    titled with its entry's title; ``check``, ``status``, ``summary`` and ``kw`` as for
    ``Result``. Raises KeyError for a code that is not the probe's."""
    return Result(code, check, status, summary, title=BY_CODE[code].title, **kw)
