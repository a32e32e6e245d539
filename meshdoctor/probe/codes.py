"""The probe's finding codes (MD5xx), registered for ``meshdoctor explain``; importing this module
also registers the failure signatures (MD6xx, :mod:`meshdoctor.signatures`) every rank's stderr
is classified with. Codes are stable: never renumber, only add."""

from __future__ import annotations

from .. import signatures as _signatures  # noqa: F401  (registers MD6xx)
from ..codes import register, register_name
from .worker import OPS

GROUP, DEAD, HANG, WRONG, BANDWIDTH, LEFTOVER = "MD501", "MD502", "MD503", "MD504", "MD505", \
    "MD506"
SOAK, PAIRS, START, INTERRUPTED = "MD507", "MD508", "MD509", "MD510"

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
}

_EXPLAIN = {
    GROUP: "The ranks could not form a group with the real backend (mlx.distributed.init). The "
           "evidence holds the backend's own message from the first rank that failed, matched "
           "against the failure signatures (MD6xx). Also raised before launch when a local "
           "rank's address is not assigned on this machine. Fix the hostfile or the link the "
           "message names, then probe again.",
    DEAD: "A rank exited before the probe finished: its exit status or signal, the step it was "
          "in, and its stderr tail are in the evidence. The other ranks usually fail right "
          "after it ('[ring] connection to a peer was lost'); the first rank to die is the "
          "cause. mlx.launch would have exited 0 here (mlx 0.32.4 launch.py exits 0 when a rank fails).",
    HANG: "A collective made no progress within the per-step deadline (--timeout, else size / "
          "20 MB/s + 10 s). The evidence names the step (op and iteration), which ranks waited "
          "inside it, which never arrived, which stopped heartbeating (stopped or wedged "
          "process), and the Python stacks of the waiting ranks. All ranks were torn down "
          "(SIGTERM, then SIGKILL).",
    WRONG: "A collective returned values that differ from the exact expected result (#wrong "
           "elements, as in nccl-tests), or a rank's all_gather slice arrived with a different "
           "digest than the one it sent. Upstream JACCL does not check completion status, so "
           "only a checksum finds silent corruption (still open upstream as of mlx 0.32.4). Do not run jobs on this "
           "mesh; re-seat cables, reboot the nodes named, probe again.",
    BANDWIDTH: "Bandwidth figures of one op in nccl-tests convention: time min/median/max over "
               "the timed iterations (slowest rank per iteration), algbw = bytes / 1e9 / "
               "seconds, busbw = algbw x 2(n-1)/n for all_sum, x (n-1)/n for all_gather, x 1 "
               "for send/recv (nccl-tests doc/PERFORMANCE.md).",
    LEFTOVER: "After teardown a process carrying this probe run's marker (MESHDOCTOR_PROBE_ID) "
              "was still there. It was sent SIGKILL; one that survives SIGKILL (uninterruptible "
              "sleep in the driver) puts its host in needs_reboot.",
    SOAK: "--soak N ran each op N times with a per-call deadline, relaunching the ranks after "
          "each hang. Any hang fails: a ring that deadlocks a few percent of calls (reported "
          "with mlx 0.32.2 on CPU-stream all_sum at 3+ ranks) makes long jobs certain to die.",
    PAIRS: "--pairs measured send/recv between every ordered pair of ranks the backend connects "
           "(the ring backend only connects ring neighbours) and names the slowest pair; a pair "
           "with wrong values or a failure fails.",
    START: "A rank could not be started or died before reporting ready: ssh refused or "
           "unreachable, Python or mlx missing on that host. The mesh was not assessed (exit "
           "3). The evidence has the rank's stderr. When the interpreter of this machine's "
           "ranks (MESHDOCTOR_PYTHON) is missing or has no MLX, it fails (exit 1), the same "
           "answer `meshdoctor check` gives (MD102).",
    INTERRUPTED: "meshdoctor was interrupted (Ctrl-C, or SIGTERM from a supervisor) before the "
                 "probe finished. Every rank was still torn down and checked for leftovers; "
                 "the mesh was not assessed (exit 3). Probe again.",
}

for _code, _title in TITLES.items():
    register(_code, _title, _EXPLAIN[_code])

# the ``check`` names the probe's results carry (``explain probe.leftovers``)
for _name, _codes in {"probe.group": (GROUP,), "probe.rank": (DEAD,), "probe.hang": (HANG,),
                      "probe.leftovers": (LEFTOVER,), "probe.soak": (SOAK,),
                      "probe.pairs": (PAIRS,), "probe.start": (START,),
                      "probe.interrupted": (INTERRUPTED,)}.items():
    register_name(_name, *_codes)
for _op in list(OPS) + ["bare_all_sum"]:
    register_name(f"probe.{_op}", WRONG, BANDWIDTH)
