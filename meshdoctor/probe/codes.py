"""The probe's finding codes (MD5xx) and their catalogue entries: each code has a title
(:data:`TITLES`), a :class:`meshdoctor.codes.model.Doc` (:data:`DOCS`) and the ``check`` names of
the results that carry it; :func:`entries` gives them to :mod:`meshdoctor.catalogue`. Codes are
stable: never renumber, only add."""

from __future__ import annotations

from typing import Dict, List, Tuple

from meshdoctor.codes.model import PROBE, Doc, Entry
from meshdoctor.probe.worker import OPS

GROUP, DEAD, HANG, WRONG, BANDWIDTH, LEFTOVER = "MD501", "MD502", "MD503", "MD504", "MD505", "MD506"
SOAK, PAIRS, START, INTERRUPTED = "MD507", "MD508", "MD509", "MD510"
COVERAGE = "MD511"

TITLES = {
    GROUP: "probe group formation",
    DEAD: "probe dead rank",
    HANG: "probe hang",
    WRONG: "probe correctness",
    BANDWIDTH: "probe bandwidth",
    LEFTOVER: "probe leftovers",
    SOAK: "probe soak hang rate",
    PAIRS: "probe pair matrix",
    START: "probe rank start-up",
    INTERRUPTED: "probe interrupted",
    COVERAGE: "probe ran no collective",
}

NCCL_TESTS = "nccl-tests doc/PERFORMANCE.md (algbw, busbw, #wrong)"
MLX_DIST = "MLX mlx.distributed API (init, all_sum, all_gather, send, recv)"

