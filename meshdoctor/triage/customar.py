"""An inference engine's own custom all-reduce in play when a CUDA error or a hang ends the job.

vLLM, SGLang and TensorRT-LLM replace NCCL's all-reduce for small tensors inside a tensor
parallel group with a kernel of their own that writes straight into the other GPUs' memory
through CUDA IPC handles exchanged at start (vLLM ``vllm/distributed/device_communicators/
custom_all_reduce.py`` and ``csrc/custom_all_reduce.cuh``; SGLang ``sglang/srt/distributed/
device_communicators/custom_all_reduce.py``; TensorRT-LLM ``customAllReduceKernels.cu``,
``AllReduceStrategy``). Its failures print no word of its own: an illegal memory access or an
invalid argument in a later kernel, an invalid resource handle when a handle is opened, a
hang when a GPU waits for a flag another one never writes (CUDA graph capture, buffers moved by
a memory saver, handles of another node, P2P that the platform does not really provide). The
engines' switch to rule it out is ``--disable-custom-all-reduce`` (vLLM, SGLang;
``disable_custom_all_reduce=True`` in Python). Triage names it with MD878, a finding it makes
itself.

The rule (:func:`readings`): some finding is a CUDA failure of the kinds above (an illegal
memory access, an invalid argument or handle, peer access; not out of memory or a missing
driver) or a hang (a watchdog timeout, a hang read from the output or a stack), and the logs
read (their first and last bytes) show the custom all-reduce in play: a frame or a line of its
code (``custom_all_reduce.py``, ``custom_all_reduce.cuh``, ``customAllReduce``,
``CustomAllreduce``) or the engine's settings saying it is on
(``disable_custom_all_reduce=False``, ``use_custom_all_reduce=True``,
``--enable-custom-all-reduce``), with no line saying it is off
(``disable_custom_all_reduce=True``, ``--disable-custom-all-reduce``, vLLM's ``Custom allreduce
is disabled``) and no tensor parallel size of 1 (``tensor_parallel_size=1``: there is no group
to reduce in). PyTorch's ``expandable_segments:True`` beside it is named: its buffers are CUDA
virtual memory, which the legacy ``cudaIpcGetMemHandle`` of the custom all-reduce refuses (vllm
#42609). The finding names the first such line and comes just before the failures it explains,
which become its consequences (:func:`meshdoctor.triage.reading.explains`); its text says
whether the code was seen failing or only the setting (then it is the lead to rule out first).
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

CODE = "MD878"

CUSTOM_AR_SIG = signature(
    CODE,
    "triage.custom-allreduce",
    None,
    "The engine's own custom all-reduce (vLLM, SGLang, TensorRT-LLM: a kernel that writes "
    "into the other GPUs' memory through CUDA IPC handles, used instead of NCCL for small "
    "tensors of a tensor parallel group) was in play when the job failed with a CUDA error "
    "or hung. Its failures name no component of their own: an illegal memory access or "
    "invalid argument in a later kernel, an invalid resource handle opening a peer's "
    "buffer, or GPUs waiting for a flag that a peer never writes.",
    "Rule it out first: rerun with the custom all-reduce off (`--disable-custom-all-reduce` "
    "for vLLM and SGLang, `disable_custom_all_reduce=True` in Python; TensorRT-LLM: "
    "`allreduce_strategy` NCCL) and, if it started under CUDA graphs, with eager mode too "
    "(`--enforce-eager`, SGLang `--disable-cuda-graph`). If that fixes it, keep it off and "
    "report the engine version with the GPUs' `nvidia-smi topo -m`: the known triggers are "
    "P2P that the platform does not provide (PCIe through the CPU, VMs, ACS on), buffers "
    "moved after the handles were exchanged (sleep mode, memory savers, weight reloads) and "
    "IPC handles of one node used on another (tensor parallel across nodes).",
    "vLLM vllm/distributed/device_communicators/custom_all_reduce.py and "
    "csrc/custom_all_reduce.cuh (--disable-custom-all-reduce); SGLang "
    "sglang/srt/distributed/device_communicators/custom_all_reduce.py; TensorRT-LLM "
    "customAllReduceKernels.cu (AllReduceStrategy); CUDA Runtime API: cudaIpcOpenMemHandle",
    examples=(),
    causes=[
        (
            "P2P between the GPUs that the platform does not provide (PCIe through the CPU, "
            "a VM, ACS on)",
            "`nvidia-smi topo -m` shows SYS/NODE between the GPUs; the failure goes away "
            "with --disable-custom-all-reduce",
        ),
        (
            "the buffers moved after their IPC handles were exchanged (sleep mode, a memory "
            "saver, weights reloaded)",
            "the failure follows a wake-up, an offload or a weight update",
        ),
        (
            "tensor parallel across nodes: one node's IPC handles opened on another",
            "invalid resource handle at start; the group spans hosts",
        ),
        (
            "a bug of the engine's kernel under CUDA graph capture",
            "the failure goes away with eager mode (--enforce-eager)",
        ),
    ],
)

CUSTOM_AR_SIG = with_why(
    CUSTOM_AR_SIG,
    "The CUDA error or the hang that ends the job is where the custom all-reduce's fault "
    "shows, not where it happened: turning it off is the test that tells.",
)

ENTRY = entry(CUSTOM_AR_SIG, "triage engine custom all-reduce in play")

# its code in a frame or a line (a traceback, vLLM's "Cuda error .../custom_all_reduce.cuh:307")
_CODE_LINE = re.compile(
    r"custom_all_reduce(?:_utils)?\.(?:py|cuh|cu)\b|\bcustomAllReduce\w*|\bCustomAllreduce\b|"
    r"\bcustom_ar\.(?:py|cu)\b"
)
_ON = re.compile(
    r"\bdisable_custom_all_reduce\s*[=:]\s*['\"]?False\b|\buse_custom_all_reduce\s*[=:]\s*"
    r"['\"]?True\b|--enable-custom-all-reduce\b"
)
_OFF = re.compile(
    r"\bdisable_custom_all_reduce\s*[=:]\s*['\"]?True\b|--disable-custom-all-reduce\b|"
    r"\bCustom allreduce is disabled\b|\buse_custom_all_reduce\s*[=:]\s*['\"]?False\b"
)
# PyTorch's allocator on CUDA virtual memory (cuMemCreate/cuMemMap), whose pointers the legacy
# cudaIpcGetMemHandle refuses (CUDA Runtime API; vllm #42609)
_EXPANDABLE = re.compile(r"expandable_segments\s*:\s*True")
_TP1 = re.compile(r"\btensor_parallel_size\s*[=:]\s*1\b|--(?:tensor-parallel-size|tp)[= ]1\b")

_LOGS = ("log", "stdin")
_HANGS = ("triage.hang-without-error", "triage.hang-in-stack", "nccl.watchdog-timeout")


# the CUDA errors a kernel writing into peers' memory, or opening their handles, ends with
_ITS_CUDA = re.compile(
    r"illegal memory access|illegal address|invalid argument|invalid resource handle|"
    r"peer access|misaligned address|unspecified launch failure|invalid device pointer|"
    r"illegal instruction|stream is capturing|operation not permitted|ILLEGAL_ADDRESS|"
    r"INVALID_VALUE|INVALID_HANDLE",
    re.I,
)


def _bears(f: Finding) -> bool:
    """Whether ``f`` is the kind of failure a custom all-reduce makes: a hang, or a CUDA error
    of a kernel writing into peers' memory (not out of memory, a missing device or driver)."""
    name = f.match.name
    if name in _HANGS:
        return True
    cuda = name.startswith("cuda.") or name == "nccl.cuda-error"
    return cuda and bool(_ITS_CUDA.search(f.match.line))


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD878 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read (their index gives the finding's ``seq``); ``findings`` the
    others (a CUDA failure or a hang among them)."""
    if not any(_bears(f) for f in findings):
        return []
    code: Optional[Tuple[int, int, str]] = None  # (input index, line, text)
    on: Optional[Tuple[int, int, str]] = None
    expandable = False
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            if _OFF.search(text) or _TP1.search(text):
                return []
            expandable = expandable or bool(_EXPANDABLE.search(text))
            if code is None and _CODE_LINE.search(text):
                code = (i, lineno, text.strip())
            if on is None and _ON.search(text):
                on = (i, lineno, text.strip())
    at = code or on
    if at is None:
        return []
    i, lineno, text = at
    if code:
        here = "its code is in the failing output (a frame or a line of the custom all-reduce)."
    else:
        here = (
            "the engine's settings have it on (no line says it was disabled); nothing shows "
            "its code failing, so it is the lead to rule out first."
        )
    if expandable:
        here = (
            here[:-1] + "; and PYTORCH_CUDA_ALLOC_CONF has expandable_segments:True: PyTorch "
            "then backs its tensors with CUDA virtual memory (cuMemMap), whose pointers the "
            "custom all-reduce's cudaIpcGetMemHandle refuses ('invalid argument'): drop "
            "expandable_segments, or keep it and turn the custom all-reduce off (vllm #42609)."
        )
    m = reading.match(
        CUSTOM_AR_SIG,
        here,
        line=signatures.printable(text),
        lineno=lineno,
        groups={"evidence": "code" if code else "setting"},
    )
    return [reading.explains(m, inputs[i], [f for f in findings if _bears(f)])]
