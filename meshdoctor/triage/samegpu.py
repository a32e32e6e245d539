"""Two ranks of one communicator on the same GPU: NCCL's init line of each rank
(``ncclCommInitRank comm 0x... rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0x...
- Init START``, NCCL_DEBUG=INFO) names the GPU it runs on by bus id; two ranks of one
communicator (the same ``commId``, else the same ``nranks`` on one host) with the same host
and bus id share a GPU, which NCCL refuses (``Duplicate GPU detected``, ncclInvalidUsage).
The cause is how the ranks were given their GPUs (CUDA_VISIBLE_DEVICES, a container or pod
that exposes one GPU to several ranks, no ``torch.cuda.set_device(local_rank)``). Triage names
it with MD896, a finding it makes itself across the inputs.

The rule (:func:`readings`): in the logs read (their first and last bytes), two init lines of
different ranks of one communicator on one host name the same bus id. Its role is ``cause``:
the invalid-usage error that follows is its consequence.
"""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD896"

SAMEGPU_SIG = signature(
    CODE,
    "triage.ranks-share-a-gpu",
    None,
    "Two ranks of one NCCL communicator run on the same GPU: their init lines name the same "
    "host and bus id. NCCL needs a GPU of its own for each rank of a communicator and fails "
    "the init ('Duplicate GPU detected', ncclInvalidUsage: 'invalid usage').",
    "Give every rank its own GPU: set CUDA_VISIBLE_DEVICES per rank (or call "
    "torch.cuda.set_device(local_rank) before init), expose as many GPUs to the container or "
    "pod as it runs ranks (Kubernetes: nvidia.com/gpu equal to the ranks of the pod), and "
    "check the launcher's ranks per host against the GPUs there (`nvidia-smi -L`).",
    "NCCL v2.30.7 src/init.cc ('Duplicate GPU detected : rank %d and rank %d both on CUDA "
    "device %lx'; the init line 'ncclCommInitRank comm %p rank %d nranks %d cudaDev %d "
    "nvmlDev %d busId %lx commId 0x%llx - Init START'); "
    "https://github.com/NVIDIA/TensorRT-LLM/issues/9263",
    examples=(),
    causes=[
        (
            "CUDA_VISIBLE_DEVICES the same for every rank, or unset with no per-rank device",
            "every rank's init line says cudaDev 0",
        ),
        (
            "a container or pod given fewer GPUs than it runs ranks",
            "`nvidia-smi -L` inside it lists fewer GPUs than ranks",
        ),
    ],
)

SAMEGPU_SIG = with_why(
    SAMEGPU_SIG,
    "No line says two ranks share a GPU in these words; NCCL's invalid usage that follows "
    "is its consequence.",
)

ENTRY = entry(SAMEGPU_SIG, "triage two ranks on one GPU")

_INIT = re.compile(
    r"^\s*(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[\d+\] NCCL INFO \w+ comm 0x[0-9a-f]+ rank "
    r"(?P<rank>\d+) nranks (?P<n>\d+) cudaDev (?P<dev>\d+)(?: nvmlDev \d+)? busId "
    r"(?P<bus>[0-9a-f]+)(?: commId (?P<comm>0x[0-9a-f]+))?"
)
_LOGS = ("log", "stdin")


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD896 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (unused)."""
    del findings
    # (host, communicator, bus id) -> rank -> (input index, line number, text)
    seen: Dict[Tuple[str, str, str], Dict[str, Tuple[int, int, str]]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            if "ncclCommInit" not in text and "comm 0x" not in text:
                continue
            m = _INIT.search(text)
            if m:
                key = (m.group("host"), m.group("comm") or f"nranks {m.group('n')}", m["bus"])
                seen.setdefault(key, {}).setdefault(m.group("rank"), (i, lineno, text.strip()))
    for (host, comm, bus), ranks in seen.items():
        if len(ranks) < 2:
            continue
        (r1, (i, lineno, text)), (r2, _) = sorted(ranks.items(), key=lambda kv: kv[1])[:2]
        m = reading.match(
            SAMEGPU_SIG,
            f"ranks {r1} and {r2} of communicator {comm} both run on {host}'s GPU at bus id {bus}.",
            line=signatures.printable(text),
            lineno=lineno,
            groups={"host": host, "busId": bus},
        )
        f = reading.at_input(m, i, inputs[i], rank=None)
        f.host = f.host or host
        return [f]
    return []
