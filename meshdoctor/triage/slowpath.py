"""The slow paths NCCL takes between hosts where nothing fails and the job is only slow:
over TCP sockets instead of the RDMA network the hosts have (MD813, :func:`readings`), or
over InfiniBand/RoCE without GPUDirect RDMA (MD814, :func:`gdr`: NCCL's INFO line 'GPU Direct
RDMA Disabled for HCA N', the peer-memory module missing or not detected).

Sockets: NCCL says which transport each channel takes
(``Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0``, and since 2.19 ``Using network
Socket``) and, at NCCL_DEBUG=INFO, why it did not take InfiniBand/RoCE: ``NET/IB : No device
found``, ``Failed to open libibverbs.so[.1]``, ``NCCL_IB_DISABLE set by environment to 1``, or
a network plugin that did not load (``NET/Plugin : Plugin load (libnccl-net.so) returned ...``,
which for EFA is aws-ofi-nccl). Triage names it with MD813, a finding it makes itself.

The rule (:func:`readings`): no other finding (a job that failed has its own cause), a log
shows NCCL on its socket transport between hosts, and the inputs show that the hosts have an
RDMA network (an Ethernet-only cluster runs on sockets by design): InfiniBand turned off by
NCCL_IB_DISABLE, sockets over an IPoIB interface (``ib0``), an mlx5 device or NCCL_IB_HCA
named, or NET/IB in use on another host. The finding sits on the line saying why RDMA was not
used (else the first socket line) and names that reason, and says when a bandwidth table
(nccl-tests' ``# Avg bus bandwidth``) measured the socket path. Sources: NCCL v2.30.7 src/transport/net_ib (``NET/IB : No device found``),
src/misc/ibvwrap.cc (``Failed to open libibverbs.so``), src/plugin/net.cc, src/init.cc
(``Using network %s``), src/transport.cc (``via NET/%s/%d``); NCCL environment variables
(NCCL_IB_DISABLE); NCCL's troubleshooting guide (networking).
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD813"

SOCKETS_SIG = signature(
    CODE,
    "triage.nccl-over-sockets",
    None,
    "NCCL carries the traffic between hosts over TCP sockets (its NET/Socket transport), not "
    "over InfiniBand, RoCE or EFA: nothing fails, but the bandwidth between hosts is a "
    "fraction of the RDMA network's (a few GB/s at best, often far less) and the CPUs copy "
    "every byte.",
    "Make NCCL find the RDMA network: install rdma-core (libibverbs) in the image or on the "
    "host, pass the RDMA devices into the container (/dev/infiniband, with the host's "
    "network or the RDMA device plugin), load the NIC driver (`ibv_devinfo` must list the "
    "ports as PORT_ACTIVE), remove NCCL_IB_DISABLE=1, and on EFA install aws-ofi-nccl where "
    "NCCL loads it (NCCL_NET_PLUGIN, LD_LIBRARY_PATH); then rerun with NCCL_DEBUG=INFO: the "
    "channels must say 'via NET/IB' (or NET/AWS Libfabric).",
    "NCCL v2.30.7 src/transport/net_ib, src/misc/ibvwrap.cc, src/plugin/net.cc, src/init.cc, "
    "src/transport.cc; NCCL environment variables (NCCL_IB_DISABLE, NCCL_NET_PLUGIN)",
    examples=(),
    causes=[
        (
            "no RDMA device visible to NCCL: libibverbs missing from the image, the devices "
            "not passed into the container, or the driver not loaded",
            "'NET/IB : No device found' or 'Failed to open libibverbs.so'",
        ),
        ("NCCL_IB_DISABLE=1 left in the environment", "'NCCL_IB_DISABLE set by environment'"),
        (
            "the network plugin of the fabric (aws-ofi-nccl for EFA) not found",
            "'NET/Plugin : Plugin load ... returned' and no NET/OFI line",
        ),
    ],
)

SOCKETS_SIG = with_why(
    SOCKETS_SIG,
    "No line says NCCL is slow: it prints which transport each channel takes, and the socket "
    "transport between hosts that have an RDMA network is the reason for the bandwidth.",
)

ENTRY = entry(SOCKETS_SIG, "triage NCCL between hosts over sockets")

_SOCKET = re.compile(r"\bvia NET/Socket/\d|\bUsing network Socket\b")
_TABLE = re.compile(r"#\s*Avg bus bandwidth\s*:")
# a sign that the hosts have an RDMA network at all (an Ethernet-only cluster runs on
# sockets by design): InfiniBand turned off by a setting, sockets over an IPoIB interface
# (ib0), an mlx5 device or NCCL_IB_HCA named, or NET/IB in use on some host of the job
_RDMA_HINT = re.compile(
    r"NCCL_IB_DISABLE set by environment to [1-9]|NCCL_IB_DISABLE=[1-9]|(?<![\w-])ib\d+[:<]|"
    r"\bmlx5_\d|\bNCCL_IB_HCA\b|NET/IB : Using|via NET/IB/"
)
# why NCCL did not use RDMA, most specific first: (pattern, what it says)
_WHY: Tuple[Tuple["re.Pattern[str]", str], ...] = (
    (
        re.compile(r"NCCL_IB_DISABLE set by environment to [1-9]"),
        "NCCL_IB_DISABLE is set, so NCCL skipped InfiniBand/RoCE: remove it",
    ),
    (
        re.compile(r"Failed to open libibverbs\.so"),
        "NCCL could not load libibverbs: rdma-core (libibverbs1) is not installed where the "
        "ranks run (a container image without it)",
    ),
    (
        re.compile(r"NET/IB : No device found"),
        "NCCL found no InfiniBand/RoCE device: the devices are not passed into the container "
        "(/dev/infiniband), the driver is not loaded, or the ports are down (`ibv_devinfo`)",
    ),
    (
        re.compile(r"NET/Plugin ?: ?(?:Plugin load \(\S+\) returned|Could not find)"),
        "the network plugin did not load: on EFA (AWS) that is aws-ofi-nccl, without which "
        "NCCL has only sockets; install it where NCCL looks (NCCL_NET_PLUGIN, LD_LIBRARY_PATH)",
    ),
)
_LOGS = ("log", "stdin")


def _why(inp: Input) -> Optional[Tuple[int, str, str]]:
    """``(line number, text, what it says)`` of the first line of ``inp`` that says why NCCL
    did not use RDMA, by :data:`_WHY`'s order."""
    lines = list(input_lines(inp))
    for pattern, says in _WHY:
        for n, t in lines:
            if pattern.search(t):
                return n, t, says
    return None


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD813 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (any one of them: none)."""
    if findings or not any(_RDMA_HINT.search(t) for x in inputs for _, t in input_lines(x)):
        return []
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        sock = next(((n, t) for n, t in input_lines(inp) if _SOCKET.search(t)), None)
        if sock is None:
            continue
        why = _why(inp)
        table = any(_TABLE.search(t) for _, t in input_lines(inp))
        n, text = (why[0], why[1]) if why else sock
        here = (
            f"{inp.source}:{sock[0]} shows NCCL on its socket transport "
            f"('{sock[1].strip()[:160]}')"
            + (f"; {why[2]} ({inp.source}:{why[0]})" if why else "")
            + ("; the bandwidth table of this run measures the socket path" if table else "")
            + "."
        )
        m = reading.match(
            SOCKETS_SIG,
            signatures.printable(here),
            line=signatures.printable(text.strip()),
            lineno=n,
        )
        return [reading.at_input(m, i, inp)]
    return []


GDR_CODE = "MD814"

GDR_SIG = signature(
    GDR_CODE,
    "triage.nccl-gdr-disabled",
    None,
    "NCCL runs InfiniBand/RoCE without GPUDirect RDMA: the NIC cannot read and write GPU "
    "memory, so every transfer between hosts is staged through host memory. Nothing fails; "
    "the bandwidth between hosts drops and the CPUs' memory carries every byte.",
    "Give NCCL the GPU's memory: load the peer-memory module (`lsmod | grep -E "
    "'nvidia_peermem|nv_peer_mem'`; `modprobe nvidia-peermem`, shipped with the driver), or "
    "use DMA-BUF (Linux 5.12 or later with the open kernel modules: NCCL_DMABUF_ENABLE=1); "
    "NCCL 2.22.3 and older did not detect the nvidia-peermem module that replaced "
    "nv_peer_mem, so upgrade NCCL (2.23.4 or later) where the module is loaded and GPUDirect "
    "RDMA is still off; then rerun with NCCL_DEBUG=INFO: NCCL must print 'GPU Direct RDMA "
    "Enabled'.",
    "NCCL v2.30.7 src/transport/net_ib ('GPU Direct RDMA Disabled for HCA %d', "
    "ncclIbGdrSupport: the peer-memory module's files, DMA-BUF); NVIDIA GPUDirect RDMA "
    "documentation (nvidia-peermem); https://github.com/NVIDIA/nccl/issues/1676 (2.22.3 "
    "missing nvidia_peermem)",
    examples=(),
    causes=[
        (
            "the peer-memory module not loaded (nvidia-peermem, or the legacy nv_peer_mem)",
            "`lsmod` lists neither",
        ),
        (
            "an NCCL of 2.22.3 or older that does not see nvidia-peermem (an OS or driver "
            "upgrade replaced nv_peer_mem with it)",
            "the module is loaded and NCCL's version line says 2.22 or older",
        ),
    ],
)

GDR_SIG = with_why(
    GDR_SIG,
    "No line fails: NCCL's INFO line that GPUDirect RDMA is disabled is the reason for the "
    "bandwidth between hosts.",
)

GDR_ENTRY = entry(GDR_SIG, "triage NCCL without GPUDirect RDMA")

_GDR_OFF = re.compile(r"GPU Direct RDMA Disabled for HCA \d+ '(?P<hca>[^']+)'")
_VERSION = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+)")


def gdr(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD814 finding, or none: no other finding, and a log's NCCL says GPUDirect RDMA is
    disabled for an HCA; an NCCL version line of 2.22.3 or older names its detection."""
    if findings:
        return []
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        lines = list(input_lines(inp))
        off = [(n, t, m.group("hca")) for n, t in lines for m in [_GDR_OFF.search(t)] if m]
        if not off:
            continue
        hcas = sorted({h for _, _, h in off})
        version = next(
            (
                m.group("v")
                for x in inputs
                for _, t in input_lines(x)
                for m in [_VERSION.search(t)]
                if m
            ),
            None,
        )
        old = version is not None and tuple(map(int, version.split("."))) <= (2, 22, 3)
        here = (
            f"NCCL says GPUDirect RDMA is disabled for {', '.join(hcas[:6])}"
            + (f" (and {len(hcas) - 6} more)" if len(hcas) > 6 else "")
            + f" ({len(off)} line{'s' if len(off) > 1 else ''})"
            + (
                f"; this NCCL is {version}, which does not detect the nvidia-peermem module "
                "(it looks for the legacy nv_peer_mem): with nvidia-peermem loaded, upgrade "
                "NCCL to 2.23.4 or later"
                if old
                else ""
            )
            + "."
        )
        n, text, _ = off[0]
        m = reading.match(
            GDR_SIG, signatures.printable(here), line=signatures.printable(text.strip()), lineno=n
        )
        return [reading.at_input(m, i, inp, count=len(off))]
    return []
