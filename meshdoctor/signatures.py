"""The failure-signature catalogue: known error text -> code (MD6xx), meaning, what helps.

Source: ../shared/knowledge.md §3 "Failure signatures" (strings from mlx 0.30-0.32.4, the JACCL
guard PR, exo and mlx issue threads), plus the ring init messages observed here with mlx 0.32.4
(``[ring] Couldn't bind socket (error: 98)``, ``[ring] Couldn't connect (error: 111)``).

The probe classifies every rank's stderr tail through :func:`classify` (and the rank's exit status
through :func:`classify_exit`); ``meshdoctor triage`` reuses the same catalogue for log files.
Parsers run nothing: this module only reads text. Codes are stable: never renumber, only add.
Importing the module registers every code with :mod:`meshdoctor.codes` for ``meshdoctor explain``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Pattern

from . import codes as _codes


@dataclass(frozen=True)
class Signature:
    """One known failure: ``pattern`` (a compiled regex, searched line by line; None for a
    signature recognised by other means, e.g. an exit status), ``meaning`` and ``remedy`` prose,
    ``source`` naming where the fact comes from."""

    code: str
    name: str
    pattern: Optional[Pattern[str]]
    meaning: str
    remedy: str
    source: str = "knowledge.md §3"


@dataclass
class Match:
    """A signature found in a text: the signature's fields plus the ``line`` that matched
    (stripped, at most 300 characters) and the regex ``groups``."""

    code: str
    name: str
    meaning: str
    remedy: str
    line: str
    groups: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = {"code": self.code, "name": self.name, "meaning": self.meaning,
                                "remedy": self.remedy, "line": self.line}
        if self.groups:
            d["groups"] = self.groups
        return d


def _sig(code: str, name: str, regex: Optional[str], meaning: str, remedy: str,
         source: str = "knowledge.md §3") -> Signature:
    return Signature(code, name, re.compile(regex) if regex else None, meaning, remedy, source)


_RING_ERRNO = {"54": "connection reset by peer (macOS ECONNRESET)",
               "104": "connection reset by peer (Linux ECONNRESET)",
               "14": "bad buffer address (EFAULT)", "32": "broken pipe (EPIPE)"}

CATALOGUE: List[Signature] = [
    _sig("MD601", "jaccl.rtr-errno-22",
         r"\[jaccl\] Changing queue pair to RTR failed with errno 22\b",
         "The queue pair could not move to RTR: no IPv4-mapped GID on the Thunderbolt interface "
         "(no IPv4 address on it yet), or the Thunderbolt Bridge (bridge0) is active.",
         "Give every Thunderbolt port an IPv4 address (mlx.distributed_config --auto-setup once "
         "after a full-fleet reboot); disable bridge0; if it persists, reboot."),
    _sig("MD602", "jaccl.rtr-errno-60", r"RTR failed with errno 60\b",
         "RTR timed out: wrong GID index, or the peer is unreachable on that link.",
         "Check the GID table (ibv_devinfo -v) and that the cabling matches the hostfile."),
    _sig("MD603", "jaccl.resource-busy",
         r"(RTR failed with errno 16\b|queue pair failed with 'Resource busy \(16\)'|"
         r"\[jaccl\].*errno 16\b)",
         "Per-device queue-pair limit reached (10 per device on macOS) or stale RDMA resources "
         "held by leftover ranks.",
         "Use fewer peers per device; kill stale ranks (`meshdoctor check --only MD301` lists "
         "them); reboot if it persists."),
    _sig("MD604", "jaccl.no-protection-domain", r"\[jaccl\] Couldn't allocate protection domain",
         "The device could not allocate a protection domain: the port is PORT_DOWN, or stale "
         "resources after many init cycles.",
         "Check port state (ibv_devinfo); reboot the node."),
    _sig("MD605", "jaccl.register-mr-failed", r"\[jaccl\] Register memory region failed",
         "About 100 memory regions per device exceeded.",
         "Use a smaller mesh or fewer buffers."),
    _sig("MD606", "jaccl.recv-errno-2", r"\[jaccl\] Recv failed with errno=2\b",
         "The TCP side channel was closed: another rank failed first.",
         "Look at the other ranks' errors: this one is a consequence."),
    _sig("MD607", "jaccl.recv-errno-60", r"\[jaccl\] Recv failed with errno=60\b",
         "Side-channel timeout.",
         "Check that the coordinator (MLX_JACCL_COORDINATOR, rank 0's first IP) is reachable."),
    _sig("MD608", "jaccl.queue-full-12", r"\[jaccl\] (?P<dir>Send|Recv) failed with error code -12",
         "A post to a full queue (-ENOMEM), often after an undrained close in the application.",
         "Call mx.synchronize() before closing generators; restart the group."),
    _sig("MD609", "jaccl.device-not-found",
         r"(\[jaccl\] Could not find device (?P<device>\S+)|"
         r"SIGSEGV.*ibv_reg_mr|ibv_reg_mr.*SIGSEGV)",
         "The hostfile names an RDMA device that does not exist (renamed after a reboot or "
         "re-cabling, or RDMA not enumerated).",
         "Regenerate the hostfile; check ibv_devices on that node."),
    _sig("MD610", "jaccl.progress-timeout", r"\[jaccl\].*no completion for (?P<ms>\d+) ms",
         "The JACCL progress guard (guard PR) saw no completion: a peer stopped answering and "
         "the group was torn down (exit status 75 unless JACCL_TIMEOUT_ACTION=throw).",
         "Find the dead or stalled peer; re-form the group.", "knowledge.md §1, §3"),
    _sig("MD611", "jaccl.spinning-survivor", r"MeshImpl::(recv|all_reduce)",
         "A survivor is spinning in JACCL (MeshImpl::recv/all_reduce) with no error: a dead peer "
         "with upstream JACCL, which has no timeout.",
         "Kill the ranks (outer deadline, SIGKILL); wired memory may stay until reboot."),
    _sig("MD612", "tbt.post-recv-sigsegv",
         r"(libthunderboltrdma.*tbt_post_(recv|send)|tbt_post_(recv|send).*libthunderboltrdma)",
         "Apple Thunderbolt RDMA driver crash (cable unplug, or spontaneous: mlx #4192, #4319, "
         "FB24371487).",
         "Reboot the crashed node; check port state; no known prevention."),
    _sig("MD613", "ring.peer-lost",
         r"(\[ring\] Socket \d+ was closed by the peer|\[ring\] Too many send/recv errors\. "
         r"Failing pending tasks|\[ring\] connection to a peer was lost)",
         "A ring peer died or closed its sockets.",
         "Look at the other ranks: the first one to fail is the cause."),
    _sig("MD614", "ring.abort-hang", r"\[ring\] Too many send/recv errors\. Aborting",
         "A ring peer died, and with mlx <= 0.32.0 the survivors then hang forever.",
         "Upgrade mlx to >= 0.32.1; kill the surviving ranks."),
    _sig("MD615", "ring.socket-errno",
         r"\[ring\] (Receiving from|Sending to) socket \d+ failed with errno (?P<errno>\d+)",
         "A ring socket transfer failed: errno 54/104 connection reset, 14 bad buffer, "
         "32 broken pipe.",
         "Usually a peer died (see the other ranks); errno 14 points at a local memory problem."),
    _sig("MD616", "metal.gpu-timeout", r"kIOGPUCommandBufferCallbackErrorTimeout",
         "A collective inside a GPU command buffer waited more than ~5 s on a slow peer and the "
         "Metal watchdog killed it.",
         "Run collectives on stream=mx.cpu and evaluate them separately."),
    _sig("MD617", "jaccl.uncaught-abort",
         r"libc\+\+abi: terminating due to uncaught exception of type [\w:]+: \[jaccl\]",
         "A JACCL data-path error aborted the process (mlx <= 0.32.0 does not propagate it).",
         "Upgrade mlx; the inner [jaccl] message names the actual fault."),
    _sig("MD618", "rank.exit-255-silent", None,
         "A rank exited with status 255 and printed no [jaccl] line: usually a native crash "
         "over ssh.",
         "Look for a crash report (~/Library/Logs/DiagnosticReports/*.ips) on that node."),
    _sig("MD619", "fabric.wedged",
         r"(`ibv_devinfo[^`]*` did not finish within|ibv_devinfo.*(hung|timed out))",
         "The RDMA fabric or driver is wedged: ibv_devinfo hangs, ports drop to PORT_DOWN, "
         "processes sit in uninterruptible sleep.",
         "Full-fleet reboot, then one mlx.distributed_config --auto-setup, then confirm edges."),
    _sig("MD620", "ring.bind-failed", r"\[ring\] Couldn't bind socket \(error: (?P<errno>\d+)\)",
         "The ring backend could not listen on this rank's address: the IP is not assigned on "
         "this host (errno 99) or the port is in use (errno 98).",
         "Check the rank's IP in the hostfile is this host's address; free the port or pick "
         "another (meshdoctor probe --port).", "observed with mlx 0.32.4"),
    _sig("MD621", "ring.connect-failed", r"\[ring\] Couldn't connect \(error: (?P<errno>\d+)\)",
         "The ring backend could not connect to its right-hand neighbour (errno 111: nobody "
         "listening; 110/60: timed out; 113: no route).",
         "Check the neighbour rank started and its IP is reachable from this host.",
         "observed with mlx 0.32.4"),
    _sig("MD622", "jaccl.exit-75", None,
         "A rank exited with status 75: the JACCL progress guard tore the group down after a "
         "peer stopped answering.",
         "Find the dead or stalled peer; re-form the group.", "knowledge.md §1"),
    _sig("MD623", "backend.unavailable",
         r"Cannot initialize (?P<backend>[\w-]+) distributed backend",
         "This MLX build cannot start that backend: JACCL needs macOS 26.2 or later on Apple "
         "silicon with RDMA enabled and mlx 0.30.1 or later; mpi and nccl need their libraries.",
         "Run `meshdoctor check` on that host (MD102 lists the backends its MLX has), or probe "
         "with --backend ring.", "observed with mlx 0.32.4 on Linux"),
    # NCCL's own messages (its result strings, ncclGetErrorString, and NCCL_DEBUG=WARN lines),
    # seen in the stderr of MLX nccl ranks; codes from MD680 up.
    _sig("MD680", "nccl.warn", r"\bNCCL WARN (?P<msg>.+)",
         "NCCL reported a problem on this rank (a `NCCL WARN` line names the failing call).",
         "Read the message; rerun with NCCL_DEBUG=WARN on every rank to see each rank's view.",
         "NCCL documentation, NCCL_DEBUG"),
    _sig("MD681", "nccl.system-error", r"unhandled system error",
         "A system call inside NCCL failed (socket, shared memory, /dev/shm too small in a "
         "container, a limit on open files or locked memory).",
         "Rerun with NCCL_DEBUG=WARN to see the call; in containers give /dev/shm room "
         "(docker --shm-size, or --ipc=host); check ulimit -n and -l.",
         "NCCL ncclSystemError"),
    _sig("MD682", "nccl.cuda-error", r"unhandled cuda error",
         "A CUDA call inside NCCL failed (GPU out of memory, a GPU in an exclusive compute mode "
         "already used by another process, peer access refused).",
         "Run `meshdoctor check` on that host (GPU compute mode, memory held, health); rerun "
         "with NCCL_DEBUG=WARN to see the CUDA error.", "NCCL ncclUnhandledCudaError"),
    _sig("MD683", "nccl.remote-error", r"remote process exited or there was a network error",
         "A peer rank exited or the network between the ranks failed: usually the consequence "
         "of another rank's failure.",
         "Find the rank that died first (its exit status and stderr), and check the link "
         "between the hosts.", "NCCL ncclRemoteError"),
    _sig("MD684", "cuda.out-of-memory", r"CUDA error: out of memory|cudaErrorMemoryAllocation",
         "The GPU had no memory left for this rank: another process holds it, or the message "
         "is larger than the GPU can hold beside the model.",
         "Run `meshdoctor check` (MD112 names processes holding GPU memory); probe with a "
         "smaller --size.", "CUDA runtime cudaErrorMemoryAllocation"),
]

BY_CODE: Dict[str, Signature] = {s.code: s for s in CATALOGUE}


def _match(sig: Signature, line: str, m: "re.Match[str]") -> Match:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    meaning = sig.meaning
    if sig.code == "MD615" and groups.get("errno") in _RING_ERRNO:
        meaning = f"{meaning} Here: {_RING_ERRNO[groups['errno']]}."
    return Match(sig.code, sig.name, meaning, sig.remedy, line.strip()[:300], groups)


def classify(text: str) -> List[Match]:
    """Every catalogue signature found in ``text`` (one match per signature: its first matching
    line), in catalogue order. ``text`` is any log text (a rank's stderr tail, a log file)."""
    lines = text.splitlines()
    out: List[Match] = []
    for sig in CATALOGUE:
        if sig.pattern is None:
            continue
        for line in lines:
            m = sig.pattern.search(line)
            if m:
                out.append(_match(sig, line, m))
                break
    return out


def classify_exit(returncode: Optional[int], text: str = "") -> List[Match]:
    """Signatures recognised from a rank's exit status (``returncode`` as :mod:`subprocess`
    gives it; negative = killed by a signal) together with its ``text``: 255 without a
    ``[jaccl]`` line (MD618), 75 (MD622)."""
    out: List[Match] = []
    if returncode == 255 and "[jaccl]" not in text:
        s = BY_CODE["MD618"]
        out.append(Match(s.code, s.name, s.meaning, s.remedy, "exit status 255"))
    if returncode == 75:
        s = BY_CODE["MD622"]
        out.append(Match(s.code, s.name, s.meaning, s.remedy, "exit status 75"))
    return out


def codes() -> Iterable[str]:
    """Every signature code, in catalogue order."""
    return [s.code for s in CATALOGUE]


for _s in CATALOGUE:
    _codes.register(_s.code, f"signature {_s.name}",
                    f"{_s.meaning}\n\nWhat helps: {_s.remedy}\n\nSource: {_s.source}.")
