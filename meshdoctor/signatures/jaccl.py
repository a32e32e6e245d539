"""The JACCL backend's failures (``mlx/distributed/jaccl``, MLX v0.30.1-v0.32.x): init and
device-file errors, queue pairs, protection domains, memory regions, the TCP side channel to the
coordinator, the data path (``[jaccl] Send/Recv failed``, its uncaught abort), the librdma
dlopen, the spinning survivor's ``MeshImpl`` frames and the JACCL progress guard's message (the
community guard PR). Codes are stable: never renumber, only add."""

from __future__ import annotations

import re
from typing import Mapping, Optional

from meshdoctor.mlx.ports import STARTING_PORT
from meshdoctor.signatures import errnos
from meshdoctor.signatures.model import CONSEQUENCE, EITHER, by_group, signature

# the inner [jaccl] messages of a peer that went away: the side channel's "Recv/Send failed with
# errno=N" (tcp.cpp; 60 is a timeout, anything else a closed or reset socket), the liveness
# check's "peer is gone" and the progress guard's "no completion" / "made no progress"
_ECHO = re.compile(r"failed with errno=(?!60\b)\d+|peer is gone|no completion for|made no progress")


def _abort_role(groups: Mapping[str, str]) -> Optional[str]:
    """The role of an uncaught-exception abort: the role of the [jaccl] message inside it."""
    inner = groups.get("inner", "")
    if re.search(r"failed with errno=60\b", inner):
        return EITHER
    return CONSEQUENCE if _ECHO.search(inner) else None


