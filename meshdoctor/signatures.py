"""The failure-signature catalogue: known error text -> code (MD6xx), meaning, causes, what helps.

Strings are matched on their stable part, numbers and names as placeholders, in the wording of
each MLX version that printed them (MLX v0.30.1-v0.32.4 ``mlx/distributed/{jaccl,ring,nccl}``,
``mlx/_distributed_utils/launch.py``; the Thunderbolt RDMA crash of mlx #4192/#4319; the JACCL
progress guard of the community guard PR; NCCL's and CUDA's own error texts).

Each :class:`Signature` says which *role* it plays when several ranks fail together: a ``cause``
(something went wrong here), ``either`` (a cause when alone, often the echo of another rank's
failure, e.g. RTR errno 22 on survivors), or a ``consequence`` (another rank failed first, e.g.
``[jaccl] Recv failed with errno=2``). ``causes`` lists every known cause, most common first, each
with the evidence that tells it apart.

A record may span lines: a native crash prints the signal on one line and the faulting frame
(``ibv_reg_mr``, ``tbt_post_recv``) lines later; a Python traceback ends with its exception line.
:class:`Scanner` matches records in bounded memory (a window of :data:`RECORD_WINDOW` lines, at most
:data:`CONTEXT_LINES` lines of context per match). :func:`classify` runs it over a text;
``meshdoctor triage`` feeds it lines from files of any size. Parsers run nothing: this module only
reads text. Codes are stable: never renumber, only add. :func:`entries` gives the catalogue
(:mod:`meshdoctor.catalogue`) every signature's entry for ``meshdoctor explain``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Pattern, Sequence, Tuple

from meshdoctor.codes.model import SIGNATURE, Doc, Entry
from meshdoctor.mlx.ports import STARTING_PORT
from meshdoctor.text import printable as text_printable


CAUSE, EITHER, CONSEQUENCE = "cause", "either", "consequence"
ROLES = (CAUSE, EITHER, CONSEQUENCE)

LINE_CHARS = 300  # a matched line is kept stripped and cut to this many characters
CONTEXT_LINES = 8  # at most this many lines of context per match
RECORD_WINDOW = 64  # a crash signal waits this many lines for its faulting frame
TRACEBACK_LINES = 400  # a Python traceback longer than this is closed where it stands

# Literal strings at least one of which is in every line a line signature can match; a reader
# that scans gigabytes looks for these first (bytes.find) and runs the regexes only on the lines
# that hold one. tests/test_signatures.py checks every example line contains one.
ANCHORS: Tuple[str, ...] = (
    "jaccl",
    "[ring]",
    "rror",
    "ailed",
    "SIG",
    "Traceback",
    "Node with rank",
    "Segmentation",
    "NCCL",
    "rdma",
    "ibv_",
    "environment variable",
    "exited with code",
    "was killed",
)


@dataclass(frozen=True)
class Cause:
    """One known cause of a signature and the ``evidence`` that tells it from the others."""

    what: str
    evidence: str

    def to_dict(self) -> Dict[str, str]:
        return {"cause": self.what, "evidence": self.evidence}


@dataclass(frozen=True)
class Signature:
    """One known failure: ``pattern`` (a compiled regex, searched line by line; None for a
    signature recognised by other means: an exit status, a multi-line record), ``meaning`` and
    ``remedy`` prose, ``source`` naming the public source of the fact, ``causes`` (most common
    first), ``role`` (:data:`CAUSE`, :data:`EITHER` or :data:`CONSEQUENCE`), ``check`` (a
    meshdoctor check code that looks at the likely cause, or None), ``fixed_in`` (the MLX
    version whose upgrade removes or clarifies the failure, or None)."""

    code: str
    name: str
    pattern: Optional[Pattern[str]]
    meaning: str
    remedy: str
    source: str = ""
    causes: Tuple[Cause, ...] = ()
    role: str = CAUSE
    check: Optional[str] = None
    fixed_in: Optional[str] = None


@dataclass
class Match:
    """A signature found in a text: the signature's fields plus the ``line`` that matched
    (stripped, at most :data:`LINE_CHARS` characters), the regex ``groups``, the 1-based
    ``lineno`` where the record starts and up to :data:`CONTEXT_LINES` ``context`` lines (the
    other lines of a multi-line record)."""

    code: str
    name: str
    meaning: str
    remedy: str
    line: str
    groups: Dict[str, str] = field(default_factory=dict)
    lineno: int = 0
    context: List[str] = field(default_factory=list)

    @property
    def signature(self) -> Signature:
        return BY_CODE[self.code]

    def to_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = {
            "code": self.code,
            "name": self.name,
            "meaning": self.meaning,
            "remedy": self.remedy,
            "line": self.line,
        }
        if self.groups:
            d["groups"] = self.groups
        return d


def _c(*pairs: Tuple[str, str]) -> Tuple[Cause, ...]:
    return tuple(Cause(w, e) for w, e in pairs)


def _sig(
    code: str,
    name: str,
    regex: Optional[str],
    meaning: str,
    remedy: str,
    source: str = "",
    *,
    causes: Sequence[Tuple[str, str]] = (),
    role: str = CAUSE,
    check: Optional[str] = None,
    fixed_in: Optional[str] = None,
) -> Signature:
    assert role in ROLES
    return Signature(
        code,
        name,
        re.compile(regex) if regex else None,
        meaning,
        remedy,
        source,
        _c(*causes),
        role,
        check,
        fixed_in,
    )


_RING_ERRNO = {
    "54": "connection reset by peer (macOS ECONNRESET)",
    "104": "connection reset by peer (Linux ECONNRESET)",
    "14": "bad buffer address (EFAULT)",
    "32": "broken pipe (EPIPE)",
}
_CONNECT_ERRNO = {
    "60": "timed out (macOS ETIMEDOUT)",
    "110": "timed out (Linux ETIMEDOUT)",
    "61": "refused: nobody listening (macOS ECONNREFUSED)",
    "111": "refused: nobody listening (Linux ECONNREFUSED)",
    "65": "no route to host (macOS EHOSTUNREACH)",
    "113": "no route to host (Linux EHOSTUNREACH)",
}
_NCCL_MSG = {
    "unhandled system error": "a system call failed inside NCCL (socket, shared memory, "
    "/dev/shm too small in a container, or a peer's network went away)",
    "unhandled cuda error": "a CUDA call failed inside NCCL (GPU fault, out of memory, or a "
    "driver/runtime mismatch)",
    "remote process exited or there was a network error": "a peer rank died or the network "
    "between them failed: look at the "
    "other ranks first",
}

CATALOGUE: List[Signature] = [
    _sig(
        "MD601",
        "jaccl.rtr-errno-22",
        r"(\[jaccl\] Changing queue pair to RTR failed with errno 22\b|"
        r"No IPv4-mapped GID for this device)",
        "The queue pair could not move to RTR because the port has no usable IPv4-mapped GID "
        "(MLX <= 0.32.0 prints RTR errno 22; 0.32.1+ says 'No IPv4-mapped GID for this "
        "device').",
        "Give every Thunderbolt port an IPv4 address (mlx.distributed_config --auto-setup once "
        "after a full-fleet reboot); disable bridge0; if it persists, reboot.",
        "MLX v0.31.2-v0.32.1 jaccl GID selection; mlx #4530",
        causes=[
            (
                "no IPv4 address on the Thunderbolt interface yet (auto-setup not run since "
                "the last reboot, or DHCP still pending)",
                "`ibv_devinfo -v` shows only fe80:: GIDs; `meshdoctor check --only MD203`",
            ),
            (
                "the IPv4-mapped GID sits at another index than 1 (seen at index 2), which "
                "upstream MLX never uses as source",
                "GID[2] holds ::ffff:a.b.c.d while GID[1] does not",
            ),
            (
                "Thunderbolt Bridge (bridge0) active and holding the interfaces",
                "`ifconfig bridge0` shows status: active",
            ),
            (
                "echo of another rank that failed first in the same second",
                "another rank has a different error at the same time",
            ),
        ],
        role=EITHER,
        check="MD203",
    ),
    _sig(
        "MD602",
        "jaccl.rtr-errno-60",
        r"RTR failed with errno 60\b",
        "RTR timed out: wrong GID index, or the peer is unreachable on that link.",
        "Check the GID table (ibv_devinfo -v) and that the cabling matches the hostfile.",
        "MLX jaccl rdma.cpp",
        causes=[
            (
                "the cable in the hostfile's cell goes to another Mac than the one named",
                "MD205 cabling check disagrees with the hostfile",
            ),
            ("wrong GID index on one end", "the GID tables of the two ends differ in layout"),
            ("the peer is down on that link", "its port reads PORT_DOWN"),
        ],
        role=EITHER,
        check="MD205",
    ),
    _sig(
        "MD603",
        "jaccl.resource-busy",
        r"(RTR failed with errno 16\b|queue pair failed with 'Resource busy \(16\)'|"
        r"\[jaccl\].*errno 16\b)",
        "Per-device queue-pair limit reached (10 per device on macOS) or stale RDMA resources "
        "held by leftover ranks.",
        "Use fewer peers per device; kill stale ranks (`meshdoctor check --only MD301` lists "
        "them); reboot if it persists.",
        "MLX PR #4209 (10 queue pairs per device)",
        causes=[
            (
                "leftover ranks of an earlier run still hold queue pairs",
                "`meshdoctor check --only MD301` lists them",
            ),
            (
                "more than 10 queue pairs on one device (jaccl-ring with N = 2 opens each "
                "device twice; several processes per Mac)",
                "MD204 counts them",
            ),
            ("stale driver state after many init cycles", "persists with no rank alive: reboot"),
        ],
        check="MD301",
    ),
    _sig(
        "MD604",
        "jaccl.no-protection-domain",
        r"\[jaccl\] Couldn't allocate protection domain",
        "The device could not allocate a protection domain.",
        "Check port state (ibv_devinfo); on TB4 hardware use the ring backend; else replug the "
        "cable or reboot the node.",
        "mlx #4530; exo PR #1467",
        causes=[
            (
                "the port is PORT_DOWN (peer Mac off, RDMA not enabled there, cable out)",
                "`ibv_devinfo` shows state PORT_DOWN (1)",
            ),
            (
                "Thunderbolt 4 hardware: rdma_enX devices listed but never usable",
                "ports top out at 40 Gb/s, no TB5 receptacle (MD201)",
            ),
            (
                "boot-time driver bug",
                "port PORT_ACTIVE yet it fails; replugging the cable fixes it (exo PR #1467)",
            ),
            ("stale resources after many init cycles", "fixed by a reboot"),
        ],
        check="MD202",
    ),
    _sig(
        "MD605",
        "jaccl.register-mr-failed",
        r"\[jaccl\] Register memory region failed",
        "About 100 memory regions per device exceeded.",
        "Use a smaller mesh or fewer buffers.",
        "mlx #3162",
        causes=[
            (
                "the mesh registers more memory regions per device than the ~100 the driver "
                "allows (MLX 0.31.x with N = 2 uses 96)",
                "MD204 counts them",
            ),
            ("several processes share a device", "more than one rank per Mac"),
        ],
        check="MD204",
    ),
    _sig(
        "MD606",
        "jaccl.recv-errno-2",
        r"\[jaccl\] Recv failed with errno=2\b",
        "The TCP side channel was closed: another rank failed first (the errno is stale).",
        "Look at the other ranks' errors: this one is a consequence.",
        "mlx #4530",
        causes=[
            ("another rank died during init", "its log has the first error"),
            ("the coordinator (rank 0) exited", "rank 0's log or exit status"),
        ],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD607",
        "jaccl.recv-errno-60",
        r"\[jaccl\] Recv failed with errno=60\b",
        "Side-channel timeout.",
        "Check that the coordinator (MLX_JACCL_COORDINATOR, rank 0's first IP) is reachable.",
        "MLX jaccl side channel",
        causes=[
            ("the coordinator is unreachable from this rank", "ping rank 0's first IP"),
            ("another rank never arrived", "a rank with no log line at all"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD608",
        "jaccl.queue-full-12",
        r"\[jaccl\] (?P<dir>Send|Recv) failed with error code -12",
        "A post to a full queue (-ENOMEM), often after an undrained close in the application.",
        "Call mx.synchronize() before closing generators; restart the group.",
        "mlx #4278",
        causes=[
            (
                "the application closed a generator without draining",
                "happens at close/restart of a request",
            ),
            ("a peer stopped completing", "the peer's log"),
        ],
    ),
    _sig(
        "MD609",
        "jaccl.device-not-found",
        r"(\[jaccl\] Could not find device (?P<device>\S+)|"
        r"SIGSEGV.*ibv_reg_mr|ibv_reg_mr.*SIGSEGV)",
        "The hostfile names an RDMA device that does not exist (MLX 0.32.1+ says 'Could not "
        "find device'; before, a SIGSEGV in ibv_reg_mr at init).",
        "Regenerate the hostfile; check ibv_devices on that node.",
        "mlx #3777, #4180",
        causes=[
            (
                "device renamed after a reboot or re-cabling",
                "`ibv_devices` lists other rdma_enX names than the hostfile",
            ),
            ("RDMA not enumerated on that Mac", "`ibv_devices` prints the header only"),
        ],
        check="MD202",
        fixed_in="0.32.1",
    ),
    _sig(
        "MD610",
        "jaccl.progress-timeout",
        r"\[jaccl\].*no completion for (?P<ms>\d+) ms",
        "The JACCL progress guard saw no completion: a peer stopped answering and the group was "
        "torn down (exit status 75 unless JACCL_TIMEOUT_ACTION=throw).",
        "Find the dead or stalled peer; re-form the group.",
        "JACCL progress guard PR",
        causes=[
            ("a peer died (crash, kill, OOM)", "that peer's log or crash report"),
            ("a link dropped", "PORT_DOWN on one end"),
        ],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD611",
        "jaccl.spinning-survivor",
        r"MeshImpl::(recv|all_reduce)",
        "A survivor is spinning in JACCL (MeshImpl::recv/all_reduce) with no error: a dead peer "
        "with upstream JACCL, which has no timeout.",
        "Kill the ranks (outer deadline, SIGKILL); wired memory may stay until reboot.",
        "mlx #3910, #4278",
        causes=[("a peer died after init", "its crash report or exit")],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD612",
        "tbt.post-recv-sigsegv",
        r"(libthunderboltrdma.*tbt_post_(recv|send)|tbt_post_(recv|send).*libthunderboltrdma)",
        "Apple Thunderbolt RDMA driver crash in tbt_post_recv/tbt_post_send.",
        "Reboot the crashed node; check port state; no known prevention.",
        "mlx #4192, #4319; Apple FB24371487",
        causes=[
            ("a Thunderbolt cable was unplugged mid-collective", "both ends die; mlx #4192"),
            ("a link dropped on its own after hours", "port PORT_DOWN until reboot; mlx #4319"),
        ],
    ),
    _sig(
        "MD613",
        "ring.peer-lost",
        r"(\[ring\] Socket \d+ was closed by the peer|\[ring\] Too many send/recv errors\. "
        r"Failing pending tasks|\[ring\] connection to a peer was lost)",
        "A ring peer died or closed its sockets.",
        "Look at the other ranks: the first one to fail is the cause.",
        "mlx #4060 (0.32.1)",
        causes=[
            ("a peer rank died", "its log or exit status"),
            ("a link between two hosts went down", "no rank has an error of its own"),
        ],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD614",
        "ring.abort-hang",
        r"\[ring\] Too many send/recv errors\. Aborting",
        "A ring peer died, and with MLX <= 0.32.0 the survivors then hang forever.",
        "Upgrade mlx to >= 0.32.1; kill the surviving ranks.",
        "mlx #4060",
        causes=[("a peer rank died", "its log")],
        role=CONSEQUENCE,
        fixed_in="0.32.1",
    ),
    _sig(
        "MD615",
        "ring.socket-errno",
        r"\[ring\] (Receiving from|Sending to) socket \d+ failed with errno (?P<errno>\d+)",
        "A ring socket transfer failed: errno 54/104 connection reset, 14 bad buffer, "
        "32 broken pipe.",
        "Usually a peer died (see the other ranks); errno 14 points at a local memory problem.",
        "MLX ring backend",
        causes=[
            ("a peer died (54/104/32)", "the peer's log"),
            ("bad local buffer (14)", "errno 14 on this rank only"),
        ],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD616",
        "metal.gpu-timeout",
        r"kIOGPUCommandBufferCallbackErrorTimeout",
        "A collective inside a GPU command buffer waited more than ~5 s on a slow peer and the "
        "Metal watchdog killed it.",
        "Run collectives on stream=mx.cpu and evaluate them separately.",
        "Apple Metal",
        causes=[("a slow or dead peer during a GPU-stream collective", "the peer's log")],
    ),
    _sig(
        "MD617",
        "jaccl.uncaught-abort",
        r"libc\+\+abi: terminating due to uncaught exception of type [\w:]+: \[jaccl\]",
        "A JACCL data-path error aborted the process (MLX <= 0.32.0 does not propagate it).",
        "Upgrade mlx; the inner [jaccl] message names the actual fault.",
        "MLX 0.32.1",
        fixed_in="0.32.1",
    ),
    _sig(
        "MD618",
        "rank.exit-255-silent",
        None,
        "A rank exited with status 255 and printed no [jaccl] line: usually a native crash "
        "over ssh.",
        "Look for a crash report (~/Library/Logs/DiagnosticReports/*.ips) on that node "
        "(`meshdoctor triage --crash-reports`).",
        "ssh(1) exit status",
        causes=[
            (
                "a native crash of a remote rank (SIGSEGV in the Thunderbolt RDMA driver)",
                "a .ips crash report on that host",
            ),
            ("ssh itself failed (host down, auth)", "ssh's own message on stderr"),
            ("the rank called exit(255) / os._exit(-1)", "a Python error before it"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD619",
        "fabric.wedged",
        r"(`ibv_devinfo[^`]*` did not finish within|ibv_devinfo.*(hung|timed out))",
        "The RDMA fabric or driver is wedged: ibv_devinfo hangs, ports drop to PORT_DOWN, "
        "processes sit in uninterruptible sleep.",
        "Full-fleet reboot, then one mlx.distributed_config --auto-setup, then confirm edges.",
        "mlx #4530",
        causes=[
            (
                "the Thunderbolt RDMA driver is wedged after JACCL errors or a link drop",
                "ports PORT_DOWN, processes in U state; only a reboot clears it",
            ),
            ("a rank still holds the device in the kernel", "MD301 lists it"),
        ],
    ),
    _sig(
        "MD620",
        "ring.bind-failed",
        r"\[ring\] Couldn't bind socket \(error: (?P<errno>\d+)\)",
        "The ring backend could not listen on this rank's address: the IP is not assigned on "
        "this host (errno 99/49) or the port is in use (errno 98/48).",
        "Check the rank's IP in the hostfile is this host's address; free the port or pick "
        "another (meshdoctor probe --port).",
        "MLX ring backend (observed with 0.32.4)",
        causes=[
            ("port in use (98/48): a leftover rank", "`meshdoctor check --only MD301`"),
            ("address not on this host (99/49)", "hostfile IP vs `ip addr`/`ifconfig`"),
        ],
    ),
    _sig(
        "MD621",
        "ring.connect-failed",
        r"\[ring\] Couldn't connect \(error: (?P<errno>\d+)\)",
        "The ring backend could not connect to its right-hand neighbour after 5 attempts "
        "(about 31 s; 15 s before 0.30.1).",
        "Check the neighbour rank started and its IP is reachable from this host.",
        "MLX ring backend (observed with 0.32.4)",
        causes=[
            ("the neighbour never started or died first (111/61 refused)", "the neighbour's log"),
            ("unreachable address (110/60 timeout, 113/65 no route)", "ping the IP"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD622",
        "jaccl.exit-75",
        None,
        "A rank exited with status 75: the JACCL progress guard tore the group down after a "
        "peer stopped answering.",
        "Find the dead or stalled peer; re-form the group.",
        "JACCL progress guard PR",
        causes=[("a peer died or stalled", "the peer's log or crash report")],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD623",
        "backend.unavailable",
        r"Cannot initialize (?P<backend>[\w-]+) distributed backend",
        "This MLX build cannot start that backend: JACCL needs macOS 26.2 or later on Apple "
        "silicon with RDMA enabled and mlx 0.30.1 or later; mpi and nccl need their libraries.",
        "Run `meshdoctor check` on that host (MD102 lists the backends its MLX has), or probe "
        "with --backend ring.",
        "MLX distributed init (observed with 0.32.4)",
        causes=[
            ("backend not compiled into this MLX build (mlx[cpu] has no nccl)", "MD102"),
            ("librdma cannot load (macOS < 26.2, RDMA disabled)", "MD201"),
        ],
        check="MD102",
    ),
    # ---- added: every message of MLX v0.30.1-v0.32.x distributed backends and mlx.launch ----
    _sig(
        "MD630",
        "jaccl.env-missing",
        r"You need to provide via environment variables a rank \((JACCL_RANK/)?MLX_RANK\)",
        "JACCL found no rank, device file or coordinator in the environment.",
        "Start ranks with mlx.launch (or set MLX_RANK, MLX_IBV_DEVICES, MLX_JACCL_COORDINATOR).",
        "MLX jaccl init (<= 0.31.1; JACCL_* names 0.31.2+)",
        causes=[
            ("the script ran outside mlx.launch", "no MLX_RANK in its environment"),
            (
                "librdma could not load (MLX <= 0.31.1 prints this text then too)",
                "`meshdoctor check --only MD201`",
            ),
        ],
        check="MD103",
    ),
    _sig(
        "MD631",
        "jaccl.bad-device-file",
        r"\[jaccl\].*(Malformed device file|The device file should|Device names should be null|"
        r"should define a valid mesh or a valid ring|The full connectivity matrix should be "
        r"provided|Invalid rank)",
        "The JACCL device file (MLX_IBV_DEVICES, the hostfile's rdma matrix) is not a valid "
        "N x N mesh or ring for this world size and rank.",
        "Regenerate the hostfile with mlx.distributed_config; `meshdoctor check --hostfile` "
        "validates it.",
        "MLX jaccl init v0.30.1-v0.32.x",
        causes=[
            (
                "rdma matrix not N x N or missing off-diagonal entries (0.31.2+ needs the full "
                "matrix)",
                "MD401",
            ),
            ("rank outside the matrix", "MLX_RANK >= N"),
        ],
        check="MD401",
    ),
    _sig(
        "MD632",
        "jaccl.too-many-peers",
        r"\[jaccl\].*(maximum number of supported peers is 8|mesh supports up to 8 peers|"
        r"Up to 4 per direction supported)",
        "The JACCL mesh supports at most 8 ranks and jaccl-ring at most 4 devices per direction.",
        "Use at most 8 ranks for a mesh, or jaccl-ring / ring.",
        "MLX jaccl MESH_MAX_PEERS, RING_MAX_CONNS",
        check="MD401",
    ),
    _sig(
        "MD633",
        "jaccl.open-device-failed",
        r"\[jaccl\] Could not open device (?P<device>\S+)",
        "ibv_open_device failed for a device in the hostfile.",
        "Check `ibv_devinfo -d DEVICE`; reboot the node if the device is listed but cannot be "
        "opened.",
        "MLX jaccl rdma.cpp",
        causes=[("device gone or renamed", "`ibv_devices`"), ("driver wedged", "MD619")],
        check="MD202",
    ),
    _sig(
        "MD634",
        "jaccl.no-completion-queue",
        r"\[jaccl\] Couldn't create completion queue",
        "The device could not create a completion queue.",
        "Kill leftover ranks; reboot if it persists.",
        "MLX jaccl rdma.cpp",
        causes=[
            ("stale resources held by leftover ranks", "MD301"),
            ("driver state after many init cycles", "reboot"),
        ],
        check="MD301",
    ),
    _sig(
        "MD635",
        "jaccl.create-qp-failed",
        r"\[jaccl\] (Couldn't create queue pair|Creating the queue pair failed with "
        r"'(?P<text>[^']*)\((?!16\))(?P<errno>\d+)\)')",
        'ibv_create_qp failed (MLX <= 0.32.0: "Couldn\'t create queue pair"; 0.32.1+ names the '
        "errno; errno 16 is MD603).",
        "Kill leftover ranks; check the queue pairs per device (MD204).",
        "MLX 0.32.1 jaccl; PR #4530 (errno 102: RC unsupported)",
        causes=[
            ("queue-pair limit reached (errno 16 on 0.32.1+ is MD603)", "MD204"),
            ("reliable-connected queue pair requested (errno 102)", "a patched build"),
        ],
        check="MD204",
        fixed_in="0.32.1",
    ),
    _sig(
        "MD636",
        "jaccl.qp-state-failed",
        r"\[jaccl\] Changing queue pair to (?P<state>INIT|RTR|RTS) failed with errno "
        r"(?P<errno>\d+)\b(?<!RTR failed with errno 22)(?<!RTR failed with errno 60)"
        r"(?<!RTR failed with errno 16)",
        "A queue-pair state change failed (RTR errno 22, 60 and 16 have their own codes).",
        "Check port state and GIDs (`meshdoctor check`); replug or reboot if ports were idle.",
        "MLX jaccl rdma.cpp; exo #1973 (RTR errno 96 after idle ports)",
        causes=[
            ("RTR errno 96 after ports sat idle", "exo #1973: replug or reboot"),
            ("INIT/RTS failure: driver state", "reboot"),
        ],
        check="MD202",
    ),
    _sig(
        "MD637",
        "jaccl.side-channel-connect",
        r"\[jaccl\] Couldn't connect \(error: (?P<errno>\d+)\)",
        "JACCL's TCP side channel could not reach the coordinator (4 attempts, about 15 s).",
        f"Check MLX_JACCL_COORDINATOR (rank 0's first IP and port {STARTING_PORT}) is reachable "
        "from this rank and rank 0 started.",
        "MLX jaccl side channel",
        causes=[
            ("rank 0 not started or died first (refused)", "rank 0's log"),
            (
                "coordinator IP unreachable (timeout 60/110, no route 65/113)",
                "ping rank 0's first IP from this host",
            ),
        ],
        role=EITHER,
    ),
    _sig(
        "MD638",
        "jaccl.side-channel-socket",
        r"\[jaccl\] (Couldn't bind socket|Couldn't listen|Accept failed|Couldn't create "
        r"socket)",
        "JACCL's coordinator could not open its TCP side channel.",
        "Free the coordinator port (leftover rank) or choose another; check rank 0's IP is "
        "its own.",
        "MLX jaccl side channel",
        causes=[
            ("port in use by a leftover rank", "MD301"),
            ("coordinator IP not on rank 0's host", "hostfile vs ifconfig"),
        ],
        check="MD301",
    ),
    _sig(
        "MD639",
        "jaccl.side-channel-errno",
        r"\[jaccl\] (?P<dir>Recv|Send) failed with errno=(?P<errno>\d+)\b"
        r"(?<!Recv failed with errno=2)(?<!Recv failed with errno=60)",
        "A JACCL side-channel transfer failed; the errno is often stale when the peer closed.",
        "Look at the other ranks first.",
        "mlx #4530",
        causes=[("another rank failed first", "its log")],
        role=CONSEQUENCE,
    ),
    _sig(
        "MD640",
        "backend.sum-scatter-unsupported",
        r"sum_scatter not supported",
        "This backend has no sum_scatter (ring, mpi; JACCL before 0.32.1).",
        "Upgrade MLX (JACCL 0.32.1+), use nccl, or all_sum then slice.",
        "MLX v0.32.1 jaccl sum_scatter",
        fixed_in="0.32.1",
    ),
    _sig(
        "MD641",
        "jaccl.librdma-symbol",
        r"(librdma.*(Symbol not found|symbol not found|Library not loaded|image not found)|"
        r"(Symbol not found|Library not loaded).*librdma)",
        "librdma.dylib is missing or lacks a symbol MLX needs: the OS is too old for this MLX.",
        "Update macOS to 26.2 or later (26.3 for large buffers).",
        "MLX jaccl dlopen",
        check="MD201",
    ),
    _sig(
        "MD642",
        "ring.env-missing",
        r"You need to provide via environment variables both a rank \(MLX_RANK\) and a "
        r"hostfile",
        "The ring backend found no MLX_RANK or MLX_HOSTFILE.",
        "Start ranks with mlx.launch (or set MLX_RANK and MLX_HOSTFILE).",
        "MLX ring init",
        check="MD103",
    ),
    _sig(
        "MD643",
        "ring.bad-hostfile",
        r"\[ring\].*(Rank cannot be larger than the size of the group|Rank \d+ has no sockets "
        r"to the (right|left)|as many connections to the left as to the right|only supported "
        r"(with|between|for) .*neighbo)",
        "The ring hostfile does not fit this rank (rank beyond the group, no address for a "
        "neighbour, unequal connections) or send/recv went to a non-neighbour.",
        "Regenerate the hostfile; in the ring backend send/recv only between neighbours.",
        "MLX ring init",
        check="MD401",
        causes=[
            ("hostfile lists fewer entries than ranks launched", "MLX_RANK >= entries"),
            ("a rank's entry has no address for a neighbour", "empty or missing ips"),
            (
                "the program calls send/recv between non-neighbours",
                "ring only connects rank r to r-1 and r+1",
            ),
        ],
    ),
    _sig(
        "MD644",
        "ring.empty-hostfile",
        r"parse_error\.101.*unexpected end of input",
        "MLX_HOSTFILE is empty: mlx.launch started a single host for the ring backend.",
        "Give mlx.launch two or more hosts, or run without a backend.",
        "mlx.launch",
    ),
    _sig(
        "MD645",
        "ring.no-progress",
        r"\[ring\] Sending to socket \d+ made no progress",
        "A ring send made no progress (MLX 0.32.1+): the peer stopped reading.",
        "Look at the peer rank.",
        "MLX 0.32.1 ring",
        role=CONSEQUENCE,
        causes=[
            ("the peer stopped reading (died, stopped, or blocked)", "the peer's log"),
            ("the link is down", "no error on the peer"),
        ],
    ),
    _sig(
        "MD646",
        "jaccl.peer-gone",
        r"\[jaccl\] peer is gone",
        "The side-channel liveness check saw a peer disappear (patched JACCL).",
        "Look at the peer rank: it failed first.",
        "mlx PR #4530",
        role=CONSEQUENCE,
    ),
    _sig(
        "MD647",
        "nccl.env-missing",
        r"Required environment variable '(?P<var>[^']+)' is not set",
        "The NCCL backend needs MLX_RANK, MLX_WORLD_SIZE, NCCL_HOST_IP and NCCL_PORT.",
        "Start ranks with mlx.launch --backend nccl, or export the variable named.",
        "MLX nccl init",
        check="MD103",
        causes=[
            ("ranks started outside mlx.launch", "no MLX_WORLD_SIZE in the environment"),
            ("a wrapper dropped the environment over ssh", "variables set locally only"),
        ],
    ),
    _sig(
        "MD648",
        "nccl.bootstrap-connect",
        r"connect\(\) failed after (?P<ms>\d+) milliseconds and (?P<tries>\d+) retries",
        "The NCCL bootstrap could not reach rank 0's NCCL_HOST_IP:NCCL_PORT within "
        "MLX_NCCL_TIMEOUT (default 300000 ms).",
        "Check rank 0 started and NCCL_HOST_IP/NCCL_PORT are reachable.",
        "MLX 0.29.3 nccl bootstrap",
        causes=[
            ("rank 0 not started or died first", "rank 0's log"),
            ("NCCL_HOST_IP unreachable or firewalled", "nc -z HOST PORT"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD649",
        "nccl.bootstrap-socket",
        r"((bind|listen|accept)\(\) failed|lookup failed for host: (?P<host>\S+))",
        "Rank 0 could not open the NCCL bootstrap socket, or a host name did not resolve.",
        "Free NCCL_PORT (leftover rank) or pick another (--nccl-port); fix the host name.",
        "MLX nccl bootstrap",
        check="MD301",
        causes=[
            ("NCCL_PORT held by a leftover rank", "MD301"),
            ("a host name that does not resolve on this node", "getent hosts NAME"),
        ],
    ),
    _sig(
        "MD653",
        "nccl.warn",
        r"NCCL WARN (?P<msg>.*)",
        "NCCL printed a warning (NCCL_DEBUG=WARN or INFO): usually the detailed reason of the "
        "NCCL error that follows.",
        "Read it with the NCCL error it explains.",
        "NCCL NCCL_DEBUG",
        role=EITHER,
    ),
    _sig(
        "MD650",
        "nccl.error",
        r"NCCL error (?P<file>[^\s:]+):(?P<line>\d+) '(?P<msg>[^']*)'",
        "An NCCL call failed; MLX printed it and exited with status 1 (no Python exception).",
        "See the message: 'remote process exited' means another rank failed first.",
        "MLX nccl backend; NCCL ncclGetErrorString",
        causes=[
            (
                "a peer died or the network failed (remote process exited or there was a "
                "network error)",
                "another rank's log",
            ),
            (
                "system error: shared memory, sockets, /dev/shm too small",
                "'unhandled system error'; NCCL_DEBUG=WARN shows the call",
            ),
            ("CUDA error inside NCCL", "'unhandled cuda error'"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD651",
        "cuda.out-of-memory",
        r"CUDA error.*out of memory",
        "The GPU ran out of memory.",
        "Use a smaller batch or model shard; check no other process holds the GPU (nvidia-smi).",
        "CUDA runtime cudaErrorMemoryAllocation",
        causes=[
            ("model or batch too large for the GPU", "nvidia-smi memory at the limit"),
            ("another process holds GPU memory", "nvidia-smi lists it"),
        ],
    ),
    _sig(
        "MD652",
        "cuda.error",
        r"CUDA error(?!.*out of memory)",
        "A CUDA call failed; MLX exits with status 1 after printing it.",
        "Read the CUDA error text; check the driver and GPU health (nvidia-smi, dmesg Xid).",
        "CUDA runtime error strings",
        causes=[
            ("GPU fault (illegal address, Xid)", "dmesg | grep -i xid"),
            ("driver and CUDA runtime do not match", "nvidia-smi vs the wheel's CUDA"),
        ],
    ),
    _sig(
        "MD654",
        "nccl.unsupported-dtype",
        r"Unknown or unsupported dtype",
        "The NCCL backend does not support this dtype (bool, int16, uint16, complex64).",
        "Cast to a supported dtype before the collective.",
        "MLX nccl backend",
    ),
    _sig(
        "MD655",
        "backend.none",
        r"\[distributed\] Couldn't initialize any backend",
        "No distributed backend could start (strict init).",
        "`meshdoctor check` lists the backends this MLX has (MD102).",
        "MLX distributed init",
        check="MD102",
        causes=[
            ("no backend compiled in and strict init", "MD102"),
            ("every backend's environment missing (started outside mlx.launch)", "MD103"),
        ],
    ),
    _sig(
        "MD656",
        "mlx.too-old-for-backend",
        r"valid values for backend are 'any', 'mpi' and 'ring' but '(?P<backend>[^']+)' was "
        r"provided",
        "This MLX is older than 0.30.1 and has no JACCL.",
        "Upgrade mlx to 0.30.1 or later (0.32.1+ recommended).",
        "MLX 0.30.1 release",
        check="MD102",
        fixed_in="0.30.1",
    ),
    _sig(
        "MD657",
        "launch.rank-exited",
        r"(?:Node with rank|\b[Rr]ank) (?P<rank>\d+) (exited with code (?P<code>-?\d+)|"
        r"(?P<killed>was killed))",
        "mlx.launch saw a rank end. mlx.launch itself still exits 0: wrappers must not trust "
        "its exit status.",
        "Read the rank's own log; the exit code is explained in the finding.",
        "mlx/_distributed_utils/launch.py",
        role=EITHER,
        causes=[
            ("the rank's own failure (its log names it)", "the rank's log"),
            (
                "mlx.launch stopping survivors after another rank failed (-15)",
                "another rank exited first",
            ),
        ],
    ),
    _sig(
        "MD658",
        "rank.killed-by-signal",
        None,
        "A rank was killed by a signal (negative code from mlx.launch or subprocess; 128+N "
        "from a shell).",
        "See the signal named: SIGKILL from outside is often the OOM killer; "
        "SIGTERM from mlx.launch is its teardown of the survivors.",
        "POSIX wait status",
        causes=[
            ("mlx.launch's own SIGTERM of survivors (-15)", "another rank failed first"),
            ("out-of-memory killer (SIGKILL, -9/137)", "dmesg | grep -i oom / jetsam"),
            ("native crash (SIGSEGV -11/139, SIGBUS, SIGABRT -6/134)", "a crash report"),
        ],
        role=EITHER,
    ),
    _sig(
        "MD659",
        "rank.exit-1",
        None,
        "A rank exited with status 1: an uncaught Python exception, or NCCL's exit(1) after "
        "'NCCL error'/'CUDA error'.",
        "Read the rank's log for the traceback or NCCL line.",
        "Python; MLX nccl backend",
        role=EITHER,
        causes=[
            ("an uncaught Python exception", "a traceback in the rank's log"),
            ("NCCL's or CUDA's exit(1)", "'NCCL error' or 'CUDA error' before it"),
        ],
    ),
    _sig(
        "MD660",
        "launch.exit-0-hides-failure",
        None,
        "mlx.launch exited 0 although a rank failed: its exit status cannot be trusted.",
        "Gate on the ranks' own status (grep '[WARN] Node with rank' or use meshdoctor "
        "triage), not on mlx.launch's exit code.",
        "mlx/_distributed_utils/launch.py",
        role=CONSEQUENCE,
    ),
    _sig(
        "MD661",
        "metal.command-buffer-failed",
        r"Command buffer execution failed(?!.*kIOGPUCommandBufferCallbackErrorTimeout)",
        "A Metal command buffer failed (GPU timeout has its own code, MD616).",
        "Read the error name: out of memory -> smaller working set; page fault -> MLX bug.",
        "Apple Metal MTLCommandBufferError",
        causes=[
            (
                "GPU out of memory (kIOGPUCommandBufferCallbackErrorOutOfMemory)",
                "the error name in the message",
            ),
            ("GPU page fault or hang", "kIOGPUCommandBufferCallbackErrorPageFault/Hang"),
        ],
    ),
    _sig(
        "MD662",
        "native.crash",
        None,
        "A process died of a native crash signal with no known faulting frame.",
        "Find the crash report (~/Library/Logs/DiagnosticReports/*.ips) and triage it.",
        "POSIX signals",
        causes=[
            ("Thunderbolt RDMA driver crash seen without its frame", "the .ips report"),
            ("a bug in a native library", "the faulting frame in the .ips report"),
        ],
    ),
    _sig(
        "MD663",
        "python.exception",
        None,
        "An uncaught Python exception ended the process (no known signature in it).",
        "Read the exception; it is the cause unless another rank failed first.",
        "Python",
        role=EITHER,
    ),
    _sig(
        "MD664",
        "rank.exit-nonzero",
        None,
        "A rank exited with a non-zero status that has no specific meaning.",
        "Read the rank's log.",
        "POSIX exit status",
        role=EITHER,
    ),
    # NCCL's own result strings (ncclGetErrorString) inside an `NCCL error` line, named apart
    # so that a rank whose only complaint is a lost peer (MD683) is read as a consequence.
    _sig(
        "MD681",
        "nccl.system-error",
        r"unhandled system error",
        "A system call inside NCCL failed (socket, shared memory, /dev/shm too small in a "
        "container, a limit on open files or locked memory).",
        "Rerun with NCCL_DEBUG=WARN to see the call; in containers give /dev/shm room "
        "(docker --shm-size, or --ipc=host); check ulimit -n and -l.",
        "NCCL ncclSystemError",
    ),
    _sig(
        "MD682",
        "nccl.cuda-error",
        r"unhandled cuda error",
        "A CUDA call inside NCCL failed (GPU out of memory, a GPU in an exclusive compute mode "
        "already used by another process, peer access refused).",
        "Run `meshdoctor check` on that host (GPU compute mode, memory held, health); rerun "
        "with NCCL_DEBUG=WARN to see the CUDA error.",
        "NCCL ncclUnhandledCudaError",
    ),
    _sig(
        "MD683",
        "nccl.remote-error",
        r"remote process exited or there was a network error",
        "A peer rank exited or the network between the ranks failed: usually the consequence "
        "of another rank's failure.",
        "Find the rank that died first (its exit status and stderr), and check the link "
        "between the hosts.",
        "NCCL ncclRemoteError",
        role=CONSEQUENCE,
        causes=[
            ("another rank died or was killed first", "its exit status (-9, 1) and stderr"),
            ("the network between the hosts failed", "no rank died; the link or switch"),
        ],
    ),
]

BY_CODE: Dict[str, Signature] = {s.code: s for s in CATALOGUE}
LINE_SIGNATURES = [s for s in CATALOGUE if s.pattern is not None]

# Multi-line records: a crash signal line, then the faulting frame within RECORD_WINDOW lines.
CRASH_SIGNAL = re.compile(
    r"\b(SIGSEGV|SIGBUS|SIGILL|SIGABRT|SIGFPE|SIGTRAP|EXC_BAD_ACCESS|"
    r"EXC_CRASH|Segmentation fault|Bus error)\b"
)
FRAMES = [("MD612", re.compile(r"tbt_post_(recv|send)")), ("MD609", re.compile(r"\bibv_reg_mr\b"))]
TRACEBACK = "Traceback (most recent call last):"
_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning)?)"
    r"(: (?P<msg>.*))?$"
)


def printable(text: str) -> str:
    """A log line safe to print: its ANSI colour sequences removed (logs are often coloured),
    then every other control character shown as ``\\xNN`` (:func:`meshdoctor.text.printable`)."""
    if "\x1b" in text:
        text = strip_ansi(text)
    return text_printable(text)


def _cut(line: str) -> str:
    return printable(line.strip()[:LINE_CHARS])


def _match(sig: Signature, line: str, m: "re.Match[str]", lineno: int = 0) -> Match:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    meaning = sig.meaning
    if sig.code == "MD615" and groups.get("errno") in _RING_ERRNO:
        meaning = f"{meaning} Here: {_RING_ERRNO[groups['errno']]}."
    if sig.code in ("MD621", "MD637") and groups.get("errno") in _CONNECT_ERRNO:
        meaning = f"{meaning} Here: {_CONNECT_ERRNO[groups['errno']]}."
    if sig.code == "MD650":
        msg = groups.get("msg", "").lower()
        for key, why in _NCCL_MSG.items():
            if key in msg:
                meaning = f"{meaning} Here: {why}."
                break
    if m.start() > LINE_CHARS // 2:  # a long line (a progress bar, then the error): show the error
        line = "..." + line[m.start() - 40 :]
    return Match(sig.code, sig.name, meaning, sig.remedy, _cut(line), groups, lineno)


def make_match(
    code: str,
    line: str,
    lineno: int = 0,
    meaning: Optional[str] = None,
    groups: Optional[Dict[str, str]] = None,
) -> Match:
    """A :class:`Match` for a signature recognised by other means than its regex (exit status,
    crash report), with ``meaning`` replacing the catalogue's when given."""
    s = BY_CODE[code]
    return Match(s.code, s.name, meaning or s.meaning, s.remedy, _cut(line), groups or {}, lineno)


