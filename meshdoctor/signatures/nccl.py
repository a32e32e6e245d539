"""The GPU side's failures: the NCCL backend (``mlx/distributed/nccl``: its environment and
bootstrap, ``NCCL error`` lines), NCCL's own texts (``NCCL WARN``, the ncclGetErrorString result
strings) and CUDA runtime errors. Codes are stable: never renumber, only add."""

from __future__ import annotations

import ipaddress
import re
from typing import Mapping, Optional

from meshdoctor.signatures.cuda import KNOWN
from meshdoctor.signatures.model import CAUSE, CONSEQUENCE, EITHER, signature
from meshdoctor.signatures.nccl_classes import CLASSES
from meshdoctor.signatures.nccl_results import CLASSES as RESULT_CLASSES


# NCCL WARN texts (NCCL's src/misc/socket.cc, bootstrap.cc, init.cc, shmutils.cc, net_socket.cc)
# -> what the warning says here and what to do
_NCCL_WARN = (
    (
        "exceeded retries",
        "NCCL's connection to a peer was refused on every retry (socketStartConnect, "
        "ECONNREFUSED): nothing listens at that address any more (the peer died or never "
        "started) or the address is on the wrong interface; read the peer's own log first, "
        "then set NCCL_SOCKET_IFNAME to the interface the hosts share",
    ),
    (
        "Call to connect returned",
        "NCCL is retrying a connection to a peer that refuses it: the peer is not listening "
        "yet (still starting) or is gone",
    ),
    (
        "no socket interface found",
        "NCCL found no network interface to bootstrap on: NCCL_SOCKET_IFNAME names an "
        "interface this host does not have, or none is up (`ip -br addr`)",
    ),
    (
        "Duplicate GPU detected",
        "two ranks use the same GPU: CUDA_VISIBLE_DEVICES gives both the same device; run "
        "one rank per GPU (at most as many ranks per host as it has GPUs)",
    ),
    (
        "out of memory",
        "a CUDA allocation inside NCCL ran out of GPU memory: free memory on that GPU "
        "(nvidia-smi) or lower NCCL_BUFFSIZE",
    ),
    (
        "shared memory segment",
        "NCCL could not create its shared memory segment: /dev/shm is too small (a "
        "container's default 64 MB: run it with --shm-size or --ipc=host)",
    ),
    (
        "message truncated",
        "a peer sent more than this rank expected: the ranks called collectives of different "
        "sizes or in a different order (a program bug, or ranks running different code)",
    ),
)


# ncclResult_t (NCCL v2.30.7 src/nccl.h.in) -> what a trace line's "-> N" says failed
NCCL_RESULTS = {
    "1": "a CUDA call failed (ncclUnhandledCudaError)",
    "2": "a system call failed (ncclSystemError: sockets, /dev/shm, limits)",
    "3": "an internal check failed (ncclInternalError), often after an earlier failure",
    "4": "an argument was invalid (ncclInvalidArgument)",
    "5": "NCCL was used in a way it does not allow (ncclInvalidUsage)",
    "6": "a peer exited or the network failed (ncclRemoteError): another rank failed first",
    "7": "an operation is still in progress (ncclInProgress)",
    "8": "an operation timed out (ncclTimeout)",
}


def nccl_warning(groups: Mapping[str, str]) -> Optional[str]:
    """What the ``NCCL WARN`` text in group ``msg`` says here (the first known class it holds,
    case-insensitive), or for an ``NCCL INFO file:line -> N`` trace line (group ``res``) what
    its result code names and where it failed (``site``:``at``); None otherwise."""
    if groups.get("res"):
        what = NCCL_RESULTS.get(groups["res"])
        where = f"{groups.get('site', '')}:{groups.get('at', '')}"
        return f"the failure passed through {where} with result {groups['res']}" + (
            f": {what}" if what else ""
        )
    magic = _MAGIC.search(groups.get("msg", ""))
    if magic:
        text = _as_text(magic.group(1))
        if text:
            return (
                f"the magic it received, read as 8 bytes lowest first, is the text {text!r}: "
                "another program's protocol, not NCCL's"
            )
    msg = groups.get("msg", "").lower()
    return next((why for key, why in _NCCL_WARN if key.lower() in msg), None)


# socketFinalizeAccept's "wrong magic %lx != %lx" (NCCL v2.30.7 src/misc/socket.cc)
_MAGIC = re.compile(r"wrong magic ([0-9a-fA-F]{1,16}) != ")


def _as_text(hexmagic: str) -> Optional[str]:
    """The 8 bytes of NCCL's 64-bit ``hexmagic`` as the peer sent them (little-endian on the
    x86 and Arm hosts NCCL runs on), when all of them are printable ASCII; else None."""
    raw = int(hexmagic, 16).to_bytes(8, "little")
    return raw.decode("ascii") if all(32 <= b < 127 for b in raw) else None


def plugin_name(groups: Mapping[str, str]) -> Optional[str]:
    """What the names an NCCL plugin lookup tried (group ``names``) say: a path that NCCL
    2.27.3 made into a file name (``libnccl-profiler-./x.so.so``), or None."""
    names = groups.get("names", "")
    if re.search(r"libnccl-\w+-\S*/|\.so\.so\b", names):
        return (
            "the name NCCL tried holds a path inside its own 'libnccl-TYPE-...so' name: "
            "NCCL 2.27.3 builds the file name from any value that does not start with 'lib', "
            "so a path cannot load there; give the library's own name (libx.so, on "
            "LD_LIBRARY_PATH) or upgrade NCCL to 2.27.5 or later, which opens a path as given"
        )
    return None


# --- nccl.error: what an NCCL result line says beyond its result (NCCL's result codes are
# the failure classes of nccl_results.py) ---------------------------------------------------


def nccl_result(groups: Mapping[str, str]) -> Optional[str]:
    """What an NCCL result line (MD650) says beyond its result class: the NCCL version PyTorch
    names (group ``version``, or ``pversion`` of a line cut before "NCCL error in:": NCCL 2.18
    reported network errors as internal ones, NVIDIA/nccl #1092; 2.18's setup copy bug behind
    'unhandled cuda error', NVIDIA/nccl #957; 2.19's internal error on a group of one rank,
    deepspeed #5281) and the text nccl-tests prints after `` / `` (``ncclGetLastError``, NCCL's last WARN:
    read with the WARN classes, or empty: no WARN recorded); None when neither says more."""
    parts = []
    msg = groups.get("msg") or groups.get("pmsg") or ""
    version = groups.get("version") or groups.get("pversion") or ""
    internal = "internal error" in msg or groups.get("result") == "ncclInternalError"
    if version.startswith("2.19.") and internal:
        parts.append(
            f"NCCL {version} fails a collective on a communicator of one rank (a process "
            "group of size 1: a model- or tensor-parallel group of one GPU) as an internal "
            "error (deepspeed #5281): skip collectives on groups of size 1, or use another "
            "NCCL release"
        )
    if version.startswith("2.18.") and "unhandled cuda error" in msg:
        parts.append(
            f"NCCL {version} is a 2.18 release, whose setup issued a cudaMemcpyAsync "
            "that read a previous copy's result without synchronising, failing with 'Cuda "
            "failure 'invalid argument'' (NVIDIA/nccl #957, fixed in 2.19.3; seen in vLLM's "
            "tensor parallel start, vllm #3688): upgrade NCCL to 2.19.3 or later (a PyTorch "
            "whose bundled NCCL is, or the nvidia-nccl wheel)"
        )
    if version.startswith("2.18.") and internal:
        parts.append(
            f"NCCL {version} is a 2.18 release, which reported network errors as "
            "internal ones: upgrade NCCL (2.19 or later) and rerun with NCCL_DEBUG=WARN"
        )
    if "devcomm" in (groups.get("file") or "").lower() and "invalid usage" in msg:
        # PyTorch's symmetric memory makes NCCL device communicators (ncclDevCommCreate)
        parts.append(
            "the call was ncclDevCommCreate (the file is PyTorch's device-communicator "
            "manager, its symmetric memory): NCCL 2.29 and later refuse a "
            "ncclDevCommRequirements_t not set up with NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER, "
            "which code written for 2.28 zero-fills with memset (pytorch/pytorch #172398): use "
            "the NCCL this PyTorch was built with (its nvidia-nccl wheel) or a PyTorch with the "
            "fix"
        )
    if " / " in msg:  # nccl-tests (NCCL 2.13+): 'RESULT / LAST ERROR'
        last = msg.split(" / ", 1)[1].strip()
        if not last:
            parts.append(
                "the text after ' / ' (NCCL's last error, ncclGetLastError) is empty: NCCL "
                "recorded no WARN for this failure in this process"
            )
        else:
            cls = next((c for c in CLASSES if c.regex.search(last)), None)
            parts.append(
                f"NCCL's last error (its last WARN) was '{last}'"
                + (f": {cls.meaning} (cause: {cls.cause}; what helps: {cls.remedy})" if cls else "")
            )
    return "; ".join(parts) or None


def result_role(groups: Mapping[str, str]) -> Optional[str]:
    """MD650's role hook: :func:`peer_went_away`, or :data:`CONSEQUENCE` for ncclRemoteError
    named by PyTorch's sentence (group ``result``) or number (group ``num``: 6)."""
    if groups.get("result") == "ncclRemoteError" or groups.get("num") == "6":
        return CONSEQUENCE
    return peer_went_away(groups)


# --- end nccl.error --------------------------------------------------------------------------

# libibverbs' enum ibv_wc_status (verbs.h): what a failed completion's status says
_WC_STATUS = {
    "1": (
        "IBV_WC_LOC_LEN_ERR",
        "a local length error: a message longer than the receive "
        "buffer posted for it (the two ends disagree on sizes, or an MTU mismatch)",
    ),
    "2": (
        "IBV_WC_LOC_QP_OP_ERR",
        "a local queue-pair operation error: the QP is set up "
        "inconsistently with the peer's (MTU or attributes)",
    ),
    "4": (
        "IBV_WC_LOC_PROT_ERR",
        "a local protection error: memory not registered or deregistered early, or, with "
        "GPUDirect RDMA (GPU buffers registered with the NIC), the NIC's reads of GPU memory "
        "rerouted by PCIe ACS (Access Control Services) on the switches between them: test "
        "with NCCL_NET_GDR_LEVEL=0 (GPUDirect off); if that passes, disable ACS on the PCIe "
        "switches (`sudo lspci -vvv | grep ACSCtl`, NCCL documentation, Troubleshooting: "
        "PCI Access Control Services; nccl-tests #252)",
    ),
    "5": (
        "IBV_WC_WR_FLUSH_ERR",
        "a flushed work request: the queue pair had already failed "
        "(an earlier error, often an async event, put it in the error state): read the "
        "first WARN before it",
    ),
    "8": ("IBV_WC_LOC_ACCESS_ERR", "a local access error: memory registration refused"),
    "9": (
        "IBV_WC_REM_INV_REQ_ERR",
        "the peer found the request invalid (an MTU or size mismatch between the two ends)",
    ),
    "10": (
        "IBV_WC_REM_ACCESS_ERR",
        "the peer refused access to its memory (its buffer "
        "deregistered, or keys of another registration)",
    ),
    "11": ("IBV_WC_REM_OP_ERR", "the peer could not complete the operation"),
    "12": (
        "IBV_WC_RETRY_EXC_ERR",
        "the transport retry counter was exceeded: packets to the peer were never acknowledged",
    ),
    "13": ("IBV_WC_RNR_RETRY_EXC_ERR", "the peer had no receive posted in time"),
}


def _ib_completion(g: Mapping[str, str]) -> Optional[str]:
    """What a failed InfiniBand completion's status (group ``status``) says (libibverbs
    ``enum ibv_wc_status``), with the peer and HCA the line names."""
    name, what = _WC_STATUS.get(g.get("status") or "", (None, None))
    if name is None:
        return None
    return f"status {g['status']} is {name}: {what}; the peer is {g.get('peer')}" + (
        f", on HCA {g['hca']}" if g.get("hca") else ""
    )


