"""CUDA's own error strings, whichever program prints them: one signature (MD830) that reads
the text of ``cudaGetErrorString`` in each wrapper a distributed job meets and names its class
(:mod:`meshdoctor.signatures.cuda_errors`, built from the CUDA runtime's table):

* nccl-tests: ``Test CUDA failure common.cu:1030 'system not yet initialized'`` (its CUDACHECK);
* NCCL: ``transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported ...'``
  (CUDACHECK / CUCHECK of src/include/checks.h, cudawrap.h: with or without the number);
* PyTorch: ``CUDA error: an illegal memory access was encountered`` (C10_CUDA_CHECK) and
  ``... cudaGetDeviceCount() ... Error 802: system not yet initialized``;
* MLX: ``cudaMallocManaged(&data, size) failed: <text>`` (mlx/backend/cuda/utils.cpp).

The texts other signatures read with a meaning of their own stay theirs: ``no CUDA-capable
device is detected`` (MD684), ``out of memory`` behind NCCL's ``Cuda failure`` (MD800) or behind
``CUDA error`` / ``cuX failed:`` (MD651). The generic cuda.error (MD652) reads the texts this signature does
not know. Codes are stable: never renumber, only add."""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional

from meshdoctor.signatures.cuda_errors import BY_DRIVER, BY_NAME, CLASSES, TABLE
from meshdoctor.signatures.model import CAUSE, CONSEQUENCE, EITHER, signature

_BY_TEXT: Dict[str, List[str]] = {}
for _e in TABLE:
    _BY_TEXT.setdefault(_e.text, []).append(f"{_e.name} = {_e.number}")

_OWN_ELSEWHERE = {BY_NAME["cudaErrorNoDevice"].text}  # MD684's
_OOM = BY_NAME["cudaErrorMemoryAllocation"].text  # MD800's and MD651's behind their wrappers


def _alternation(skip: set) -> str:
    texts = sorted({e.text for e in TABLE} - skip, key=len, reverse=True)
    return "|".join(re.escape(t) for t in texts)


_NO_OOM = _alternation(_OWN_ELSEWHERE | {_OOM})

PATTERN = (
    # nccl-tests' CUDACHECK: "Test CUDA failure common.cu:1030 'system not yet initialized'"
    # (any text: one the table lacks, from a newer CUDA, is still a failed job)
    r"Test CUDA failure (?P<file>[^\s:']+):(?P<line>\d+) '(?P<tmsg>(?!"
    + re.escape(BY_NAME["cudaErrorNoDevice"].text)
    + r"')(?:(?:"
    + _alternation(_OWN_ELSEWHERE)  # a known text first: some hold an apostrophe
    + r")(?=')|[^'\n]+))'"
    # NCCL's WARN (with the file it names), PyTorch's and MLX's wrappers
    r"|(?:(?P<site>[\w/.-]+\.(?:cc|cu|cpp|h)):(?P<at>\d+) NCCL WARN )?"
    r"(?:Cuda failure (?:(?P<num>\d+) )?'|CUDA error:? |"
    # vLLM's and other extensions' CUDACHECK: "Cuda error /path/custom_all_reduce.cuh:307 '...'"
    r"Cuda error [\w/.-]+:\d+ '|"
    # TensorRT-LLM's check_cuda_error: "CUDA runtime error in cudaMemcpy: <text>"
    r"CUDA runtime error in [\w:]+: |"
    r"(?:Unexpected error from cu\w+\(\)[^\n]*?)?\bError (?P<enum>\d+): |"
    r"\bcu[A-Za-z]+(?:\([^)]*\))? failed: )"
    r"(?P<msg>" + _NO_OOM + r")(?=$|['\".,;:)\s])"
    # the driver API's name of it, as XLA/JAX and cuda-python print it: "operation
    # cuInit(0) failed: CUDA_ERROR_NOT_INITIALIZED" (the out-of-memory and no-device ones
    # are MD651's and MD684's)
    r"|(?:\bfailed|[Ee]rror):? (?P<drv>(?!CUDA_ERROR_OUT_OF_MEMORY\b|CUDA_ERROR_NO_DEVICE\b)"
    r"CUDA_ERROR_[A-Z0-9_]+)\b"
    # the runtime's own enum names, as cuda-python prints them: "CUDA Runtime API error:
    # <cudaError_t.cudaErrorInvalidDevice: 101>"
    r"|[Ee]rror:? <?(?:cudaError_t\.)?(?P<rtn>(?!cudaErrorMemoryAllocation\b|cudaErrorNoDevice\b)"
    r"cudaError[A-Z]\w+)\b"
)
# a known text right after a wrapper (cuda.error, MD652, reads the others)
KNOWN = r"(?:" + _NO_OOM + r")(?=$|['\".,;:)\s])"

# the classes whose failure is the echo of another, or may be
_ROLES = {
    "cuda.prior-failure": CONSEQUENCE,
    "cuda.invalid-argument": EITHER,
    "cuda.api-misuse": EITHER,
    "cuda.timeout": EITHER,
}


def _text(groups: Mapping[str, str]) -> str:
    named = BY_DRIVER.get(groups.get("drv") or "") or BY_NAME.get(groups.get("rtn") or "")
    return groups.get("msg") or groups.get("tmsg") or (named.text if named else "")