def match_line(line: str, lineno: int = 0) -> List[Match]:
    """Every line signature that matches ``line`` (ANSI colour codes removed first)."""
    if "\x1b" in line:
        line = strip_ansi(line)
    out = []
    for sig in LINE_SIGNATURES:
        m = sig.pattern.search(line)  # type: ignore[union-attr]
        if m:
            out.append(_match(sig, line, m, lineno))
    return out


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (mlx.launch colours its [WARN] lines)."""
    return _ANSI.sub("", text)


class Scanner:
    """Matches records across lines in bounded memory.

    Feed lines in order with :meth:`feed` (1-based ``lineno``; lines may be skipped as long as
    every line holding an :data:`ANCHORS` string is fed, and every line is fed while
    :attr:`wants_every_line` is true); call :meth:`close` at the end. Both return the matches
    completed so far. ``generic`` adds :data:`MD662` native.crash for a crash signal whose frame
    never came and ``MD663`` python.exception for a traceback whose exception line matched no
    signature (off for the probe, whose own codes say that)."""

    def __init__(self, generic: bool = False) -> None:
        self.generic = generic
        self._crash: Optional[Tuple[int, str]] = None  # (lineno, line) of an open crash signal
        self._tb: Optional[Tuple[int, List[str]]] = None  # (lineno, last frames) of a traceback

    @property
    def wants_every_line(self) -> bool:
        return self._tb is not None

    def _expire_crash(self, lineno: int) -> List[Match]:
        if self._crash is None or lineno - self._crash[0] <= RECORD_WINDOW:
            return []
        start, line = self._crash
        self._crash = None
        return [self._generic_crash(start, line)] if self.generic else []

    def _generic_crash(self, start: int, line: str) -> Match:
        m = CRASH_SIGNAL.search(line)
        return make_match("MD662", line, start, groups={"signal": m.group(1)} if m else {})

    def _close_tb(self, exc_line: Optional[str], lineno: int) -> List[Match]:
        assert self._tb is not None
        start, frames = self._tb
        self._tb = None
        if exc_line is None:
            return []
        found = match_line(exc_line, lineno)
        for m in found:
            m.context = frames[-CONTEXT_LINES:]
        if found or not self.generic:
            return found
        em = _EXC_LINE.match(exc_line.strip())
        m = make_match("MD663", exc_line, lineno, groups={"type": em.group("type")} if em else {})
        m.context = frames[-CONTEXT_LINES:]
        return [m]

    def feed(self, lineno: int, line: str) -> List[Match]:
        """Matches completed by ``line`` (the line itself, or a record it closes)."""
        out = self._expire_crash(lineno)
        if "\x1b" in line:
            line = strip_ansi(line)
        if self._tb is not None:
            start, frames = self._tb
            s = line.rstrip("\r\n")
            if (
                s.startswith((" ", "\t"))
                or not s.strip()
                or s.startswith(("During handling", "The above exception", TRACEBACK))
            ):
                if s.strip():
                    frames.append(_cut(s))
                    del frames[:-CONTEXT_LINES]
                if lineno - start > TRACEBACK_LINES:
                    out += self._close_tb(None, lineno)
                return out
            return out + self._close_tb(s, lineno)
        if TRACEBACK in line:
            self._tb = (lineno, [])
            return out
        found = match_line(line, lineno)
        if self._crash is not None:
            for code, rx in FRAMES:
                if rx.search(line):
                    start, sig_line = self._crash
                    self._crash = None
                    same = [m for m in found if m.code == code]
                    m = same[0] if same else make_match(code, line, start)
                    m.lineno, m.context = start, [_cut(sig_line), _cut(line)]
                    if not same:
                        found.append(m)
                    break
        elif not found and CRASH_SIGNAL.search(line):
            self._crash = (lineno, line)
        return out + found

    def close(self) -> List[Match]:
        """Matches of records still open at the end of the input."""
        out: List[Match] = []
        if self._crash is not None and self.generic:
            out.append(self._generic_crash(*self._crash))
        self._crash = None
        if self._tb is not None:
            self._tb = None  # a traceback cut off before its exception line names nothing
        return out


def classify(text: str, *, generic: bool = False) -> List[Match]:
    """Every catalogue signature found in ``text`` (one match per signature: its first matching
    record), in catalogue order. ``text`` is any log text (a rank's stderr tail, a log file);
    ``generic`` as in :class:`Scanner`."""
    sc = Scanner(generic=generic)
    found: List[Match] = []
    for i, line in enumerate(text.splitlines(), 1):
        found += sc.feed(i, line)
    found += sc.close()
    first: Dict[str, Match] = {}
    for m in found:
        first.setdefault(m.code, m)
    order = {s.code: i for i, s in enumerate(CATALOGUE)}
    return sorted(first.values(), key=lambda m: order[m.code])


def classify_exit(returncode: Optional[int], text: str = "") -> List[Match]:
    """Signatures recognised from a rank's exit status (``returncode`` as :mod:`subprocess`
    gives it; negative = killed by a signal) together with its ``text``: 255 without a
    ``[jaccl]`` line (MD618), 75 (MD622)."""
    out: List[Match] = []
    if returncode == 255 and "[jaccl]" not in text:
        out.append(make_match("MD618", "exit status 255"))
    if returncode == 75:
        out.append(make_match("MD622", "exit status 75"))
    return out


def codes() -> Iterable[str]:
    """Every signature code, in catalogue order."""
    return [s.code for s in CATALOGUE]


_WHY = {
    CAUSE: "A first cause: the rank that printed it could not go on, and the job with it; the "
    "other ranks' errors that follow are its consequences.",
    EITHER: "A first cause when it is the only failure; when another rank failed earlier (often "
    "in the same second) it is that failure's echo: deal with the earliest failure "
    "first.",
    CONSEQUENCE: "Usually a consequence of another rank's failure: look for the first cause.",
}


def doc(s: Signature) -> Doc:
    """The catalogue parts of a signature: its meaning; why it matters (its role: first cause,
    either, or consequence; the MLX version that fixes or clarifies it); what helps (and the
    check that looks at the likely cause); its source."""
    why = _WHY[s.role]
    if s.fixed_in:
        why += f" Fixed or made clear in: MLX {s.fixed_in}."
    action = s.remedy
    if s.check:
        action += f" Check: meshdoctor check --only {s.check}"
    try:
        return Doc(meaning=s.meaning, why=why, action=action, sources=(s.source,))
    except ValueError as exc:
        raise ValueError(f"signature {s.code} {s.name}: {exc}") from None


def causes_text(s: Signature) -> str:
    """The known causes of ``s``, most common first, each with the evidence that tells it
    apart (one numbered line each); empty when none are known."""
    return "\n".join(f"{i}. {c.what} (tell: {c.evidence})" for i, c in enumerate(s.causes, 1))


def entries() -> List[Entry]:
    """The catalogue entries of every signature, in catalogue order (title ``signature NAME``,
    the known causes as a detail)."""
    out = []
    for s in CATALOGUE:
        details = (("Known causes, most common first", causes_text(s)),) if s.causes else ()
        out.append(
            Entry(
                code=s.code,
                kind=SIGNATURE,
                title=f"signature {s.name}",
                doc=doc(s),
                names=(s.name,),
                details=details,
            )
        )
    return out
