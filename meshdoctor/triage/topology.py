"""A GPU topology matrix (``nvidia-smi topo -m``) read for what it means for NCCL: which GPU
pairs have no NVLink and talk across the CPU (``PHB``/``NODE``: through a host bridge; ``SYS``:
across the NUMA nodes' interconnect, QPI/UPI/xGMI), and which NICs have no GPU on their PCIe
switch. The matrix's legend (nvidia-smi's own: ``X``, ``SYS``, ``NODE``, ``PHB``, ``PXB``,
``PIX``, ``NV#``) is NCCL's path types too (NCCL_P2P_LEVEL and NCCL_NET_GDR_LEVEL take the
same names, NCCL's environment-variable documentation). Triage names it with MD897, a finding
it makes itself: a pasted matrix with no log otherwise reads as nothing at all.

The rule (:func:`readings`): an input holding the matrix (its header row of ``GPU0 ...`` and
rows ``GPUn`` of path types) whose GPU pairs include a PCIe-only path through the CPU, or
whose NICs have no GPU closer than a host bridge, is the finding. All GPU pairs on NVLink or
one PCIe switch, with a NIC beside a GPU, read as a layout that needs nothing. Its role is
``either``: alone, it is what the input says; beside a failure that prints an error it is a
consequence (the layout that failure ran on), and that error comes first.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.codes.model import CONSEQUENCE, EITHER
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD897"

TOPOLOGY_SIG = signature(
    CODE,
    "triage.gpu-topology",
    None,
    "The GPU topology (nvidia-smi topo -m) routes NCCL's traffic through the CPU: GPU pairs "
    "with no NVLink talk over PCIe through a host bridge (PHB, NODE) or across the NUMA "
    "nodes' interconnect (SYS), and NICs with no GPU on their PCIe switch cannot take "
    "GPUDirect RDMA at NCCL's default distance. Peer-to-peer between such GPUs is slow, "
    "and on PCIe switches with Access Control Services (ACS) on, or under an IOMMU, it can "
    "hang in NCCL's channel setup or return wrong data; the network path stages through "
    "host memory.",
    "Test peer-to-peer first: `nvidia-smi topo -p2p r` (which pairs can read each other), "
    "then nccl-tests' all_reduce_perf -g N with NCCL_DEBUG=INFO (the 'via P2P/...' or 'via "
    "SHM' lines say the path NCCL took). A hang or wrong data between PCIe GPUs: disable "
    "ACS on the PCIe switches (`lspci -vvv | grep ACSCtl`; NCCL's troubleshooting guide) "
    "or the IOMMU (iommu=pt), else NCCL_P2P_DISABLE=1. Slow only: place the ranks that "
    "talk most on GPUs of one NUMA node (CUDA_VISIBLE_DEVICES), and a NIC far from its GPU: "
    "NCCL_NET_GDR_LEVEL=SYS only after checking GPUDirect RDMA works there (nvidia-peermem "
    "loaded).",
    "nvidia-smi topo -m legend (X, SYS, NODE, PHB, PXB, PIX, NV#); NCCL environment "
    "variables NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL, NCCL_P2P_DISABLE; NCCL troubleshooting "
    "guide, 'PCI Access Control Services (ACS)'",
    examples=(),
    role=EITHER,
    causes=[
        (
            "GPUs on different CPU sockets or host bridges with no NVLink (a PCIe-only server, "
            "consumer GPUs)",
            "SYS, NODE or PHB between GPU pairs, no NV# in the matrix",
        ),
        (
            "ACS or an IOMMU on the PCIe path redirecting peer-to-peer through the root complex",
            "`lspci -vvv | grep ACSCtl` shows SrcValid+; `dmesg | grep -i iommu`",
        ),
        (
            "a NIC on another socket's PCIe than the GPUs that use it",
            "every GPU-NIC entry of a NIC's row is NODE, SYS or PHB",
        ),
    ],
)

TOPOLOGY_SIG = with_why(
    TOPOLOGY_SIG,
    "No rank prints this: the matrix is the machine's layout. Alone it is what explains a "
    "slow or hanging run between these GPUs; beside a failure that prints an error, read "
    "that error first and this as the layout it ran on.",
)

ENTRY = entry(TOPOLOGY_SIG, "triage GPU topology through the CPU")

_HEAD = re.compile(r"^\s*GPU0(?:\s+(?:GPU|NIC|mlx)\S*)*\s+CPU Affinity", re.IGNORECASE)
_ROW = re.compile(r"^\s*(GPU\d+|NIC\d+|mlx5_\d+)\s+(.*)$")
_NIC_NAME = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)")
_CELL = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV\d+)$")
_THROUGH_CPU = ("PHB", "NODE", "SYS")
_LOGS = ("log", "stdin")


def parse(
    lines: Sequence[Tuple[int, str]],
) -> Optional[Tuple[int, List[str], Dict[str, List[str]], Dict[str, str]]]:
    """The matrix in ``lines`` (``(line number, text)``): its header's line number, its
    column names (``GPU0``.., ``NIC0``..), each row's path types by column, and the NIC
    legend (``NIC0`` -> ``mlx5_0``); None when there is no matrix."""
    head_at, cols = 0, []
    rows: Dict[str, List[str]] = {}
    names: Dict[str, str] = {}
    for lineno, text in lines:
        if not cols and _HEAD.match(text):
            head_at = lineno
            cols = text.split("CPU Affinity")[0].split()
            continue
        n = _NIC_NAME.match(text)
        if n:
            names[n.group(1)] = n.group(2)
            continue
        r = _ROW.match(text)
        if cols and r:
            cells = r.group(2).split()[: len(cols)]
            if len(cells) == len(cols) and all(_CELL.match(c) for c in cells):
                rows[r.group(1)] = cells
    if not cols or not any(k.startswith("GPU") for k in rows):
        return None
    return head_at, cols, rows, names


def _pairs(cols: List[str], rows: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """GPU pairs by their path type (``"GPU0-GPU1"``), each pair once."""
    out: Dict[str, List[str]] = {}
    for a, cells in rows.items():
        if not a.startswith("GPU"):
            continue
        for b, cell in zip(cols, cells):
            if b.startswith("GPU") and int(b[3:]) > int(a[3:]):
                out.setdefault(cell, []).append(f"{a}-{b}")
    return out


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD897 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others: beside any failure of a rank the
    finding is its consequence, the layout that failure ran on."""
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error or "GPU0" not in inp.head + inp.tail:
            continue
        got = parse(list(input_lines(inp)))
        if got is None:
            continue
        head_at, cols, rows, names = got
        pairs = _pairs(cols, rows)
        said: List[str] = []
        cpu = [(t, pairs[t]) for t in _THROUGH_CPU if t in pairs]
        if cpu:
            nvlink = sum(len(v) for t, v in pairs.items() if t.startswith("NV"))
            said.append(
                "GPU pairs through the CPU with no NVLink: "
                + "; ".join(
                    f"{t}: {', '.join(v[:6])}{' ...' if len(v) > 6 else ''}" for t, v in cpu
                )
                + (f" ({nvlink} pair(s) on NVLink)" if nvlink else " (no NVLink in the matrix)")
            )
        far = []
        for nic, cells in rows.items():
            if nic.startswith("GPU"):
                continue
            gpu_cells = [c for col, c in zip(cols, cells) if col.startswith("GPU")]
            if gpu_cells and all(c in _THROUGH_CPU for c in gpu_cells):
                far.append(f"{nic} ({names[nic]})" if nic in names else nic)
        if far:
            said.append("NICs with no GPU on their PCIe switch: " + ", ".join(far))
        if not said:
            continue
        text = next((t for n, t in input_lines(inp) if n == head_at), "")
        m = reading.match(
            TOPOLOGY_SIG,
            "; ".join(said) + ".",
            line=signatures.printable(text.strip()),
            lineno=head_at,
            groups={"gpus": str(sum(1 for k in rows if k.startswith("GPU")))},
        )
        f = reading.at_input(m, i, inp, rank=None)
        if any(not g.job for g in findings):
            f.role = CONSEQUENCE  # beside a failure that printed an error: the layout it ran on
        return [f]
    return []