# NCCL texts of a peer that went away (ncclRemoteError's string; misc/socket.cc's "Connection
# closed by remote peer"; strerror of ECONNRESET and EPIPE in its "Call to recv from ... failed";
# proxy.cc's "res=6" / "retcode 6": ncclRemoteError = 6 in nccl.h)
_PEER_WENT_AWAY = re.compile(
    r"remote process exited|Connection closed by remote peer|remote peer closed|"
    r"Connection reset by peer|Broken pipe|\b(?:res=|retcode )6\b"
)


_LOOPBACK = re.compile(r"^(?:127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])(?:<\d+>)?$")


def loopback_peer(groups: Mapping[str, str]) -> Optional[str]:
    """MD686's refine: a peer on this host's loopback (``127.0.0.1``, ``localhost``,
    ``::1``) is another rank of this host or this process itself (NCCL's proxy and bootstrap
    connect to their own process too), so when no rank of the host died, something on the
    host closed a local TCP connection; None for any other peer."""
    peer = (groups.get("peer") or "").strip()
    if not _LOOPBACK.match(peer):
        return None
    return (
        f"the peer {peer} is on this host's loopback: another rank of this host, or this "
        "process itself (NCCL's proxy and bootstrap sockets connect to their own process). "
        "If no rank of this host died (a one-process job cannot lose a peer), software on "
        "the host closed the connection: endpoint security or web-filtering software "
        "(stop it or exempt the job), a firewall rule on lo (`iptables -S`, `nft list "
        "ruleset`), or a proxy set for local traffic"
    )


def peer_went_away(groups: Mapping[str, str]) -> Optional[str]:
    """A role hook: :data:`CONSEQUENCE` when the message in group ``msg`` says the peer went
    away (``remote process exited``, ``Connection closed by remote peer``, reset, broken pipe),
    or a trace line's result (group ``res``) is ncclRemoteError (6); :data:`CAUSE` for any
    other text PyTorch printed as NCCL's ``Last error:`` (group ``last``, the scanner's
    reading); else None (the signature's own role)."""
    if groups.get("res") == "6":
        return CONSEQUENCE
    if _PEER_WENT_AWAY.search(groups.get("msg", "") or groups.get("last", "")):
        return CONSEQUENCE
    # PyTorch's "Last error:" text (group ``last``): the reason of the NCCL error above it
    return CAUSE if groups.get("last") else None


def cuda_oom(groups: Mapping[str, str]) -> Optional[str]:
    """Which allocation NCCL made (group ``bytes``) and on which CUDA device (group ``dev``,
    the ``[N]`` of NCCL's line prefix), or None when the line names neither."""
    parts = []
    if groups.get("bytes"):
        parts.append(f"NCCL asked for {int(groups['bytes']):,} bytes of GPU memory")
    if groups.get("dev"):
        parts.append(f"on CUDA device {groups['dev']} of this process (the [N] NCCL prints)")
    return " ".join(parts) or None