# (NCCL file, CUDA text or None for any, what a failure there says), first match wins
_SITE_NOTES = (
    # enqueue.cc launches NCCL's kernels: an argument the GPU refuses there is the launch's
    # own (shared memory, grid), not the program's (NVIDIA/nccl-tests #287)
    (
        "enqueue.cc",
        "invalid argument",
        ", where NCCL launches its kernels: the launch itself was refused (its shared memory "
        "or grid size), which points at an NCCL release that does not support this GPU or "
        "driver, not at the program's arguments: upgrade (or change) NCCL, e.g. 2.25.1 to "
        "2.26.2 or later",
    ),
    # a stream or event of another device than the current one (CUDA Runtime API:
    # cudaErrorInvalidResourceHandle); PyTorch 2.3 left ranks on device 0 (pytorch #130414)
    (
        "enqueue.cc",
        "invalid resource handle",
        ", where NCCL launches on the communicator's stream: the calling thread's current "
        "CUDA device is not the communicator's, so the stream or event belongs to another "
        "device: a rank that never set its device runs on GPU 0 (PyTorch 2.3's "
        "ProcessGroupNCCL left such ranks there, pytorch #130414, fixed by #130921): call "
        "torch.cuda.set_device(local_rank) before the first collective, or pass device_id to "
        "init_process_group",
    ),
    # NVLS: NVLink SHARP multicast buffers (src/transport/nvls.cc)
    (
        "nvls.cc",
        None,
        ", in NCCL's NVLS (NVLink SHARP multicast) setup: the NVSwitch multicast path, not the "
        "program's buffers: NCCL_NVLS_ENABLE=0 on every rank turns it off (and check Fabric "
        "Manager); where it is already set, it did not reach this process: a worker that an "
        "engine or a framework spawns may not inherit the launcher's environment (pass it "
        "through the engine's own list of variables for its workers, Ray's runtime_env)",
    ),
)


def cuda_error(groups: Mapping[str, str]) -> Optional[str]:
    """Which CUDA error the text of a match is (its cudaError_t names and numbers, from the
    table) and where it was printed (the NCCL or nccl-tests file and line), or None."""
    text = _text(groups)
    if not text:
        return None
    names = _BY_TEXT.get(text) or ["not in the CUDA 13.0 table: a newer CUDA's or a library's text"]
    where = ""
    if groups.get("site"):
        where = f" in NCCL's {groups['site']}:{groups.get('at', '?')}"
        where += next(
            (
                note
                for site, said, note in _SITE_NOTES
                if groups["site"].endswith(site) and said in (text, None)
            ),
            "",
        )
    elif groups.get("file"):
        where = f" in nccl-tests' {groups['file']}:{groups.get('line', '?')}"
    elif groups.get("drv") == "CUDA_ERROR_NOT_INITIALIZED":
        # CUDA Driver API, CUresult: "the CUDA driver has not been initialized with cuInit()
        # or ... initialization has failed"
        where = (
            ", as the driver API names it: a driver call came before cuInit() or cuInit "
            "failed; when the call it names is a query (a device attribute, a count) of a "
            "library's own start-up, that library called the driver before initialising it, "
            "a bug of its release (its issue tracker, an earlier or later release)"
        )
    return f"CUDA error '{text}' ({', '.join(names)}){where}"


def role_of(groups: Mapping[str, str]) -> Optional[str]:
    """The role of a match by its class (:data:`_ROLES`), None (the signature's own) else."""
    sig = SIGNATURES[0]
    cls = sig.failure_class(groups)
    return _ROLES.get(cls.name) if cls is not None else None


SIGNATURES = (
    signature(
        "MD830",
        "cuda.failure",
        PATTERN,
        "A CUDA call failed with a CUDA runtime error text (cudaGetErrorString, printed by "
        "nccl-tests, NCCL, PyTorch or MLX): its class says what it means, why and what helps.",
        "The lines that follow it (NCCL's trace lines, the launcher aborting the job, peers "
        "that lost this rank) are its consequences.",
        "CUDA Runtime API cudaError_t (CUDA 13.0 driver_types.h, cudaGetErrorString); "
        "nccl-tests src/common.h (CUDACHECK); NCCL v2.30.7 src/include/checks.h, cudawrap.h; "
        "MLX v0.32.1 mlx/backend/cuda/utils.cpp; NVIDIA/nccl-tests #264, #338; NVIDIA/nccl "
        "#976, #1838",
        role=CAUSE,
        refine=cuda_error,
        classes=CLASSES,
        class_remedy=True,
        role_of=role_of,
        role_note="A failure caused by an earlier one (a prior launch failure, a destroyed "
        "context, the runtime unloading) is a consequence; an invalid argument, an API "
        "misuse or a wait that timed out is either.",
        examples=(
            # NVIDIA/nccl-tests #338
            "gpu: Test CUDA failure common.cu:1030 'system not yet initialized'",
            # NVIDIA/nccl #1838
            "[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN "
            "Cuda failure 217 'peer access is not supported between these two devices'",
            # NVIDIA/nccl #976
            "transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'",
            # PyTorch's torch.cuda init (c10/cuda/CUDAFunctions.cpp)
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? "
            "Error 802: system not yet initialized",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CUDA error: an illegal memory access was encountered at /mlx/backend/cuda/eval.cpp:61",
            # MLX v0.32.1 mlx/backend/cuda/utils.cpp
            "RuntimeError: cudaStreamSynchronize(stream) failed: uncorrectable ECC error "
            "encountered",
            "node1: Test CUDA failure common.cu:892 'out of memory'",
            # a text of a CUDA newer than the table: read, without a class
            "node1: Test CUDA failure common.cu:892 'a new error of CUDA 14'",
        ),
    ),
)