SIGNATURES = (
    signature(
        "MD601",
        "jaccl.rtr-errno-22",
        r"(\[jaccl\] Changing queue pair to RTR failed with errno 22\b|"
        r"No IPv4-mapped GID for this device)",
        "The queue pair could not move to RTR because the port has no usable IPv4-mapped GID "
        "(MLX <= 0.32.0 prints RTR errno 22; 0.32.1+ says 'No IPv4-mapped GID for this "
        "device').",
        "Give every Thunderbolt port an IPv4 address of its own, as its own network service "
        "outside the Thunderbolt Bridge (each RDMA port must be addressed and routable on its "
        "own: remove the Thunderbolt Bridge service, or its ports from it): "
        "mlx.distributed_config --auto-setup does it once after a full-fleet reboot, and exo's "
        "app bundles a script that does the same for a run from source; if it persists, "
        "reboot.",
        "MLX v0.31.2-v0.32.1 jaccl GID selection; mlx #4530; exo #1390 (ports of a run from "
        "source not routable one by one)",
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
        examples=(
            "ValueError: [jaccl] Changing queue pair to RTR failed with errno 22",
            "RuntimeError: [jaccl] No IPv4-mapped GID for this device. Assign an IPv4 address",
        ),
    ),
    signature(
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
        examples=(
            "[jaccl] Changing queue pair to RTR failed with errno 60",
            "RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 60",
        ),
    ),
    signature(
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
        examples=(
            "[jaccl] Creating the queue pair failed with 'Resource busy (16)'",
            "[jaccl] Changing queue pair to RTR failed with errno 16",
            "RuntimeError: [jaccl] Creating the queue pair failed with 'Resource busy (16)'.",
        ),
    ),
    signature(
        "MD604",
        "jaccl.no-protection-domain",
        r"\[jaccl\] Couldn't allocate protection domain",
        "JACCL could not allocate an RDMA protection domain (ibv_alloc_pd returned none): the "
        "Thunderbolt RDMA driver on this host has run out of verbs resources or is in a broken "
        "state (after long runs or many group init/teardown cycles, or a boot-time driver "
        "bug), or its port cannot carry RDMA at all (PORT_DOWN, Thunderbolt 4). The peers' "
        "'Recv failed with errno=2' and aborts that follow are its consequences.",
        "Reboot this host, or replug its Thunderbolt cable, to reset the RDMA stack, then "
        "relaunch; avoid creating and tearing down the group again and again in one process. "
        "If it fails from the very first launch, check the port state (ibv_devinfo: "
        "PORT_DOWN) and, on Thunderbolt 4 hardware, use the ring backend.",
        "MLX jaccl rdma.cpp (Connection::allocate_protection_domain); mlx #4530; "
        "https://github.com/ml-explore/mlx/issues/3207; exo PR #1467; exo #2111",
        causes=[
            (
                "the RDMA driver's state is exhausted after a long run or many init/teardown "
                "cycles (exo #2111: after 11 minutes of inference)",
                "it worked earlier in the same job or boot; a reboot or replug fixes it",
            ),
            (
                "boot-time driver bug",
                "port PORT_ACTIVE yet it fails; replugging the cable fixes it (exo PR #1467)",
            ),
            (
                "the port is PORT_DOWN (peer Mac off, RDMA not enabled there, cable out)",
                "`ibv_devinfo` shows state PORT_DOWN (1)",
            ),
            (
                "Thunderbolt 4 hardware: rdma_enX devices listed but never usable",
                "ports top out at 40 Gb/s, no TB5 receptacle (MD201)",
            ),
        ],
        check="MD208",
        examples=("RuntimeError: [jaccl] Couldn't allocate protection domain",),
    ),
    signature(
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
        examples=(
            "[jaccl] Register memory region failed",
            "RuntimeError: [jaccl] Register memory region failed",
        ),
    ),
    signature(
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
        examples=("RuntimeError: [jaccl] Recv failed with errno=2",),
    ),
    signature(
        "MD607",
        "jaccl.recv-errno-60",
        r"\[jaccl\] Recv failed with errno=60\b",
        "Side-channel timeout.",
        "Check that the coordinator (MLX_JACCL_COORDINATOR, rank 0's first IP) is reachable "
        f"from this rank: `ping IP`; when ping answers, test the port: `nc -vz IP {STARTING_PORT}` "
        "(a firewall can drop the port of a host that answers ping).",
        "MLX jaccl side channel",
        causes=[
            ("the coordinator is unreachable from this rank", "ping rank 0's first IP fails"),
            (
                "a firewall drops the coordinator's port while the host answers",
                f"ping answers but `nc -vz IP {STARTING_PORT}` times out",
            ),
            ("another rank never arrived", "a rank with no log line at all"),
        ],
        role=EITHER,
        examples=("RuntimeError: [jaccl] Recv failed with errno=60",),
    ),
    signature(
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
            (
                "ranks out of step in their collectives: an action of the application that "
                "ran, failed or differed on some ranks only (a server that reloads or "
                "switches models per request on every rank, a load that failed on one), so "
                "the others post to a peer that never posts back",
                "an error or a different log line on one rank just before; a model switch "
                "per request",
            ),
        ],
        examples=(
            "[jaccl] Recv failed with error code -12",
            "[jaccl] Send failed with error code -12",
            "RuntimeError: [jaccl] Send failed with error code -12",
        ),
    ),
    signature(
        "MD609",
        "jaccl.device-not-found",
        r"(\[jaccl\] Could not find device (?P<device>\S+)|"
        r"SIGSEGV.*ibv_reg_mr|ibv_reg_mr.*SIGSEGV)",
        "The hostfile names an RDMA device that does not exist (MLX 0.32.1+ says 'Could not "
        "find device'; before, a SIGSEGV in ibv_reg_mr at init).",
        "Regenerate the hostfile; check ibv_devices on that node.",
        "mlx #3777, #4180; exo-explore/exo#2186",
        causes=[
            (
                "device renamed after a reboot or re-cabling",
                "`ibv_devices` lists other rdma_enX names than the hostfile",
            ),
            ("RDMA not enumerated on that Mac", "`ibv_devices` prints the header only"),
        ],
        check="MD202",
        fixed_in="0.32.1",
        examples=(
            "[jaccl] Could not find device rdma_en5 (3 available)",
            "RuntimeError: [jaccl] Could not find device rdma_en5 (3 available)",
            "Segmentation fault: 11\n  frame #0: 0x00000001 librdma.dylib`ibv_reg_mr + 28",
            # exo-explore/exo#2186: the symbol with its iova2 suffix, then JACCL's caller
            "Exception Type: EXC_BAD_ACCESS (SIGSEGV)\n"
            "0   libibverbs.dylib  0x1a2b3c4d ibv_reg_mr_iova2 + 40\n"
            "1   libjaccl.dylib  0x1a2b3c4e "
            "jaccl::SharedBuffer::register_to_protection_domain(ibv_pd*) + 60",
        ),
        frame=r"\bibv_reg_mr\w*|register_to_protection_domain",
    ),
    signature(
        "MD610",
        "jaccl.progress-timeout",
        r"\[jaccl\].*(no completion|made no progress) for (?P<ms>\d+) ms",
        "The JACCL progress guard saw no completion: a peer stopped answering and the group was "
        "torn down (exit status 75 unless JACCL_TIMEOUT_ACTION=throw). Only forked JACCL "
        "builds print this: no released MLX has the guard or peer liveness (0.32.4's libjaccl "
        "has neither; MLX PR #4530 is open).",
        "Find the dead or stalled peer; re-form the group.",
        "JACCL progress guard PR",
        causes=[
            ("a peer died (crash, kill, OOM)", "that peer's log or crash report"),
            ("a link dropped", "PORT_DOWN on one end"),
        ],
        role=CONSEQUENCE,
        examples=(
            "[jaccl] peer 2: no completion for 30000 ms",
            "[jaccl] mesh all_reduce: no completion for 30001 ms",
            "[jaccl] mesh recv made no progress for 30000 ms",
        ),
    ),
    signature(
        "MD611",
        "jaccl.spinning-survivor",
        r"MeshImpl::(recv|all_reduce)",
        "A survivor is spinning in JACCL (MeshImpl::recv/all_reduce) with no error: a dead peer "
        "with upstream JACCL, which has no timeout.",
        "Kill the ranks (outer deadline, SIGKILL); wired memory may stay until reboot.",
        "mlx #3910, #4278",
        causes=[("a peer died after init", "its crash report or exit")],
        role=CONSEQUENCE,
        examples=(
            "  frame #3: jaccl::MeshImpl::all_reduce<float>",
            "    frame #3: 0x0000000104a1c2d0 libjaccl.dylib`jaccl::MeshImpl::recv(...)",
        ),
    ),
    signature(
        "MD617",
        "jaccl.uncaught-abort",
        r"libc\+\+abi: terminating due to uncaught exception of type [\w:]+: "
        r"(?P<inner>\[jaccl\].*)",
        "A JACCL data-path error aborted the process (MLX <= 0.32.0 does not propagate it).",
        "Upgrade mlx; the inner [jaccl] message names the actual fault.",
        "MLX 0.32.1",
        fixed_in="0.32.1",
        examples=(
            "libc++abi: terminating due to uncaught exception of type "
            "std::invalid_argument: [jaccl] Recv failed with error code -12",
            "libc++abi: terminating due to uncaught exception of type "
            "std::runtime_error: [jaccl] Recv failed with errno=54",
        ),
        role_of=_abort_role,
        role_note="The [jaccl] message inside decides: a side-channel 'failed with errno=N' "
        "(a closed or reset socket), 'peer is gone' or 'no completion' is a peer's failure "
        "seen from here, a consequence (errno=60, a timeout: either).",
    ),
    signature(
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
        examples=(
            "RuntimeError: [jaccl] You need to provide via environment variables a rank "
            "(MLX_RANK), a device file (MLX_IBV_DEVICES) and a coordinator ip/port "
            "(MLX_JACCL_COORDINATOR)",
            "RuntimeError: [jaccl] You need to provide via environment variables a rank "
            "(JACCL_RANK/MLX_RANK), a device file (JACCL_IBV_DEVICES/MLX_IBV_DEVICES) and "
            "a coordinator ip/port (JACCL_COORDINATOR/MLX_JACCL_COORDINATOR)",
        ),
    ),
    signature(
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
        examples=(
            "RuntimeError: [jaccl] Malformed device file",
            "ValueError: [jaccl] Device names should be null, a string or array of strings.",
            "ValueError: [jaccl] The full connectivity matrix should be provided",
            "ValueError: [jaccl] The device file should define a valid mesh or a valid ring.",
            "ValueError: [jaccl] Invalid rank 9",
        ),
    ),
    signature(
        "MD632",
        "jaccl.too-many-peers",
        r"\[jaccl\].*(maximum number of supported peers is \d+|mesh supports up to \d+ peers|"
        r"Up to \d+ per direction supported)",
        "The JACCL mesh supports at most 8 ranks and jaccl-ring at most 4 devices per direction.",
        "Use at most 8 ranks for a mesh, or jaccl-ring / ring.",
        "MLX jaccl MESH_MAX_PEERS, RING_MAX_CONNS",
        check="MD401",
        examples=(
            "ValueError: [jaccl] The maximum number of supported peers is 8",
            "ValueError: [jaccl] The JACCL mesh supports up to 8 peers",
            "ValueError: [jaccl] Up to 4 per direction supported",
        ),
    ),
    signature(
        "MD633",
        "jaccl.open-device-failed",
        r"\[jaccl\] Could not open device (?P<device>\S+)",
        "ibv_open_device failed for a device in the hostfile.",
        "Check `ibv_devinfo -d DEVICE`; reboot the node if the device is listed but cannot be "
        "opened.",
        "MLX jaccl rdma.cpp",
        causes=[("device gone or renamed", "`ibv_devices`"), ("driver wedged", "MD619")],
        check="MD202",
        examples=("RuntimeError: [jaccl] Could not open device rdma_en3",),
    ),
    signature(
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
        examples=("RuntimeError: [jaccl] Couldn't create completion queue",),
    ),
    signature(
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
        examples=(
            "RuntimeError: [jaccl] Couldn't create queue pair",
            "RuntimeError: [jaccl] Creating the queue pair failed with 'Operation not "
            "supported (102)'.",
        ),
    ),
    signature(
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
        examples=(
            "RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 96",
            "RuntimeError: [jaccl] Changing queue pair to INIT failed with errno 22",
        ),
    ),
    signature(
        "MD637",
        "jaccl.side-channel-connect",
        r"\[jaccl\] Couldn't connect \(error: (?P<errno>\d+)\)",
        "JACCL's TCP side channel could not reach the coordinator (4 attempts, about 15 s).",
        f"Check MLX_JACCL_COORDINATOR (rank 0's first IP and port {STARTING_PORT}) is reachable "
        "from this rank and rank 0 started: `ping IP`; when ping answers, test the port: "
        f"`nc -vz IP {STARTING_PORT}` (refused: nothing listens, rank 0 is not up; a timeout: "
        "a firewall drops the port); if ping and nc work but connect() stays in SYN_SENT, "
        "the fault is on this node (compare `netstat -an | grep SYN_SENT` on both hosts; a "
        "local filter or socket problem).",
        "MLX jaccl side channel; https://github.com/ml-explore/mlx/issues/3755",
        causes=[
            ("rank 0 not started or died first (refused)", "rank 0's log"),
            (
                "coordinator IP unreachable (timeout 60/110, no route 65/113)",
                "ping rank 0's first IP from this host fails",
            ),
            (
                "a firewall drops the coordinator's port while the host answers (timeout 60/110)",
                f"ping answers but `nc -vz IP {STARTING_PORT}` times out",
            ),
            (
                "connect() never leaves SYN_SENT while ping and `nc -vz IP PORT` work: a "
                "host-local filter or socket problem on this node (60/65 on this node only)",
                "compare `netstat -an | grep SYN_SENT` on both hosts",
            ),
        ],
        role=EITHER,
        examples=("RuntimeError: [jaccl] Couldn't connect (error: 60)",),
        refine=by_group("errno", errnos.CONNECT),
    ),
    signature(
        "MD638",
        "jaccl.side-channel-socket",
        r"\[jaccl\] (Couldn't bind socket|Couldn't listen|Accept failed|Couldn't create "
        r"socket|Couldn't enable reuse(addr|port))",
        "JACCL's coordinator could not open its TCP side channel.",
        "Free the coordinator port (leftover rank) or choose another; check rank 0's IP is "
        "its own.",
        "MLX jaccl side channel",
        causes=[
            ("port in use by a leftover rank", "MD301"),
            ("coordinator IP not on rank 0's host", "hostfile vs ifconfig"),
        ],
        check="MD301",
        examples=(
            "RuntimeError: [jaccl] Couldn't bind socket (error: 48)",
            "RuntimeError: [jaccl] Accept failed (error: 9)",
            "RuntimeError: [jaccl] Couldn't enable reuseaddr (error: 22)",
        ),
    ),
    signature(
        "MD639",
        "jaccl.side-channel-errno",
        r"\[jaccl\] (?P<dir>Recv|Send) failed with errno=(?P<errno>\d+)\b"
        r"(?<!Recv failed with errno=2)(?<!Recv failed with errno=60)",
        "A JACCL side-channel transfer failed; the errno is often stale when the peer closed.",
        "Look at the other ranks first.",
        "mlx #4530",
        causes=[("another rank failed first", "its log")],
        role=CONSEQUENCE,
        examples=("RuntimeError: [jaccl] Send failed with errno=32",),
    ),
    signature(
        "MD641",
        "jaccl.librdma-symbol",
        r"(librdma.*(Symbol not found|symbol not found|Library not loaded|image not found)|"
        r"(Symbol not found|Library not loaded).*librdma)",
        "librdma.dylib is missing or lacks a symbol MLX needs: the OS is too old for this MLX.",
        "Update macOS to 26.2 or later (26.3 for large buffers).",
        "MLX jaccl dlopen",
        check="MD201",
        examples=(
            "RuntimeError: dlopen(librdma.dylib, 0x0001): Symbol not found: _ibv_query_gid_ex",
        ),
    ),
    signature(
        "MD646",
        "jaccl.peer-gone",
        r"\[jaccl\] peer is gone",
        "The side-channel liveness check saw a peer disappear (patched JACCL).",
        "Look at the peer rank: it failed first.",
        "mlx PR #4530",
        role=CONSEQUENCE,
        examples=("RuntimeError: [jaccl] peer is gone (rank 2)",),
    ),
    signature(
        "MD624",
        "jaccl.ring-non-neighbour",
        r"\[jaccl\] In ring mode (?P<dir>send|recv) is only supported to direct neighbors",
        "The program called send/recv between ranks that are not ring neighbours on the "
        "jaccl-ring backend: it connects rank r only to r-1 and r+1.",
        "Send only between neighbours on jaccl-ring, or use the jaccl mesh (every pair connected).",
        "MLX jaccl ring.cpp (v0.32.1-0.32.4)",
        examples=(
            "RuntimeError: [jaccl] In ring mode send is only supported to direct neighbors "
            "but tried to send to 2 from 0",
            "RuntimeError: [jaccl] In ring mode recv is only supported to direct neighbors "
            "but tried to recv from 3 to 1",
        ),
    ),
    signature(
        "MD625",
        "jaccl.invalid-topology",
        r"\[jaccl\] The devices do not form a valid (?P<shape>mesh|ring)",
        "The hostfile's RDMA devices do not form the topology the backend needs: a mesh needs "
        "a device towards every peer, a ring towards both neighbours.",
        "Regenerate the hostfile (`mlx.distributed_config`), or pick the backend its cells "
        "fit (jaccl for a full mesh, jaccl-ring for a ring).",
        "MLX jaccl.cpp (v0.32.1-0.32.4)",
        check="MD401",
        examples=(
            "RuntimeError: [jaccl] The devices do not form a valid mesh.",
            "RuntimeError: [jaccl] The devices do not form a valid ring.",
        ),
    ),
    signature(
        "MD626",
        "jaccl.unsupported-dtype",
        r"\[jaccl\] Unsupported dtype for JACCL operation",
        "JACCL was asked to reduce an array of a dtype it has no reduction for.",
        "Cast the array to a supported dtype (float32, float16, bfloat16, int32) before the "
        "collective.",
        "MLX distributed/jaccl/jaccl.cpp (v0.32.1)",
        examples=("RuntimeError: [jaccl] Unsupported dtype for JACCL operation",),
    ),
)