DOCS: Dict[str, Doc] = {
    GROUP: Doc(
        meaning="The ranks could not form a group with the real backend (mlx.distributed.init). "
        "The evidence holds the backend's own message from the first rank that failed, "
        "matched against the failure signatures (MD6xx). Also raised before launch when "
        "a local rank's address is not assigned on this machine.",
        why="A mesh whose ranks cannot form a group runs no job at all.",
        action="Fix the hostfile or the link the message names (`meshdoctor explain` the "
        "signature code in the evidence), then probe again.",
        sources=(MLX_DIST,),
    ),
    DEAD: Doc(
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
    HANG: Doc(
        meaning="A collective made no progress within the per-step deadline (--timeout, else "
        "size / 20 MB/s + 10 s). The evidence names the step (op and iteration), which "
        "ranks waited inside it, which never arrived, which stopped heartbeating "
        "(stopped or wedged process), and the Python stacks of the waiting ranks. All "
        "ranks were torn down (SIGTERM, then SIGKILL).",
        why="Upstream backends have no deadline of their own: a job that meets this hang "
        "waits forever (MLX #3910, #4278).",
        action="Look at the ranks that never arrived or stopped heartbeating first; check their "
        "hosts (`meshdoctor check`), then probe again.",
        sources=("MLX #3910, #4278 (survivors spin with no timeout)",),
    ),
    WRONG: Doc(
        meaning="A collective returned values that differ from the exact expected result "
        "(#wrong elements, as in nccl-tests), or a rank's all_gather slice arrived with "
        "a different digest than the one it sent.",
        why="Upstream JACCL does not check completion status, so only a checksum finds silent "
        "corruption (still open upstream as of mlx 0.32.4): a job on this mesh computes "
        "wrong results without an error.",
        action="Do not run jobs on this mesh; re-seat cables, reboot the nodes named, probe again.",
        sources=(NCCL_TESTS, "MLX mlx/distributed/jaccl (completion status unchecked, mlx 0.32.4)"),
    ),
    BANDWIDTH: Doc(
        meaning="Bandwidth figures of one op in nccl-tests convention: time min/median/max over "
        "the timed iterations (slowest rank per iteration), algbw = bytes / 1e9 / "
        "seconds, busbw = algbw x 2(n-1)/n for all_sum, x (n-1)/n for all_gather, x 1 "
        "for send/recv.",
        why="busbw compares across world sizes and with the link's rate: a figure far below "
        "the link shows a slow cable, a dock or the wrong backend.",
        action="Compare busbw with the link rate; with --pairs find the slow pair, then check "
        "its link (`meshdoctor check --only MD205`).",
        sources=(NCCL_TESTS,),
    ),
    LEFTOVER: Doc(
        meaning="After teardown a process carrying this probe run's marker "
        "(MESHDOCTOR_PROBE_ID) was still there. It was sent SIGKILL.",
        why="A leftover rank holds ports, queue pairs and memory; one that survives SIGKILL "
        "(uninterruptible sleep in the driver) puts its host in needs_reboot.",
        action="Reboot the hosts listed in needs_reboot; otherwise nothing is left to do.",
        sources=("MLX #3910, #4278 (ranks stuck in native code)",),
    ),
    SOAK: Doc(
        meaning="--soak N ran each op N times with a per-call deadline, relaunching the ranks "
        "after each hang; the hang rate is reported.",
        why="Any hang fails: a ring that deadlocks a few percent of calls (reported with "
        "mlx 0.32.2 on CPU-stream all_sum at 3+ ranks) makes long jobs certain to die.",
        action="Upgrade MLX on every node and soak again; report the hang rate upstream with "
        "the evidence.",
        sources=("MLX ring backend hang reports (mlx 0.32.2, CPU-stream all_sum, 3+ ranks)",),
    ),
    PAIRS: Doc(
        meaning="--pairs measured send/recv between every ordered pair of ranks the backend "
        "connects (the ring backend only connects ring neighbours) and names the "
        "slowest pair; a pair with wrong values or a failure fails.",
        why="One slow or failing link slows or breaks every collective that crosses it.",
        action="Check the cable and ports of the pair named (`meshdoctor check --only MD205`), "
        "then probe again.",
        sources=(NCCL_TESTS, MLX_DIST),
    ),
    START: Doc(
        meaning="A rank could not be started or died before reporting ready: ssh refused or "
        "unreachable, Python or mlx missing on that host. The evidence has the rank's "
        "stderr.",
        why="The mesh was not assessed (exit 3). When the interpreter of this machine's ranks "
        "(MESHDOCTOR_PYTHON) is missing or has no MLX, it fails (exit 1), the same answer "
        "`meshdoctor check` gives (MD102).",
        action="Fix ssh (ssh -o BatchMode=yes HOST) or install MLX on the host named; point "
        "MESHDOCTOR_PYTHON at the ranks' interpreter.",
        sources=("ssh(1) BatchMode", "MLX installation documentation"),
    ),
    INTERRUPTED: Doc(
        meaning="meshdoctor was interrupted (Ctrl-C, or SIGTERM from a supervisor) before the "
        "probe finished. Every rank was still torn down and checked for leftovers.",
        why="The mesh was not assessed (exit 3).",
        action="Probe again.",
        sources=("signal(7): SIGINT, SIGTERM, SIGHUP",),
    ),
    COVERAGE: Doc(
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
}

# the ``check`` names the probe's results carry (``explain probe.leftovers``)
_NAMES: Dict[str, Tuple[str, ...]] = {
    GROUP: ("probe.group",),
    DEAD: ("probe.rank",),
    HANG: ("probe.hang",),
    LEFTOVER: ("probe.leftovers",),
    SOAK: ("probe.soak",),
    PAIRS: ("probe.pairs",),
    START: ("probe.start",),
    INTERRUPTED: ("probe.interrupted",),
    COVERAGE: ("probe.coverage",),
    WRONG: tuple(f"probe.{op}" for op in list(OPS) + ["bare_all_sum"]),
    BANDWIDTH: tuple(f"probe.{op}" for op in list(OPS) + ["bare_all_sum"]) + ("probe.gpu_clocks",),
}


def entries() -> List[Entry]:
    """The catalogue entry of every probe code (collected by :mod:`meshdoctor.catalogue`).
    Raises ValueError naming a code that has a title but no ``DOCS`` or no result name."""
    missing = [c for c in TITLES if c not in DOCS or c not in _NAMES]
    if missing:
        raise ValueError(f"probe codes without a Doc in DOCS or a name in _NAMES: {missing}")
    return [
        Entry(code=c, kind=PROBE, title=t, doc=DOCS[c], names=_NAMES[c]) for c, t in TITLES.items()
    ]