def _ipv4_of_gid(gid: str) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address of an IPv4-mapped GID (``::ffff:10.20.5.1``, RoCE v2), else None."""
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return None
    return addr.ipv4_mapped


def modify_qp(groups: Mapping[str, str]) -> Optional[str]:
    """What a failed ``ibv_modify_qp`` says by its errno (groups ``errno`` or ``errno_old``)
    and, for RoCE v2, whether this NIC's GID (``lgid``) and the peer's (``rgid``) lie in
    different /24 subnets: the rails of a rail-optimised fabric (NVIDIA/nccl #2013), or None."""
    errno = groups.get("errno") or groups.get("errno_old") or ""
    step = f" ({groups['curr']} -> {groups['next']})" if groups.get("curr") else ""
    local, remote = _ipv4_of_gid(groups.get("lgid", "")), _ipv4_of_gid(groups.get("rgid", ""))
    parts = []
    if errno == "110":
        parts.append(
            f"the queue pair's move{step} timed out (ETIMEDOUT): the NIC got no answer "
            "resolving the peer's GID to a route, so the two NICs cannot reach each other"
        )
    elif errno == "22":
        parts.append(
            f"the device refused the queue pair's attributes{step} (EINVAL): a GID index that "
            "is not valid for this port (NCCL_IB_GID_INDEX) or a peer GID of another RoCE "
            "version"
        )
    elif errno == "19":
        parts.append(
            f"the device found no usable entry for the queue pair's address{step} (ENODEV): "
            "on RoCE, a GID index whose GID is link-local or of RoCE v1 (index 0 is fe80::, "
            "which NCCL's INFO line shows as 'GID 0 (80FE/...)'), most often forced by "
            "NCCL_IB_GID_INDEX, or in a container an index of a GID it does not see; unset "
            "NCCL_IB_GID_INDEX (NCCL 2.21 and later pick the RoCE v2 IPv4 GID themselves) or "
            "set it to that GID's index (`show_gids`), and upgrade NCCL when it picked the "
            "index itself"
        )
    if local is not None and remote is not None:
        lnet = ipaddress.ip_network(f"{local}/24", strict=False)
        if remote not in lnet:
            parts.append(
                f"this NIC ({groups.get('dev', '?')}, {local}) and the peer's ({remote}) are in "
                "different subnets: on a rail-optimised fabric, where only NICs of one rail "
                "reach each other, NCCL paired NICs of different rails (NCCL_CROSS_NIC=0 "
                "keeps each ring and tree on one rail)"
            )
    return "; ".join(parts) or None


def shm_attach(groups: Mapping[str, str]) -> Optional[str]:
    """What a failed attach to a peer's shared-memory segment says by its error text (group
    ``err``) or number (``errno``), or None."""
    err, errno = groups.get("err", "").lower(), groups.get("errno", "")
    seg = groups.get("seg") or "the segment"
    if groups.get("size") == "0" or not seg.isascii() or not seg.isprintable():
        # a segment of size 0 or a name of garbage bytes: the descriptor was misread
        # (NVIDIA/nccl #2059: a cuMem host descriptor read as a /dev/shm path)
        return (
            f"the segment's name or size is garbage ({ascii(seg)}, size "
            f"{groups.get('size', '?')}): the descriptor the local peer sent was read as "
            "another kind, so the ranks of this host disagree on how they share host memory "
            "(a cuMem host buffer from some ranks, a /dev/shm segment expected by others), "
            "not a missing or full /dev/shm: since NCCL 2.26.3 each rank probes cuMem host "
            "allocation on its own NUMA node and falls back to /dev/shm where it fails (hosts "
            "with memoryless NUMA nodes: NVIDIA/nccl #2190, PR #2388), or "
            "ranks of one host on different NCCL builds; set NCCL_CUMEM_HOST_ENABLE=0 on "
            "every rank (all use /dev/shm) or NCCL_SHM_DISABLE=1, and upgrade NCCL"
        )
    if errno == "2" or "no such file" in err:
        return (
            f"{seg} does not exist for this process (ENOENT): the local peer that created it "
            "is in another /dev/shm (another container, pod or IPC namespace) or died and "
            "removed it"
        )
    if errno == "13" or "permission" in err:
        return (
            f"{seg} belongs to another user (EACCES): the ranks of the host run as different users"
        )
    return None


def address_family(groups: Mapping[str, str]) -> Optional[str]:
    """What the address family of ``ncclSocketInit``'s complaint (group ``family``) says."""
    if groups.get("family") == "0":
        return (
            "family 0 is an empty address (all zeros): the peer's address NCCL received "
            "through the bootstrap was not filled in"
        )
    fam = groups.get("family")
    return (
        f"family {fam} is neither 0 nor an IP family"
        + (" (1 is AF_UNIX, which no socket of NCCL's has)" if fam == "1" else "")
        + ": an address that was never filled in. At init, most often this rank's own: NCCL "
        "found no interface matching NCCL_SOCKET_IFNAME (a name this host does not have) and, "
        "without a warning (NCCL 2.27, NVIDIA/nccl #1837), went on with no address; check "
        "NCCL_SOCKET_IFNAME against `ip -br addr` on this host. At a point-to-point call "
        "(ncclSend/ncclRecv over the network transport), a peer's connection handle read "
        "before it was written: both ranks call ncclSend before ncclRecv outside "
        "ncclGroupStart/ncclGroupEnd, so each waits on a connection the other has not set up "
        "(NVIDIA/nccl #2057); put each send/recv pair in one group, or post them in opposite "
        "orders on the two ranks"
    )


SIGNATURES = (
    # a net plugin that is there but cannot be loaded: NCCL says so at INFO and goes on with
    # its internal transports (src/plugin/net.cc: "NET/Plugin: dlerror=..."; a missing
    # plugin's "cannot open shared object file" is the normal case, not this)
    signature(
        "MD829",
        "nccl.net-plugin-unloadable",
        r"NCCL INFO NET/Plugin ?: (?:dlerror=|Plugin load returned \d+ : )(?P<err>[^\n]*?(?:version `"
        r"(?P<ver>[^']+)' not found|undefined symbol: (?P<sym>\S+)|Symbol not found)[^\n]*)",
        "NCCL found its network plugin (libnccl-net.so: aws-ofi-nccl for EFA, a vendor's "
        "plugin) but could not load it: the plugin needs a symbol or symbol version its "
        "libraries do not have here, so NCCL fell back to its internal transports (IB verbs "
        "or TCP sockets): on EFA that is sockets, far slower, or a failure where the job "
        "needs the fabric.",
        "Read the missing symbol: a version like FABRIC_1.7 is libfabric's, so the libfabric "
        "found first is older than the one the plugin was built against (the EFA installer's "
        "/opt/amazon/efa/lib is older than a plugin from conda or pip): update the EFA "
        "installer, or install the plugin built for this libfabric, or put the matching "
        "libfabric first on LD_LIBRARY_PATH; then check NCCL_DEBUG=INFO says 'NET/OFI' "
        "(or the plugin's name) is in use.",
        "NCCL v2.30.7 src/plugin/net.cc (the plugin's dlopen and its INFO line); "
        "awslabs/awsome-distributed-ai #292 (aws-ofi-nccl 1.9 against an older libfabric)",
        role=EITHER,
        refine=lambda g: (
            f"the plugin needs the symbol version {g['ver']}"
            + (
                ", which is libfabric's: the libfabric loaded is older than the plugin's"
                if g["ver"].startswith("FABRIC_")
                else ""
            )
            if g.get("ver")
            else (f"the plugin needs {g['sym']}" if g.get("sym") else None)
        ),
        examples=(
            "[0] NCCL INFO NET/Plugin : dlerror=/opt/amazon/efa/lib/libfabric.so.1: version "
            "`FABRIC_1.7' not found (required by /venv/lib/libnccl-net.so) No plugin found "
            "(libnccl-net.so), using internal implementation",
        ),
    ),
    signature(
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
        examples=("RuntimeError: [nccl] Required environment variable 'NCCL_HOST_IP' is not set.",),
    ),
    signature(
        "MD648",
        "nccl.bootstrap-connect",
        r"connect\(\) failed after (?P<ms>\d+) milliseconds and (?P<tries>\d+) retries",
        "The NCCL bootstrap could not reach rank 0's NCCL_HOST_IP:NCCL_PORT within "
        "MLX_NCCL_TIMEOUT (default 300000 ms).",
        "Check rank 0 started and NCCL_HOST_IP:NCCL_PORT is reachable from this host: "
        "`nc -vz NCCL_HOST_IP NCCL_PORT` (refused: rank 0 is not listening; a timeout with ping "
        "answering: a firewall drops the port).",
        "MLX 0.29.3 nccl bootstrap",
        causes=[
            ("rank 0 not started or died first", "rank 0's log"),
            ("NCCL_HOST_IP unreachable or firewalled", "nc -z HOST PORT"),
        ],
        role=EITHER,
        examples=(
            "RuntimeError: [Rank 1] connect() failed after 300000 milliseconds and 1500 "
            "retries: Connection refused",
        ),
    ),
    signature(
        "MD649",
        "nccl.bootstrap-socket",
        r"((bind|listen|accept|setsockopt|socket)\(\) failed|lookup failed for host: "
        r"(?P<host>\S+)|\[nccl\] Couldn't create socket)",
        "Rank 0 could not open the NCCL bootstrap socket (or set its options), or a host name "
        "did not resolve.",
        "Free NCCL_PORT (leftover rank) or pick another (--nccl-port); fix the host name.",
        "MLX nccl bootstrap",
        check="MD301",
        causes=[
            ("NCCL_PORT held by a leftover rank", "MD301"),
            ("a host name that does not resolve on this node", "getent hosts NAME"),
        ],
        examples=(
            "RuntimeError: [nccl] bind() failed: Address already in use",
            "RuntimeError: [nccl] lookup failed for host: gpu-node-7",
            "RuntimeError: [nccl] setsockopt() failed: Bad file descriptor",
            "RuntimeError: [nccl] socket() failed: Too many open files",
            "RuntimeError: [nccl] Couldn't create socket (error: 24)",
        ),
    ),
    signature(
        "MD653",
        "nccl.warn",
        r"NCCL WARN (?P<msg>.*)|NCCL INFO (?P<site>[\w/.-]+\.(?:cc|cu|h|cpp)):(?P<at>\d+) -> "
        r"(?P<res>\d+)",
        "NCCL printed a warning (NCCL_DEBUG=WARN or INFO): usually the detailed reason of the "
        "NCCL error that follows. Its init and bootstrap trace lines (NCCL_DEBUG=INFO, "
        "'bootstrap.cc:312 -> 3') follow a failure back up the calls: the rank whose trace "
        "starts first failed first, and the result code names the class (1 CUDA, 2 system, 3 "
        "internal, 4 invalid argument, 5 invalid usage, 6 a peer or the network).",
        "Read it with the NCCL error it explains.",
        "NCCL NCCL_DEBUG; NCCL src/misc/socket.cc, bootstrap.cc, init.cc, shmutils.cc",
        role=EITHER,
        envelope=True,
        refine=nccl_warning,
        classes=CLASSES,
        class_remedy=True,  # what helps for the class the WARN names, then the general advice
        examples=(
            "gpu-node-7:48213:48299 [0] NCCL WARN Error while creating shared memory segment "
            "/dev/shm/nccl-2bX0 (size 9637888)",
            "h1:1234:1240 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: exceeded "
            "retries (20000)",
            "h1:1234:1240 [0] bootstrap.cc:77 NCCL WARN Bootstrap : no socket interface found",
            "h1:1234:1240 [1] init.cc:1234 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 "
            "both on CUDA device 1000",
            # NCCL v2.30.7 src/include/checks.h: INFO_LOC(NCCL_ALL, "-> %d", res)
            "h1:1234:1240 [0] NCCL INFO bootstrap.cc:312 -> 3",
        ),
        role_of=peer_went_away,
        role_note="A warning that says the peer went away (Connection closed by remote peer, "
        "reset, broken pipe, a proxy operation that ended in ncclRemoteError: res=6), or a "
        "trace line with result 6, is a consequence. Any other warning PyTorch prints as "
        "NCCL's 'Last error:' is the reason of the NCCL error above it: a cause.",
    ),
    signature(
        "MD650",
        "nccl.error",
        r"NCCL (?:error|failure) (?:in: )?(?P<file>[^\s:,']+):(?P<line>\d+)(?: '|, )(?P<msg>[^']*?)"
        r"(?:'|, NCCL version (?P<version>[\w.+-]+)|$)"
        # PyTorch's sentence under it ("ncclInternalError: Internal check failed.") and its
        # "NCCL Error 2: unhandled system error" (c10d's C10D_NCCL_CHECK)
        r"|\b(?P<result>nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|"
        r"InvalidUsage|RemoteError)): (?P<detail>[A-Z].*)"
        r"|NCCL Error (?P<num>\d): (?P<text>.+)"
        # vLLM's pynccl wrapper ("RuntimeError: NCCL error: invalid usage (run with ..."),
        # CuPy's ("NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run ...")
        r"|(?:NCCL error: |NCCL_ERROR_[A-Z_]+: )(?P<said>(?:unhandled|internal|invalid|remote|"
        r"NCCL operation|timeout)[^\n]*)"
        # XLA's (JAX): "INTERNAL: NCCL operation ncclAllReduce( ... ) failed: invalid argument
        # (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry ..."
        r"|NCCL operation (?P<op>nccl\w+)\(.*?\) failed: (?P<xla>[a-z][a-z ]*[a-z])"
        # PyTorch's DistBackendError cut before its "NCCL error in:" (a pasted excerpt):
        # "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please
        # report this issue to the NCCL developers, NCCL version 2.19.3"
        r"|ProcessGroupNCCL\.cpp:\d+, (?P<pmsg>[a-z][^,]*), NCCL version (?P<pversion>[\w.+-]+)",
        "An NCCL call failed: MLX prints it and exits with status 1 (no Python exception); "
        "nccl-tests prints 'Test NCCL failure FILE:LINE 'RESULT / LAST WARN''; PyTorch raises "
        "it as DistBackendError ('NCCL error in: FILE:LINE, MESSAGE, NCCL version X') with the "
        "result's name under it ('ncclInternalError: Internal check failed.'). The result "
        "says which class of call failed, not which call: an NCCL WARN line before it does.",
        "Read what the result means (after 'Here:'). Without an NCCL WARN line before it, rerun every "
        "rank with NCCL_DEBUG=WARN: the WARN line names the call that failed; 'remote "
        "process exited' means another rank failed first.",
        "MLX nccl backend; NCCL v2.30.7 ncclGetErrorString (src/init.cc); nccl-tests "
        "src/common.h (NCCLCHECK); PyTorch NCCLUtils (getNcclErrorDetailStr)",
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
        examples=(
            "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'unhandled system error (run "
            "with NCCL_DEBUG=INFO for details)'",
            "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there "
            "was a network error'",
            "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details)'",
            # nccl-tests common.h NCCLCHECK (NVIDIA/nccl-tests #166)
            "node1: Test NCCL failure common.cu:1279 'internal error - please report this "
            "issue to the NCCL developers / '",
            # PyTorch's ProcessGroupNCCL (NVIDIA/nccl #1235, #1267)
            "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
            "distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this "
            "issue to the NCCL developers, NCCL version 2.19.3",
            # PyTorch's sentence under it (NVIDIA/nccl #1410, #1837)
            "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.",
            "[trainer0|0]:ncclInternalError: Internal check failed.",
            # nccl-tests with NCCL 2.13+: the result, then NCCL's last error, empty here
            # (NVIDIA/nccl-tests #275, #322)
            "HCA-14: Test NCCL failure common.cu:1204 'unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details) / '",
            "RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL "
            "developers",
            # vLLM's pynccl_wrapper.py NCCL_CHECK (vllm-project/vllm #16978), CuPy's NcclError
            "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)",
            "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system "
            "error (run with NCCL_DEBUG=INFO for details)",
        ),
        refine=nccl_result,
        classes=RESULT_CLASSES,
        role_of=result_role,
        role_note="'remote process exited or there was a network error' (ncclRemoteError) is "
        "another rank's failure seen from here: a consequence.",
    ),
    signature(
        "MD651",
        "cuda.out-of-memory",
        # not NCCL's NVLS multicast bind ('CUDA error 2 'out of memory'': the NVSwitches'
        # multicast objects, MD653's nccl.nvls-multicast class)
        r"^(?!.*NVLS\) Multicast).*?(?:CUDA error|\bcu[A-Za-z]+(?:\([^)]*\))? failed:).*out of memory|"
        # PyTorch's caching allocator: "torch.OutOfMemoryError: CUDA out of memory. Tried to"
        r"Error: CUDA out of memory",
        "The GPU ran out of memory.",
        "Use a smaller batch or model shard; check no other process holds the GPU (nvidia-smi).",
        "CUDA runtime cudaErrorMemoryAllocation",
        causes=[
            ("model or batch too large for the GPU", "nvidia-smi memory at the limit"),
            ("another process holds GPU memory", "nvidia-smi lists it"),
        ],
        examples=(
            "CUDA error: out of memory at /mlx/backend/cuda/allocator.cpp:88",
            # MLX v0.32.1 mlx/backend/cuda/utils.cpp: "{} failed: {}"
            "RuntimeError: cudaMallocAsync(&data, size, stream) failed: out of memory",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has "
            "a total capacity of 79.15 GiB of which 3.44 MiB is free.",
        ),
    ),
    signature(
        "MD652",
        "cuda.error",
        # a text of the CUDA runtime's table is cuda.failure's (MD830, signatures/cuda.py), and
        # NCCL's NVLS multicast bind is its class's (nccl.nvls-multicast: any CUDA error there
        # concerns the NVSwitches' multicast objects)
        r"^(?!.*NVLS\) Multicast).*?"
        r"(?:CUDA error|\bcu[A-Za-z]+(?:\([^)]*\))? failed:)(?!.*out of memory)(?!:? ?"
        + KNOWN
        + ")",
        "A CUDA call failed; MLX exits with status 1 after printing it.",
        "Read the CUDA error text; check the driver and GPU health (nvidia-smi, dmesg Xid).",
        "CUDA runtime error strings",
        causes=[
            ("GPU fault (illegal address, Xid)", "dmesg | grep -i xid"),
            ("driver and CUDA runtime do not match", "nvidia-smi vs the wheel's CUDA"),
        ],
        # texts of the CUDA runtime's table are cuda.failure's (MD830): these are not in it
        examples=(
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm("
            " handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
            "RuntimeError: cublasLtMatmul(handle, desc, &alpha) failed: CUBLAS_STATUS_NOT_SUPPORTED",
        ),
    ),
    signature(
        "MD684",
        "cuda.no-device",
        r"no CUDA-capable device is detected",
        "The process saw no GPU: CUDA_VISIBLE_DEVICES names a GPU this host does not have (each "
        "nccl rank gets the GPU of its index among the host's ranks, as mlx.launch sets it), "
        "or no GPU is visible to it at all (container without GPUs, driver not loaded).",
        "Put at most as many ranks on the host as it has GPUs (nvidia-smi -L), or expose its "
        "GPUs to the process (docker --gpus all).",
        "CUDA runtime cudaErrorNoDevice; MLX v0.32.4 mlx.launch (CUDA_VISIBLE_DEVICES per rank)",
        check="MD111",
        causes=[
            ("more ranks on the host than GPUs", "nvidia-smi -L against the hostfile"),
            ("GPUs not exposed to the process", "nvidia-smi inside the container"),
        ],
        examples=(
            "ImportError: cudaMallocManaged(&data, size) failed: no CUDA-capable device is "
            "detected",
        ),
    ),
    signature(
        "MD654",
        "nccl.unsupported-dtype",
        r"Unknown or unsupported dtype",
        "The NCCL backend does not support this dtype (bool, int16, uint16, complex64).",
        "Cast to a supported dtype before the collective.",
        "MLX nccl backend",
        examples=("RuntimeError: [nccl] Unknown or unsupported dtype",),
    ),
    # NCCL's own result strings (ncclGetErrorString) inside an `NCCL error` line, named apart
    # so that a rank whose only complaint is a lost peer (MD683) is read as a consequence.
    signature(
        "MD681",
        "nccl.system-error",
        r"unhandled system error",
        "A system call inside NCCL failed (socket, shared memory, /dev/shm too small in a "
        "container, a limit on open files or locked memory).",
        "Rerun with NCCL_DEBUG=WARN to see the call; in containers give /dev/shm room "
        "(docker --shm-size, or --ipc=host); check ulimit -n and -l.",
        "NCCL ncclSystemError",
        role=EITHER,  # the summary of a failure the WARN lines before it explain
        examples=(
            "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'unhandled system error (run "
            "with NCCL_DEBUG=INFO for details)'",
        ),
    ),
    signature(
        "MD682",
        "nccl.cuda-error",
        r"unhandled cuda error",
        "A CUDA call inside NCCL failed (GPU out of memory, a GPU in an exclusive compute mode "
        "already used by another process, peer access refused; at init on every run, most "
        "often an NCCL built for another CUDA version than the driver: NVIDIA/nccl-tests #6).",
        "Run `meshdoctor check` on that host (GPU compute mode, memory held, health); rerun "
        "with NCCL_DEBUG=WARN to see the CUDA error.",
        "NCCL ncclUnhandledCudaError",
        role=EITHER,  # the summary of a failure the WARN lines before it explain
        examples=(
            "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details)'",
        ),
    ),
    signature(
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
        examples=(
            "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there "
            "was a network error'",
        ),
    ),
    signature(
        "MD686",
        "nccl.peer-closed",
        r"(?:NET/Socket|Net|Bootstrap|socketProgress\w*|ncclOsSocketProgressOpt)\s*:.*?"
        r"(?:Connection closed by remote peer|Connection reset by peer|remote peer closed|"
        r"Broken pipe)\s*(?P<peer>[\w.:-]+(?:<\d+>)?)?",
        "NCCL's socket to a peer (bootstrap or data) was closed or reset by the other end: the "
        "peer rank died, or its host or link went away. The address it names is the peer.",
        "Find the rank at that address and read why it ended (its exit status, stderr); if no "
        "rank died, check the link between the two hosts (cable, switch port, firewall).",
        "NCCL socket code (misc/socket.cc: 'Connection closed by remote peer', 'Call to recv "
        "from ... failed' in 2.12-2.28; os/linux.cc in 2.29+)",
        role=CONSEQUENCE,
        refine=loopback_peer,
        causes=[
            ("the peer rank died or was killed first", "its exit status (-9, 1) and stderr"),
            ("the link or host of the peer went away", "no rank died; the peer's host is down"),
            (
                "software on the host that closes local TCP connections (endpoint security or "
                "web filtering, a firewall rule on lo, a transparent proxy)",
                "the peer is 127.0.0.1 or localhost and no rank died (a one-process job)",
            ),
            (
                "on NCCL before 2.27.3, another program's connection to the bootstrap port (a "
                "port scanner, a health probe) that closed before sending NCCL's magic: init "
                "fails with a remote error (NVIDIA/nccl #1612; 2.27.3 ignores it)",
                "no rank died; the trace lines pass through bootstrap.cc and init.cc ('-> 6'); "
                "the peer address is not one of the job's hosts or ranks",
            ),
        ],
        examples=(
            "gpu-node-7:48213:48299 [0] NCCL WARN Net : Connection closed by remote peer "
            "10.0.0.8<40123>",
            "node2:1234:1300 [1] misc/socket.cc:47 NCCL WARN socketProgress: Connection closed "
            "by remote peer node3<52314>",
            "NCCL WARN Bootstrap : Connection reset by peer 192.168.1.20<33075>",
            # NCCL 2.12-2.28 misc/socket.cc (EPIPE and ECONNRESET both under "recv from")
            "node2:1234:1300 [1] NCCL WARN socketProgressOpt: Call to recv from "
            "10.0.0.8<40123> failed : Broken pipe",
            # NCCL 2.29+ os/linux.cc (a send the peer reset)
            "node2:1234:1300 [1] NCCL WARN ncclOsSocketProgressOpt: Call to send to "
            "10.0.0.8<40123> failed : Connection reset by peer",
        ),
    ),
    signature(
        "MD685",
        "nccl.ib-completion-error",
        r"NET/IB(?:/GIN)?\s*:\s*Got completion from peer (?P<peer>\S+) with (?:error |status=)"
        r"(?:[^(\n]*\()?(?P<status>\d+)\)?[^\n]*?(?:hca (?P<hca>\S+))?$",
        "An InfiniBand/RoCE work request to that peer failed; its status (libibverbs' "
        "ibv_wc_status) says how: 12 IBV_WC_RETRY_EXC_ERR (the transport retry counter was "
        "exceeded: the packets were never acknowledged), 13 the peer had no receive posted, 5 "
        "a request flushed because the queue pair had already failed (read the error before "
        "it), 1, 2 and 9 the two ends' sizes or MTUs disagree. The line names the peer and, in "
        "NCCL 2.12+, this host's HCA.",
        "Check the link between this HCA and the peer: port state and errors "
        "(`ibv_devinfo`, `ethtool -S`), the cable and switch port, and RoCE's lossless "
        "settings (PFC/ECN) on both ends; a peer that died first shows in its own log. On "
        "RoCE (a localGid of '::ffff:a.b.c.d'), a retry exceeded from the first transfer is "
        "most often the GID index: NCCL_IB_GID_INDEX must select the RoCE v2 GID of the "
        "address the hosts route between, the same on every host (`show_gids`, or "
        "`cat /sys/class/infiniband/HCA/ports/1/gid_attrs/types/N`), and the hosts' VLAN/"
        "subnet must match.",
        "libibverbs ibv_wc_status (IBV_WC_RETRY_EXC_ERR = 12); NCCL net_ib.cc; NCCL "
        "environment variables (NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM)",
        causes=[
            ("a flapping or faulty link, cable or switch port", "port errors, PORT_DOWN events"),
            (
                "RoCE with a GID index that selects RoCE v1, a link-local GID or another "
                "subnet's address on one of the hosts (NCCL_IB_GID_INDEX unset or different)",
                "every transfer fails from the first one; localGid/remoteGids of different "
                "subnets, or an fe80:: GID",
            ),
            ("RoCE without a lossless fabric (no PFC/ECN)", "drops under load only"),
            (
                "traffic between two NICs of the same host over the network (NCCL sends "
                "intra-node peers over NET/IB when P2P and SHM do not reach them, and a "
                "same-host NIC-to-NIC RoCE path is often broken)",
                "localGid and remoteGid both addresses of this host (`ip addr`); "
                "NCCL_NET_DISABLE_INTRA=1 makes it pass",
            ),
            ("the peer process died mid-transfer", "the peer's log ends earlier"),
        ],
        role=EITHER,  # a rank that dies mid-transfer leaves its peers exactly this completion
        refine=_ib_completion,
        examples=(
            "node1:2345:2400 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<55034> "
            "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 "
            "remoteGids::ffff:10.0.0.2 hca mlx5_0",
            "NCCL WARN NET/IB : Got completion from peer 10.1.2.3<50123> with error 12, opcode "
            "129, len 0, vendor err 129 (Recv)",
            # NCCL v2.30.7 src/transport/net_ib/p2p.cc: status=%s(%d), ibv_wc_status_str first
            "node1:2345:2400 [0] NCCL WARN NET/IB: Got completion from peer 10.0.0.2<55034> "
            "with status=transport retry counter exceeded(12) opcode=Recv(128) vendor_err=129 "
            "localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca mlx5_0",
        ),
    ),
    signature(
        "MD671",
        "nccl.send-recv-unsupported",
        r"\[nccl\] (?P<dir>Send|Recv) not supported in NCCL backend",
        "MLX's nccl backend has no point-to-point send/recv (MLX 0.32.x): only collectives.",
        "Use collectives (all_sum, all_gather) on nccl, or the ring backend for send/recv.",
        "MLX distributed/nccl/nccl.cpp (v0.32.1)",
        examples=(
            "RuntimeError: [nccl] Send not supported in NCCL backend.",
            "RuntimeError: [nccl] Recv not supported in NCCL backend.",
        ),
    ),
    signature(
        "MD800",
        "nccl.cuda-oom",
        r"(?:\[(?P<dev>\d+)\] (?:[\w/.-]+:\d+ )?NCCL WARN )?(?:Cuda failure (?:\d+ )?'out of "
        r"memory'|Failed to CUDA (?:calloc(?: async)?|malloc|host alloc) (?P<bytes>\d+) bytes)",
        "A CUDA allocation inside NCCL failed for lack of GPU memory. NCCL allocates its "
        "buffers (per peer and channel, NCCL_BUFFSIZE each) when the communicator is set up "
        "and when a peer first connects (the proxy's Setup), so a GPU the job's model already "
        "fills leaves it no room; the proxy's 'Failed to execute operation Setup' and the "
        "peers' closed sockets and internal errors that follow are its consequences.",
        "Leave GPU memory for NCCL on that GPU: a smaller per-GPU model or batch (more "
        "sharding or offload), create the process group and run one collective before "
        "loading the model, no other process on the GPU (`nvidia-smi`); then lower "
        "NCCL_BUFFSIZE or NCCL_MAX_NCHANNELS (NCCL's environment variables).",
        "NCCL v2.30.7 src/include/alloc.h (ncclCudaCalloc), src/include/checks.h (CUDACHECK); "
        "NCCL environment variables (NCCL_BUFFSIZE); NVIDIA/nccl #1235",
        check="MD112",
        causes=[
            (
                "the job's model, optimizer state and activations fill the GPU",
                "only with the larger model; nvidia-smi at the limit during the job",
            ),
            ("another process holds memory on the GPU", "nvidia-smi lists it"),
        ],
        refine=cuda_oom,
        examples=(
            "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of "
            "memory'",
            "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc "
            "6291456 bytes",
            # NCCL 2.19+ src/include/cudawrap.h (CUCHECK) and PyTorch's "Last error:" line
            "NCCL WARN Cuda failure 2 'out of memory'",
            "[rank3]: Failed to CUDA calloc async 6291456 bytes",
        ),
    ),
    signature(
        "MD801",
        "nccl.ib-modify-qp",
        r"Call to ibv_modify_qp failed with (?:error (?P<err_old>[^,\n]*?) errno "
        r"(?P<errno_old>\d+)|(?P<errno>\d+) (?P<err>[^,]*), on dev (?P<dev>[^,\s]+), curr "
        r"state (?P<curr>\w+), next state (?P<next>\w+)(?:, local GID index (?P<gidx>\d+), "
        r"local GID (?P<lgid>[^,\s]+), remote GID (?P<rgid>[^,\s]+))?)",
        "NCCL could not move a queue pair of its InfiniBand/RoCE connection to a peer to its "
        "next state (INIT -> RTR, ready to receive, is where RoCE resolves the peer's GID to "
        "a route; RTR -> RTS then sends). The line names this NIC, its GID and the peer's: "
        "errno 110 (timed out) is two NICs that cannot reach each other, on a rail-optimised "
        "fabric NICs of different rails (different subnets); errno 22 a GID index or "
        "attribute the port refuses.",
        "On a rail-optimised fabric keep each ring and tree on one rail: NCCL_CROSS_NIC=0 "
        "(NCCL's environment variables), or route between the rails' subnets; check that "
        "the two NICs reach each other (`ibv_rc_pingpong -d DEV -g GIDX` on both, "
        "the peer's address as the client's argument). For errno 22 set NCCL_IB_GID_INDEX to the port's "
        "RoCE v2 IPv4 GID (`show_gids`). A reporter of NVIDIA/nccl #2013 saw the cross-rail "
        "timeout go with NCCL 2.29.",
        "NCCL v2.30.7 src/misc/ibvwrap.cc (wrap_ibv_modify_qp, ibvModifyQpLog), v2.21.5 "
        "(IBV_INT_CHECK_RET_ERRNO); NCCL environment variables (NCCL_CROSS_NIC); "
        "NVIDIA/nccl #2013",
        causes=[
            (
                "NICs of different rails paired on a rail-optimised fabric",
                "errno 110, local and remote GIDs in different subnets; ring all-reduce "
                "works, other patterns (gather, all-to-all) fail",
            ),
            (
                "no route or neighbour between the two NICs",
                "errno 110, `ibv_rc_pingpong` between them fails",
            ),
            ("a GID index the port does not have", "errno 22; `show_gids`"),
            (
                "a link-local or RoCE v1 GID forced by NCCL_IB_GID_INDEX on RoCE",
                "errno 19 (No such device); NCCL INFO 'GID 0 (80FE/...)'",
            ),
        ],
        refine=modify_qp,
        examples=(
            "[2026-03-13 22:26:02] host-01:118842:119061 [5] ibvwrap.c:262 NCCL WARN Call to "
            "ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_5:1, curr state "
            "INIT, next state RTR, local GID index 3, local GID ::ffff:10.20.5.1, remote GID "
            "::ffff:10.20.2.7",
            # NCCL 2.18-2.21 src/misc/ibvwrap.cc IBV_INT_CHECK_RET_ERRNO
            "node1:1:2 [0] NCCL WARN Call to ibv_modify_qp failed with error Connection timed "
            "out errno 110",
        ),
    ),
    signature(
        "MD802",
        "nccl.shm-attach",
        r"Error while attaching to shared memory segment (?P<seg>\S+)(?: \(size (?P<size>\d+)\))?(?:, "
        r"error: (?P<err>[^(\n]*?)(?: \((?P<errno>\d+)\))?)?\s*$",
        "A rank could not open a shared-memory segment (/dev/shm/nccl-*) that a local peer "
        "rank created for their intra-host (SHM) transport: attaching failed, not creating. "
        "ENOENT (No such file or directory) means the segment is not there for this process: "
        "the ranks of the host do not share one /dev/shm (separate containers, pods or IPC "
        "namespaces), or the peer died and removed it. A '/dev/shm too small' failure happens "
        "when creating a segment instead.",
        "Run the ranks of a host in one container or pod, or share the IPC namespace and "
        "/dev/shm (docker --ipc=host); read whether a local peer rank died first; "
        "NCCL_SHM_DISABLE=1 avoids the SHM transport. NVIDIA/nccl #1589's reporter went back "
        "to NCCL 2.21.5.",
        "NCCL v2.30.7 src/os/linux.cc, v2.21.5 src/misc/shmutils.cc ('Error while %s shared "
        "memory segment'); NCCL troubleshooting (shared memory); NVIDIA/nccl #1589",
        causes=[
            (
                "the host's ranks do not share /dev/shm (containers, pods, IPC namespaces)",
                "ENOENT; the ranks run in different containers",
            ),
            ("the local peer that made the segment died first", "its log ends earlier"),
            ("the ranks run as different users", "EACCES (13)"),
        ],
        refine=shm_attach,
        examples=(
            "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to "
            "shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file "
            "or directory (2)",
            "[rank0]: Error while attaching to shared memory segment /dev/shm/nccl-glnlGK "
            "(size 14156128), error: No such file or directory (2)",
        ),
    ),
    signature(
        "MD803",
        "nccl.address-family",
        r"connecting to address\s+(?:(?P<addr>\S+)\s+)?with family (?P<family>\d+) is neither "
        r"AF_INET",
        "NCCL was handed an address it cannot connect to (ncclSocketInit). An empty one "
        "(family 0) came from another rank through the bootstrap: the ranks did not "
        "understand each other's bootstrap messages, most often ranks running different NCCL "
        "versions (NVIDIA/nccl #1267: 2.20.5 on one node, 2.19.3 on the others), else a peer "
        "that failed before sending its address. Any other number is uninitialised memory: "
        "an address never filled in, most often because no interface matched "
        "NCCL_SOCKET_IFNAME on this host (NVIDIA/nccl #1837).",
        "Family 0: install the same NCCL (and the same PyTorch or MLX build) on every host: "
        "compare the 'NCCL version' line each rank prints (NCCL_DEBUG=INFO); then read the "
        "other ranks' logs for an earlier failure. Another number: set NCCL_SOCKET_IFNAME to "
        "an interface every host has (`ip -br addr`; a prefix list such as `eth,en`, or "
        "`^lo,docker` to exclude), or unset it.",
        "NCCL v2.30.7 src/misc/socket.cc (ncclSocketInit, ncclFindInterfaces); "
        "NVIDIA/nccl #1267, #1837",
        role=EITHER,
        causes=[
            ("different NCCL versions on the hosts", "family 0; the 'NCCL version' lines differ"),
            (
                "NCCL_SOCKET_IFNAME names an interface this host does not have",
                "a family other than 0, 2 or 10; 'NCCL_SOCKET_IFNAME set to X' in the log "
                "and no 'Bootstrap : Using X' line",
            ),
            ("a peer that failed before it sent its address", "an earlier error in its log"),
        ],
        refine=address_family,
        examples=(
            "[rank0]: ncclSocketInit: connecting to address  with family 0 is neither "
            "AF_INET(2) nor AF_INET6(10)",
            "node1:1:2 [0] misc/socket.cc:716 NCCL WARN ncclSocketInit: connecting to address "
            "with family 0 is neither AF_INET(2) nor AF_INET6(10)",
        ),
    ),
    # -- the program's collectives differ between ranks; an injected graph file (MD832, MD833)
    signature(
        "MD832",
        "nccl.collective-mismatch",
        r"Mismatched collective detected, please check your collective calls at and around "
        r"rank (?P<rank>\d+)|Detected mismatch between collectives on ranks\. Rank "
        r"(?P<ra>\d+) is running collective: (?P<ca>.+?), but Rank (?P<rb>\d+) is running "
        r"(?:inconsistent )?collective",
        "The ranks are not issuing the same collective: NCCL's kernels found that the peers "
        "of a collective disagree on it (NCCL WARN 'Mismatched collective detected ... at and "
        "around rank R', then ncclInvalidUsage), or PyTorch's collective check "
        "(TORCH_DISTRIBUTED_DEBUG=DETAIL) compared the ranks' fingerprints. Different tensor "
        "sizes or dtypes on different ranks, or collectives enqueued in a different order (a "
        "rank-dependent code path): a bug of the program, not of the network; left alone it "
        "hangs or corrupts the result.",
        "Look at the code path around the rank named: every rank must call the same "
        "collectives in the same order with the same shapes and dtypes (no collective under "
        "an `if rank == ...`, the same number of batches on every rank); compare the ranks' "
        "sequences with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL on all ranks (PyTorch: "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL names each rank's collective and shape).",
        "NCCL v2.30.7 src/init.cc (ncclDevAssertedMismatch: 'Mismatched collective "
        "detected'); PyTorch ProcessGroupWrapper ('Detected mismatch between collectives on "
        "ranks'); NVIDIA/nccl #296 (maintainer: tensors of different sizes or collectives "
        "enqueued in different orders at different ranks)",
        causes=[
            (
                "different tensor sizes or dtypes on different ranks",
                "NCCL_DEBUG_SUBSYS=COLL: the same opCount with different counts or datatypes",
            ),
            (
                "collectives called in a different order, or one rank calling one more",
                "a rank-dependent branch or an uneven number of batches per rank",
            ),
        ],
        refine=lambda g: (
            f"NCCL names rank {g['rank']} and its neighbours"
            if g.get("rank")
            else f"rank {g['ra']} runs {g['ca']} while rank {g['rb']} runs another collective"
            if g.get("ra")
            else None
        ),
        examples=(
            # NVIDIA/nccl #296
            "init.cc:1247 NCCL WARN Mismatched collective detected, please check your "
            "collective calls at and around rank 39. You can use NCCL_DEBUG=INFO and "
            "NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
            "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
            "collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, "
            "TensorShape=[1024], TensorDtypes=Float), but Rank 1 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=12, OpType=ALLGATHER, TensorShape=[1024], "
            "TensorDtypes=Float).",
        ),
    ),
    signature(
        "MD837",
        "nccl.watchdog-timeout",
        r"Watchdog caught collective operation timeout:?(?: WorkNCCL\((?:SeqNum=(?P<seq>\d+), "
        r"OpType=(?P<op>\w+))?(?:.*?Timeout\(ms\)=(?P<limit>\d+)\) ran for (?P<ms>\d+))?)?"
        # PyTorch 2.4+'s watchdog lines: "[PG ID 2 PG GUID 3 Rank 3] Exception (either an error
        # or timeout) detected by watchdog at work: 32, last enqueued NCCL work: 32, last
        # completed NCCL work: 31." and "... Timeout at NCCL work: 32, last enqueued ..."
        r"|(?:Exception \(either an error or timeout\) detected by watchdog at|Timeout at NCCL) "
        r"work: (?P<work>\d+), last enqueued NCCL work: (?P<enq>\d+), last completed NCCL work: "
        r"(?P<done>\d+)",
        "PyTorch's NCCL watchdog: a collective on this rank did not complete within the "
        "process group's timeout, so the watchdog aborted the communicator and the process. "
        "The timeout is the messenger: the collective hung, because a peer never entered it "
        "or a transport stopped moving data.",
        "Find why the collective never completed, not a longer timeout: compare the SeqNum "
        "and OpType every rank's watchdog names (a rank with a lower SeqNum, another OpType, "
        "or no watchdog line fell behind or died first: read its log); rerun with "
        "TORCH_NCCL_DUMP_ON_TIMEOUT=1 and TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (PyTorch's flight "
        "recorder) for each rank's last collectives. Under CUDA graphs (vLLM, SGLang) try "
        "eager mode or NCCL_GRAPH_MIXING_SUPPORT=0; on one host NCCL_P2P_DISABLE=1 tests "
        "peer-to-peer; a hang that settings only postpone points at the NCCL build: try "
        "another NCCL release.",
        "PyTorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the watchdog's 'Watchdog "
        "caught collective operation timeout'); PyTorch flight recorder (TORCH_NCCL_TRACE_"
        "BUFFER_SIZE, TORCH_NCCL_DUMP_ON_TIMEOUT); NCCL environment variables "
        "(NCCL_GRAPH_MIXING_SUPPORT, NCCL_P2P_DISABLE); vllm-project/vllm #2770",
        role=EITHER,  # a survivor's watchdog fires after the rank that died or lagged
        causes=[
            (
                "a rank that never entered the collective: it died, hung earlier, or took "
                "another branch (collectives called in a different order or number)",
                "the ranks' watchdog lines name different SeqNum or OpType, or one rank has none",
            ),
            (
                "NCCL work captured in CUDA graphs mixed with uncaptured NCCL calls on one "
                "communicator (serving engines with CUDA graphs): a CUDA-level deadlock",
                "only with CUDA graphs on; eager mode or NCCL_GRAPH_MIXING_SUPPORT=0 avoids it",
            ),
            (
                "a transport that stopped moving data: peer-to-peer over PCIe rerouted by "
                "ACS or an IOMMU, a failing network link",
                "the first collective already hangs; NCCL_P2P_DISABLE=1 (one host) or "
                "NCCL_IB_DISABLE=1 (across hosts) makes it pass",
            ),
            (
                "a bug of the NCCL build in use on this platform",
                "other settings only change when it hangs; another NCCL release does not hang",
            ),
        ],
        refine=lambda g: (
            f"{g['op']} (SeqNum {g['seq']})"
            + (
                f" ran {int(g['ms']) // 1000} s against a {int(g['limit']) // 1000} s timeout"
                if g.get("ms") and g.get("limit")
                else ""
            )
            + (
                "; 600 s is PyTorch's default: when the job set another timeout, this "
                "collective ran on a process group created without it (FSDP's HYBRID_SHARD "
                "groups, a DeviceMesh's, a new_group() without timeout=): pass the timeout "
                "to that group too"
                if g.get("limit") == "600000"
                else ""
            )
            if g.get("op")
            else None
        ),
        examples=(
            "[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20518, "
            "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800270 milliseconds",
            "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(S",
            "[Rank 1] Watchdog caught collective operation timeout:",
            "[rank3]:[E227 16:30:43.526301625 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 "
            "Rank 3] Timeout at NCCL work: 32, last enqueued NCCL work: 32, last completed NCCL "
            "work: 31.",
        ),
    ),
    signature(
        "MD833",
        "nccl.graph-file-device",
        r"NCCL WARN XML Import Channel : dev (?P<dev>\d+) not found",
        "NCCL was given a ring/tree graph to use (an XML file named by NCCL_GRAPH_FILE) that "
        "names a GPU this communicator does not have: the graph was made for another set of "
        "GPUs (another GPU count, -g 4 where the job runs 2 or 3), so NCCL cannot place its "
        "channels and init fails with a system error. NCCL reads NCCL_GRAPH_FILE from the "
        "environment and from its configuration files (NCCL_CONF_FILE, ~/.nccl.conf, "
        "/etc/nccl.conf), so the setting may not be in the job's environment at all.",
        "Find where NCCL_GRAPH_FILE (and NCCL_TOPO_FILE) is set: the environment, "
        "NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf (NCCL_DEBUG=INFO prints "
        "'NCCL_GRAPH_FILE set by environment to ...'); remove NCCL_GRAPH_FILE, or give one "
        "made for these GPUs. Keep NCCL_TOPO_FILE only where it describes the real topology "
        "(the VM images that ship one).",
        "NCCL v2.30.7 src/graph/xml.cc (ncclTopoGetGraphFromXmlSub: 'XML Import Channel : dev "
        "%d not found'), src/graph/search.cc (NCCL_GRAPH_FILE), src/misc/param.cc (the "
        "configuration files); NVIDIA/nccl #1008 (NCCL_GRAPH_FILE set in /etc/nccl.conf)",
        causes=[
            (
                "NCCL_GRAPH_FILE set in /etc/nccl.conf or ~/.nccl.conf for another GPU count",
                "only some GPU counts fail (-g 4 works, -g 2 fails); `grep NCCL_ /etc/nccl.conf "
                "~/.nccl.conf`",
            ),
            ("NCCL_GRAPH_FILE exported for another machine", "`env | grep NCCL_GRAPH_FILE`"),
        ],
        refine=lambda g: f"the graph names device {g['dev']}" if g.get("dev") else None,
        examples=("node1:648288:648306 [0] NCCL WARN XML Import Channel : dev 3 not found.",),
    ),
    signature(
        "MD835",
        "nccl.kernel-shared-memory",
        r"NCCL (?:INFO|WARN) (?:cudaArch (?P<arch>\d+) )?ncclMaxSharedMem (?P<need>\d+) exceeds "
        r"device/fn maxSharedMem (?P<max>\d+)",
        "NCCL's kernels ask for more shared memory per block than this GPU gives a kernel: "
        "this NCCL release does not support this GPU (NCCL 2.25.x on Blackwell GPUs of compute "
        "capability 12.0, the GeForce RTX 50 series: 82240 bytes asked, 79856 allowed), so its "
        "first kernel launch fails (CUDA 'invalid argument', ncclSystemError) or the job stops "
        "in init.",
        "Upgrade NCCL to a release that supports this GPU (2.26.2 or later for the RTX 50 "
        "series: `pip install -U nvidia-nccl-cu12`, or the framework build that bundles it), "
        "then check which libnccl the job loads: the 'NCCL version' line NCCL_DEBUG=INFO "
        "prints (a system libnccl found first on LD_LIBRARY_PATH counts).",
        "NCCL v2.30.7 src/enqueue.cc (ncclInitKernelsForDevice: 'cudaArch %d ncclMaxSharedMem "
        "%d exceeds device/fn maxSharedMem %zu', ncclSystemError); NCCL 2.26.2 release notes "
        "(shared memory usage on recent Blackwell GPUs fixed); NVIDIA/nccl-tests #287",
        refine=lambda g: (
            f"NCCL asks {g['need']} bytes of shared memory per kernel, the GPU allows {g['max']}"
            if g.get("need")
            else None
        ),
        examples=(
            "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn "
            "maxSharedMem 79856",
            "node:1:2 [0] NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn "
            "maxSharedMem 79856",
        ),
    ),
    signature(
        "MD847",
        "nccl.undefined-symbol",
        r"(?:rror|ailed)[^\n]{0,400}?undefined symbol: (?P<sym>p?nccl\w+)",
        "A library built against NCCL (PyTorch's libtorch_cuda.so, CuPy, vLLM's kernels) "
        "found a libnccl.so.2 that lacks one of its NCCL functions: the loader took another, "
        "older NCCL than the one it was built with (a second NCCL wheel for another CUDA "
        "major, a system libnccl on LD_LIBRARY_PATH, an older wheel pinned by another "
        "package), so the import fails before any rank starts.",
        'Find the libnccl that loads (`LD_DEBUG=libs python -c "import torch" 2>&1 | grep '
        "nccl`) and keep only the NCCL the build needs: one nvidia-nccl-cu* wheel, the one of "
        "the build's CUDA (`pip list | grep nccl`), no other libnccl ahead of it on "
        "LD_LIBRARY_PATH; or reinstall the framework so it brings its own.",
        "glibc's dynamic loader ('undefined symbol: NAME'); the nvidia-nccl-cu12/-cu13 wheels "
        "(nvidia/nccl/lib/libnccl.so.2); https://github.com/pytorch/pytorch/issues/186591",
        causes=[
            (
                "two NCCL wheels for different CUDA majors in one environment",
                "`pip list | grep nvidia-nccl` lists nvidia-nccl-cu12 and -cu13",
            ),
            (
                "a system or module-provided libnccl older than the build's, found first",
                "`echo $LD_LIBRARY_PATH`; `ldconfig -p | grep nccl`",
            ),
        ],
        refine=lambda g: f"the missing function is {g['sym']}" if g.get("sym") else None,
        examples=(
            "ImportError: /venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommResume",
        ),
    ),
    signature(
        "MD848",
        "nvshmem.ipc-failure",
        # (its next line, "...mem_heap.cpp:exchange_heap_memory_handle:775: Fatal IPC Failure",
        # holds no anchor of the scanner: this one says it first)
        r"IPC failure: Sending data over socket failed",
        "NVSHMEM could not exchange GPU memory handles with a peer it took for one of this "
        "node's: it groups processes into nodes by host name, and shares memory inside a node "
        "through a local IPC socket and CUDA IPC. A peer on another host that it placed on "
        "this node (two hosts with the same host name), or peers of one node that cannot "
        "reach each other's socket, fail here.",
        "Give every host its own host name (`hostname` on each; `hostnamectl set-hostname`; "
        "in containers, a distinct --hostname per host), and on one node run its processes "
        "where they share /tmp and an IPC namespace (docker --ipc=host); then rerun with "
        "NVSHMEM_DEBUG=INFO, whose lines say which peers it took for local.",
        "NVSHMEM host library (src/host/mem/mem_heap.cpp exchange_heap_memory_handle: 'Fatal "
        "IPC Failure'); NVSHMEM environment variables (NVSHMEM_DEBUG); "
        "https://github.com/deepseek-ai/DeepEP/issues/316",
        causes=[
            ("two hosts with the same host name", "`hostname` prints the same on both"),
            (
                "processes of one node in containers without a shared /tmp or IPC namespace",
                "the containers' --ipc and volume settings",
            ),
        ],
        examples=("IPC failure: Sending data over socket failed: No such file or directory",),
    ),
    signature(
        "MD853",
        "nccl.plugin-not-found",
        # NCCL v2.30.7 src/plugin/plugin_open.cc: INFO "%s/Plugin: Could not find:%s..." (the
        # names it tried); its own default names alone are the usual run without a plugin
        r"NCCL INFO (?P<kind>NET|TUNER|PROFILER|ENV|GIN|RMA)/Plugin: ?Could not find: ?"
        r"(?!libnccl-(?:net|tuner|profiler|env|gin|rma)\.so(?:\.|\s*$))(?P<names>\S.*?)\.?\s*$",
        "NCCL did not load a plugin the job named (NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN, "
        "NCCL_PROFILER_PLUGIN, NCCL_ENV_PLUGIN): it tried the file names it lists and found "
        "none, then went on without it (its internal network, tuner, no profiler). Nothing "
        "fails at once: the job runs without what the plugin was for.",
        "Give the plugin as NCCL looks it up: a library name found through LD_LIBRARY_PATH "
        "('libnccl-net-NAME.so' from NAME, or the full 'libX.so'); paths work from NCCL "
        "2.27.5 (2.27.3 made 'libnccl-TYPE-VALUE.so' of any value not starting with 'lib', "
        "so './libx.so' became 'libnccl-profiler-./libx.so.so'); check the file exists on "
        "every host and in the container (`ls -l`, `ldd` for its own dependencies).",
        "NCCL src/plugin/plugin_open.cc (v2.26.6 opens the value as given; v2.27.3 prefixes "
        "any value not starting with 'lib'; v2.27.5 and later take a path); NCCL environment "
        "variables (NCCL_NET_PLUGIN, NCCL_PROFILER_PLUGIN); https://github.com/NVIDIA/nccl/"
        "issues/1732",
        role=EITHER,
        causes=[
            (
                "a path given to NCCL 2.27.3, which made a file name of it",
                "the name it lists starts with 'libnccl-TYPE-' and holds '/' or ends in '.so.so'",
            ),
            (
                "the library not on this host's library path or not in the container",
                "`ls` of the file on the failing host; LD_LIBRARY_PATH",
            ),
        ],
        refine=plugin_name,
        examples=(
            "rtptest1621:268329:272115 [5] NCCL INFO PROFILER/Plugin: Could not find: "
            "libnccl-profiler-./libnccl_example_profiler_plugin.so.so.",
            "h1:1:2 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net-aws-ofi.so "
            "libnccl-net.so. Using internal net plugin.",
        ),
    ),
    signature(
        "MD851",
        "xla.clique-communicator-missing",
        r"Communicator for rank (?P<peer>\d+) not found in a NCCL clique",
        "XLA looked up the NCCL communicator of a rank in a clique (the GPUs of one "
        "collective) and this process holds none for it. Each process holds only its own "
        "GPUs' communicators: in multi-process mode (one process per GPU or host), a clique "
        "built by splitting an existing one (--xla_gpu_enable_nccl_comm_splitting) was keyed "
        "for one process only in releases before openxla/xla's fix.",
        "Remove --xla_gpu_enable_nccl_comm_splitting from XLA_FLAGS (every process), or "
        "upgrade jax/jaxlib to a release with the fix (openxla/xla #11761); check that every "
        "process of the job runs the same jaxlib.",
        "XLA GPU runtime (NCCL cliques, xla/service/gpu/runtime/nccl_clique.cc); "
        "https://github.com/openxla/xla/pull/11761",
        causes=[
            (
                "communicator splitting on in multi-process mode",
                "XLA_FLAGS holds --xla_gpu_enable_nccl_comm_splitting",
            ),
        ],
        examples=(
            "Execution of replica 0 failed: INTERNAL: Communicator for rank 1 not found in a "
            "NCCL clique devices=[1,5]; stream=0",
        ),
    ),
    signature(
        "MD860",
        "nvshmem.ibgda-qp-rtr",
        r"Error in mlx5dv_devx_obj_modify for (?P<step>INIT2RTR|RTR2RTS)_QP(?: with syndrome "
        r"(?P<syndrome>\d+))?",
        "NVSHMEM's GPU-initiated RDMA transport (IBGDA) could not move a queue pair to RTR: "
        "the NIC's firmware refused the attributes NVSHMEM gave it (the path to the peer: its "
        "GID or LID, traffic class, MTU). NVSHMEM's setup of its connections then fails on "
        "every rank.",
        "Check the attributes against the link layer (`ibstatus`: link_layer InfiniBand or "
        "Ethernet): RoCE-only settings on an InfiniBand fabric are refused, unset "
        "NVSHMEM_IB_TRAFFIC_CLASS (and NVSHMEM_IB_GID_INDEX) there; on RoCE give the GID of "
        "the RoCE v2 IPv4 address (NVSHMEM_IB_GID_INDEX, `show_gids`); then rerun with "
        "NVSHMEM_DEBUG=INFO.",
        "NVSHMEM src/modules/transport/ibgda/ibgda.cpp (mlx5dv_devx_obj_modify INIT2RTR_QP); "
        "NVSHMEM environment variables (NVSHMEM_IB_TRAFFIC_CLASS, NVSHMEM_IB_GID_INDEX); "
        "https://github.com/NVIDIA/nvshmem/issues/45",
        causes=[
            (
                "NVSHMEM_IB_TRAFFIC_CLASS set on an InfiniBand link layer",
                "`ibstatus` says link_layer: InfiniBand; the variable in the job's environment",
            ),
            ("a GID index with no RoCE v2 address on RoCE", "`show_gids` on the host"),
        ],
        examples=(
            "ibgda.cpp:1393: non-zero status: 121 Error in mlx5dv_devx_obj_modify for "
            "INIT2RTR_QP with syndrome 764216",
        ),
    ),
    signature(
        "MD861",
        "rdma.register-bad-address",
        r"Failed to register memory (?P<addr>0x[0-9a-fA-F]+)(?:[^:]*)?: (?P<err>Bad address "
        r"\[14\]|Invalid argument \[22\])",
        "Registering a buffer with the RDMA NIC (ibv_reg_mr or ibv_reg_dmabuf_mr, here by a "
        "KV-cache transfer engine such as Mooncake) failed: EFAULT (Bad address) when the "
        "kernel could not pin the pages behind that address, EINVAL (Invalid argument) when "
        "the range asked is not one the registration takes. For a GPU buffer both mean GPU "
        "memory the NIC cannot map as asked: CUDA virtual memory (PyTorch's "
        "expandable_segments:True backs tensors with cuMemCreate/cuMemMap, whose "
        "cuMemGetAddressRange covers one mapping only, so a dma-buf exported from it is "
        "shorter than a buffer of several segments), or GPUDirect RDMA missing "
        "(nvidia-peermem not loaded, no DMA-BUF).",
        "If PYTORCH_CUDA_ALLOC_CONF holds expandable_segments:True, remove it for the serving "
        "process (its KV buffers must be plain cudaMalloc memory to register); else load "
        "GPUDirect RDMA (`modprobe nvidia-peermem`, `lsmod | grep peermem`) or use a DMA-BUF "
        "capable driver and kernel; for EINVAL with expandable segments, upgrade the "
        "transfer engine (a release that exports the dma-buf over the whole range asked); "
        "then rerun the transfer engine's own registration test.",
        "libibverbs ibv_reg_mr(3) (EFAULT); Mooncake transfer engine rdma_context.cpp "
        "('Failed to register memory'); PyTorch CUDA caching allocator (expandable_segments); "
        "https://github.com/kvcache-ai/Mooncake/issues/351",
        causes=[
            (
                "PyTorch's expandable segments (CUDA virtual memory) for the registered buffer",
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the environment",
            ),
            ("GPUDirect RDMA missing", "`lsmod | grep peermem` empty; no DMA-BUF support"),
        ],
        examples=(
            "E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory "
            "0x2e1cbac200: Bad address [14]",
            "E0819 11:21:45.193161 147554 rdma_context.cpp:588] Failed to register memory "
            "0x12397fd5800: Invalid argument [22]",
        ),
    ),
    signature(
        "MD869",
        "rdma.retry-exceeded",
        # ibv_wc_status_str's texts as other RDMA stacks print them (Mooncake's worker pool,
        # perftest, NIXL): 12 IBV_WC_RETRY_EXC_ERR, 13 IBV_WC_RNR_RETRY_EXC_ERR
        r"(?:ailed|rror)\b[^\n]{0,400}?(?P<status>(?P<rnr>RNR )?retry counter exceeded)",
        "An RDMA work request failed because the NIC's retries ran out (libibverbs "
        "ibv_wc_status_str): 'transport retry counter exceeded' (IBV_WC_RETRY_EXC_ERR, 12) "
        "means the packets to the peer's queue pair were never acknowledged; 'RNR retry "
        "counter exceeded' (13) that the peer had no receive posted in time. From the first "
        "transfer it is the addressing: on RoCE a GID index that selects a RoCE v1 GID, a "
        "link-local GID or another subnet's (the two ends must use the RoCE v2 GIDs of "
        "addresses that route to each other); mid-run, a link or switch port that dropped, "
        "or the peer process gone.",
        "Compare the GIDs on both hosts (`show_gids`, or "
        "`cat /sys/class/infiniband/HCA/ports/1/gid_attrs/types/N`): the engine must use the "
        "RoCE v2 GID of the IPv4 address the hosts route between; set it explicitly (Mooncake "
        "MC_GID_INDEX, NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX, NVSHMEM_IB_GID_INDEX) or upgrade an "
        "engine whose automatic choice takes a RoCE v1 GID; then check the link "
        "(`ibv_devinfo` port state, `ethtool -S` errors) and that the peer is alive.",
        "libibverbs ibv_wc_status_str (IBV_WC_RETRY_EXC_ERR = 12, IBV_WC_RNR_RETRY_EXC_ERR = "
        "13); Mooncake transfer engine (worker_pool.cpp, GID selection, MC_GID_INDEX); "
        "rdma-core show_gids",
        causes=[
            (
                "a RoCE v1 (or link-local, or another subnet's) GID chosen by the engine",
                "every transfer fails from the first one; `show_gids` type v1 at the index used",
            ),
            ("a link or switch port that dropped", "port errors, PORT_DOWN events"),
            ("the peer process died", "the peer's log ends earlier"),
        ],
        envelope=True,
        role=EITHER,
        examples=(
            "E0219 16:52:31.208603 273373 worker_pool.cpp:281] Worker: Process failed for "
            "slice (opcode: 0, source_addr: 0x7f593802c000, length: 4096, dest_addr: "
            "140622732378112, local_nic: mlx5_bond_0, peer_nic: 10.0.0.2:12345@mlx5_bond_2, "
            "dest_rkey: 1568428, retry_cnt: 0): transport retry counter exceeded",
        ),
    ),
    signature(
        "MD880",
        "rdma.qp-rtr-refused",
        r"Failed to modify QP (?P<qp>\d+) to RTR",
        "perftest (ib_write_bw, ib_send_bw, ib_read_lat, ...) could not move its queue pair "
        "to RTR: the port refused the address it built for the peer. perftest gives the "
        "address a GRH (a global address, a GID) only on an Ethernet link layer or when a "
        "GID index is given (-x); a port that requires a GRH (IBV_QPF_GRH_REQUIRED in its "
        "port flags: InfiniBand ports of virtualised or routed fabrics) refuses one without. "
        "On RoCE: a GID index with no address, or one of another RoCE version than the "
        "peer's; else an MTU or a peer LID/QP number the port does not take. 'Unable to "
        "Connect the HCA's through the link' follows it.",
        "Pass a GID index so perftest builds a global address: `ib_write_bw -d HCA -x "
        "GID_INDEX` on both ends (`show_gids` or `ibv_devinfo -v` lists them; on RoCE the "
        "RoCE v2 GID of the address the hosts route between); check `ibv_devinfo -v` for the "
        "port's flags and link layer, and give both ends the same MTU (-m) and options; "
        "upgrade perftest to a release that honours the port's GRH requirement.",
        "ibv_modify_qp(3) (IBV_QPF_GRH_REQUIRED: the address vector must be global); "
        "ibv_query_port(3) (port flags); perftest src/perftest_resources.c "
        "(ctx_modify_qp_to_rtr: 'Failed to modify QP %d to RTR')",
        causes=[
            (
                "a port that requires a GRH, and perftest run without -x on an InfiniBand link",
                "`ibv_devinfo -v` port flags list GRH_REQUIRED; link_layer InfiniBand",
            ),
            ("on RoCE, a GID index with no address or of another RoCE version", "`show_gids`"),
            ("different MTUs or options on the two ends", "the two command lines differ"),
        ],
        examples=("Failed to modify QP 122273 to RTR",),
    ),
    signature(
        "MD884",
        "nvrm.fabric-out-of-sync",
        r"ailed: NVLink fabric state cached by the driver is out of sync",
        "The NVIDIA kernel driver's view of the NVLink fabric (the NVSwitch multicast objects "
        "Fabric Manager or IMEX set up) is out of sync with the fabric: multicast (NVLS) "
        "memory cannot be created or mapped, so NVSHMEM's NVLS teams and NCCL's NVLS "
        "algorithms fail to map their buffers (CUDA 401, 'the operation cannot be performed "
        "in the present state').",
        "Turn the multicast path off for the job (NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0); "
        "then bring the fabric back in sync: restart Fabric Manager (`systemctl restart "
        "nvidia-fabricmanager`) or IMEX, reset the GPUs or reboot the node, and check `nvidia-smi "
        "-q | grep -A3 -i fabric` (State Completed, Status Success) before the next job.",
        "NVIDIA driver (NVRM NV_ERR_FABRIC_STATE_OUT_OF_SYNC, mem_multicast_fabric.c); NVSHMEM "
        "environment variables (NVSHMEM_DISABLE_NVLS); NCCL environment variables "
        "(NCCL_NVLS_ENABLE)",
        causes=[
            (
                "Fabric Manager or IMEX restarted or in error while GPUs held fabric state",
                "`nvidia-smi -q` fabric state; the Fabric Manager log",
            ),
        ],
        examples=(
            "[1891044.581319] NVRM: nvCheckOkFailedNoLog: Check failed: NVLink fabric state "
            "cached by the driver is out of sync [NV_ERR_FABRIC_STATE_OUT_OF_SYNC] (0x00000087) "
            "returned from status @ mem_multicast_fabric.c:2917",
        ),
    ),
    signature(
        "MD885",
        "nvshmem.nvls-map-failed",
        r"team_internal_nvls\.cpp:\d+: non-zero status: (?P<status>\d+) cuMemMap failed",
        "NVSHMEM could not map its symmetric heap into an NVLS (NVLink SHARP multicast) group "
        "for a team: the CUDA driver refused the multicast mapping (401: the fabric's present "
        "state forbids it; 2: out of memory). NVSHMEM's init, and the job with it, stops.",
        "Set NVSHMEM_DISABLE_NVLS=1 for the job (NVSHMEM then uses its other transports); "
        "check the node's NVLink fabric (`nvidia-smi -q | grep -A3 -i fabric`, the kernel log "
        "for NVRM fabric errors, Fabric Manager's status) and restart Fabric Manager or reset "
        "the GPUs when it is out of sync; a smaller NVSHMEM_SYMMETRIC_SIZE for status 2.",
        "NVSHMEM src/host/team/team_internal_nvls.cpp (cuMemMap of the multicast heap); NVSHMEM "
        "environment variables (NVSHMEM_DISABLE_NVLS); CUDA driver API CUresult 401 "
        "(CUDA_ERROR_ILLEGAL_STATE)",
        causes=[
            ("the driver's NVLink fabric state out of sync", "an NVRM fabric line in dmesg"),
            ("the multicast heap larger than the fabric allows", "status 2"),
        ],
        role=EITHER,
        examples=(
            "/src/host/team/team_internal_nvls.cpp:254: non-zero status: 401 cuMemMap failed to "
            "map 274877906944 bytes handle at address: 0x1320000000 offset 0 on device 7",
        ),
    ),
    signature(
        "MD886",
        "ucx.no-remote-protocol",
        r"cannot find remote protocol for: (?P<what>.*)",
        "UCX found no protocol to carry this transfer between these two memory types across "
        "nodes (here into or from GPU memory): its protocol selection for the pair failed, "
        "and the transfer (a NIXL or UCX-based engine's) was cancelled. With CUDA memory this "
        "is either a UCX build without the CUDA transports this path needs, or a bug of that "
        "UCX release's protocol selection on the GPU and CUDA in use (new GPUs or a new CUDA "
        "major need a UCX release that knows them).",
        "Check the UCX the engine loads (`ucx_info -v`; an engine's bundled UCX may be "
        "another than the system's) and its CUDA transports (`ucx_info -d | grep -i cuda`); "
        "upgrade or pin UCX to a release with the fix for this GPU and CUDA (the engine's "
        "release notes name it), and keep UCX_TLS (if set) holding cuda_copy, cuda_ipc and "
        "the network transport.",
        "UCX src/ucp/proto/proto_reconfig.c ('cannot find remote protocol for'); UCX "
        "environment variables (UCX_TLS); NIXL (UCX backend)",
        causes=[
            (
                "a UCX release whose protocol selection fails on this GPU and CUDA",
                "a new GPU or CUDA major; the engine's UCX version",
            ),
            ("a UCX built without CUDA support", "`ucx_info -d` lists no cuda transports"),
        ],
        examples=(
            "[1760048752.141287] proto_reconfig.c:60   UCX  ERROR cannot find remote protocol "
            "for: ucp_context_0 inter-node cfg#2 | get(multi) into cuda/GPU0 from host",
        ),
    ),
    signature(
        "MD887",
        "nvshmem.peermem-not-detected",
        r"neither nv_peer_mem, or nvidia_peermem detected",
        "NVSHMEM's InfiniBand transport (IB RC) looked for the GPUDirect RDMA peer-memory "
        "module, did not find it, and skipped the transport: no GPU memory over the NIC, so "
        "internode runs (DeepEP's among them) fail. NVSHMEM looks only in "
        "/sys/kernel/mm/memory_peers/nv_mem*/version; an nvidia_peermem of recent drivers "
        "that is loaded does not create that file (it shows as "
        "/sys/module/nvidia_peermem/version), so the check fails with the module loaded.",
        "Check `lsmod | grep peermem` and `ls /sys/kernel/mm/memory_peers/ "
        "/sys/module/nvidia_peermem/`: not loaded, `modprobe nvidia-peermem`; loaded without "
        "the memory_peers file, take an NVSHMEM release that detects "
        "/sys/module/nvidia_peermem (or its DMA-BUF path on a kernel and driver that support "
        "it), as NCCL does.",
        "NVSHMEM src/modules/transport/ibrc (the peer-memory check: "
        "/sys/kernel/mm/memory_peers/nv_mem/version); NVIDIA driver nvidia-peermem "
        "(/sys/module/nvidia_peermem/version)",
        causes=[
            (
                "nvidia_peermem loaded but not where NVSHMEM looks",
                "/sys/module/nvidia_peermem exists, /sys/kernel/mm/memory_peers does not",
            ),
            ("nvidia_peermem not loaded", "`lsmod | grep peermem` is empty"),
        ],
        examples=("neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.",),
    ),
    signature(
        "MD888",
        "rdma.gpu-mr-failed",
        r"Couldn't allocate MR with error=(?P<err>\d+)",
        "perftest could not register its buffer with the NIC (ibv_reg_mr): error 14 (EFAULT) "
        "on a GPU buffer (--use_cuda) means the NIC cannot pin GPU memory that way: "
        "nvidia-peermem not loaded (the peer-memory path) on a host that offers DMA-BUF "
        "instead; 12 (ENOMEM) the locked-memory limit.",
        "For a GPU buffer, run with --use_cuda_dmabuf (DMA-BUF registration, kernel 5.12+ and "
        "an open GPU kernel module), or load nvidia-peermem (`modprobe nvidia-peermem`, `lsmod "
        "| grep peermem`); for error 12 raise `ulimit -l` (unlimited for RDMA).",
        "perftest src/perftest_resources.c ('Couldn't allocate MR'); ibv_reg_mr(3) and "
        "ibv_reg_dmabuf_mr(3); NVIDIA GPUDirect RDMA documentation (nvidia-peermem, DMA-BUF)",
        causes=[
            (
                "a GPU buffer without nvidia-peermem, on a DMA-BUF system",
                "error=14 with --use_cuda; `lsmod | grep peermem` empty",
            ),
            ("the locked-memory limit", "error=12; `ulimit -l` small"),
        ],
        examples=("Couldn't allocate MR with error=14",),
    ),
    signature(
        "MD805",
        "ucx.shm-fifo",
        r"mm_iface failed to allocate receive FIFO",
        "UCX's shared-memory transport (its mm interface, posix or sysv) could not allocate "
        "the receive FIFO of a local peer: the shared memory it allocates from is too small. "
        "In a container that is /dev/shm: Docker's default is 64 MiB and a Kubernetes pod's "
        "the same unless a memory-backed emptyDir is mounted there, too little for several "
        "local ranks. A segfault of UCX right after it is its consequence.",
        "Give the container a larger /dev/shm: in a pod, mount an emptyDir with medium: "
        "Memory (and a sizeLimit of a few GiB) at /dev/shm; with Docker, --shm-size=8g or "
        "--ipc=host; check `df -h /dev/shm` inside it. UCX_POSIX_USE_PROC_LINK=n or "
        "UCX_TLS without sm only avoids the transport.",
        "UCX src/uct/sm/mm/base/mm_iface.c ('failed to allocate receive FIFO'); Kubernetes "
        "emptyDir (medium: Memory); Docker run --shm-size",
        causes=[
            (
                "a container's default 64 MiB /dev/shm with several local ranks",
                "`df -h /dev/shm` in the container",
            ),
        ],
        examples=("mm_iface failed to allocate receive FIFO",),
    ),
    signature(
        "MD806",
        "gdrcopy.pin-failed",
        r"gdr_pin_buffer\([^\n]*\) == \(0\)\)?\"? failed",
        "gdrcopy could not pin GPU memory for CPU mapping (gdr_pin_buffer, through its gdrdrv "
        "kernel module and the driver's nvidia_p2p_get_pages). With gdrcopy 2.4.1 or older "
        "and NVIDIA drivers 555 and later this is gdrdrv asking to pin a size that is not a "
        "whole number of GPU pages, which those drivers refuse; else gdrdrv not loaded or "
        "built for another kernel or driver.",
        "Upgrade gdrcopy and rebuild its gdrdrv module for this kernel and driver (2.4.2 or "
        "later rounds the size to the GPU page); then `sudo modprobe gdrdrv` (`lsmod | grep "
        "gdrdrv`) and rerun gdrcopy_sanity; the libraries that use it (NVSHMEM, UCX, NCCL's "
        "GDRCOPY) need the same.",
        "gdrcopy tests/sanity.cpp and gdrdrv (gdr_pin_buffer, nvidia_p2p_get_pages); NVIDIA "
        "GPUDirect RDMA documentation",
        causes=[
            (
                "gdrcopy 2.4.1 or older with an NVIDIA driver 555 or later",
                "gdrcopy_sanity fails its pin tests; `modinfo gdrdrv` version",
            ),
            ("gdrdrv not loaded or built for another kernel", "`lsmod | grep gdrdrv` empty"),
        ],
        examples=(
            'Assertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at '
            "sanity.cpp:344",
        ),
    ),
    signature(
        "MD807",
        "fabricmanager.version-mismatch",
        r"fabric manager NVIDIA GPU driver interface version (?P<fm>[\d.]+) don't match with "
        r"driver version (?P<drv>[\d.]+)",
        "Fabric Manager's version is not the loaded NVIDIA driver's: it refuses to start, so "
        "the NVSwitch fabric is never set up and the GPUs of an NVSwitch system cannot talk "
        "over NVLink (CUDA reports them unavailable or NCCL fails at init). Fabric Manager "
        "must be the exact driver version, to the last digit.",
        "Install the nvidia-fabricmanager package of the driver's exact version (a driver "
        "container image that bundles the matching one, or pin the package), then `systemctl "
        "restart nvidia-fabricmanager` and check `nvidia-smi -q | grep -A3 -i fabric`.",
        "NVIDIA Fabric Manager user guide (the driver and Fabric Manager versions must match)",
        causes=[
            (
                "a driver container or package set whose Fabric Manager is of another release",
                "the two versions in the line",
            ),
        ],
        examples=(
            "fabric manager NVIDIA GPU driver interface version 590.48.01 don't match with "
            "driver version 580.126.09.",
        ),
    ),
    signature(
        "MD808",
        "rdma.create-qp-enomem",
        r"Failed to create QP: Cannot allocate memory(?: \[12\])?",
        "The RDMA NIC refused another queue pair (ibv_create_qp, ENOMEM): the NIC or its "
        "driver has no room for more QPs (its max_qp) or the locked-memory limit was reached. "
        "A transfer engine that connects every local NIC to every remote NIC (Mooncake before "
        "0.3.5) creates QPs by the thousand on a large deployment; the segfault or the "
        "refused connections that follow are its consequences.",
        "Create fewer QPs: Mooncake MC_ENABLE_DEST_DEVICE_AFFINITY=1 (or Mooncake 0.3.5 and "
        "later), fewer NICs per engine or fewer peers; check the NIC's limit (`ibv_devinfo -v "
        "| grep max_qp`) and `ulimit -l` (unlimited for RDMA).",
        "ibv_create_qp(3) (ENOMEM); Mooncake transfer engine rdma_endpoint.cpp ('Failed to "
        "create QP'), MC_ENABLE_DEST_DEVICE_AFFINITY",
        causes=[
            ("a QP for every pair of NICs of a large deployment", "many NICs per host"),
            ("the locked-memory limit", "`ulimit -l` small"),
        ],
        examples=(
            "E0729 05:04:30.527725 14093 rdma_endpoint.cpp:70] Failed to create QP: Cannot "
            "allocate memory [12]",
        ),
    ),
    signature(
        "MD862",
        "nixl.engine-id-mismatch",
        r"Remote NIXL agent engine ID mismatch",
        "A disaggregated serving handshake (vLLM's NIXL connector) reached a NIXL agent of "
        "another engine than the one it meant: the side channel it dialled for the remote "
        "engine's metadata answered for a different engine ID. The address and port the "
        "engines publish for that side channel point at the wrong process.",
        "Set VLLM_NIXL_SIDE_CHANNEL_HOST on every engine to the address its peers reach it at "
        "(not localhost on a multi-node setup) and give each engine on a host its own "
        "VLLM_NIXL_SIDE_CHANNEL_PORT; then check that the engine IDs in the handshake lines "
        "match the remote engine's.",
        "vLLM nixl_connector.py (the handshake's engine ID check; VLLM_NIXL_SIDE_CHANNEL_HOST, "
        "VLLM_NIXL_SIDE_CHANNEL_PORT); https://github.com/vllm-project/vllm/issues/27083",
        causes=[
            (
                "VLLM_NIXL_SIDE_CHANNEL_HOST unset or wrong on a multi-node setup",
                "the engines' logs show the side channel on localhost or another host's address",
            ),
            ("two engines on one host sharing a side-channel port", "the same port in both logs"),
        ],
        examples=(
            "RuntimeError: Remote NIXL agent engine ID mismatch. Expected 46126a31_dp0,received "
            "96b1c4ff_dp0.",
        ),
    ),
    signature(
        "MD850",
        "nvshmem.bootstrap-truncated",
        r"bootstrap_net_recv:\d+: Message truncated : received (?P<got>\d+) bytes instead of "
        r"(?P<want>\d+)",
        "NVSHMEM's UID bootstrap (the socket exchange that sets up its peers) received a "
        "message of another size than it expected: the peers do not speak the same "
        "exchange. Its next steps (the allgather of IPC handles, the heap setup) then fail "
        "on every rank.",
        "Make every node run the same software under NVSHMEM: the same GPU driver "
        "(`nvidia-smi` on each node), the same NVSHMEM build (the one DeepEP or the engine was "
        "built against: `nvshmem-info -a`) and the same DeepEP or engine build, with the same "
        "NVSHMEM_* settings on every rank; then rerun with NVSHMEM_DEBUG=INFO. Two jobs whose "
        "bootstraps share an address and port cross each other too: give each its own.",
        "NVSHMEM host library (src/modules/bootstrap/uid/bootstrap_uid.cpp bootstrap_net_recv "
        "'Message truncated'); https://github.com/deepseek-ai/DeepEP/issues/121 (nodes with "
        "different GPU driver versions)",
        causes=[
            (
                "nodes with different GPU driver versions",
                "`nvidia-smi` prints another Driver Version on one node",
            ),
            (
                "different NVSHMEM or DeepEP builds on the nodes (an image of another date)",
                "`nvshmem-info -a`, `pip show deep_ep` differ",
            ),
            ("two jobs' bootstraps on one address and port", "another job on the same nodes"),
        ],
        examples=(
            "/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:"
            "bootstrap_net_recv:99: Message truncated : received 36 bytes instead of 1",
        ),
    ),
)
