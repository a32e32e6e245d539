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
    r"|(?:(?P<site>[\w/.-]{1,200}\.(?:cc|cu|cpp|h)):(?P<at>\d+) NCCL WARN )?"
    r"(?:Cuda failure (?:(?P<num>\d+) )?'|CUDA error:? |"
    # vLLM's and other extensions' CUDACHECK: "Cuda error /path/custom_all_reduce.cuh:307 '...'"
    r"Cuda error [\w/.-]+:\d+ '|"
    # the CUDA samples' checks: "Failed to allocate device vector A (error code <text>)!"
    r"\(error code |"
    # PyTorch extensions' and SGLang's checks: "RuntimeError: CUDART error: <text>"
    r"CUDART error: |"
    # TensorRT-LLM's check_cuda_error: "CUDA runtime error in cudaMemcpy: <text>"
    r"CUDA runtime error in [\w:]+: |"
    r"(?:Unexpected error from cu\w+\(\)[^\n]*?)?\bError (?P<enum>\d+): |"
    r"\b(?P<call>cu[A-Za-z]+)(?:\([^)]*\))? failed: )"
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
    # a fault of NCCL's own kernels, seen at its next launch: an NCCL release's bug on GPUs
    # newer than it (NCCL 2.26.2, PyTorch 2.7's wheel, on RTX 5090: vllm-project/vllm #19890)
    (
        "enqueue.cc",
        "an illegal memory access was encountered",
        ", where NCCL launches its kernels: a kernel faulted (NCCL's own, or one before it on "
        "the stream); with no hardware error in the kernel log, most often the NCCL release's "
        "own bug on a GPU newer than it (NCCL 2.26.2, bundled with PyTorch 2.7, on RTX 5090 "
        "Blackwell GPUs: vllm-project/vllm #19890): upgrade the NCCL wheel (`pip install -U "
        "nvidia-nccl-cu12`; `python -c 'import torch; print(torch.cuda.nccl.version())'` "
        "says which one loads)",
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


# the CUDA managed-memory calls (CUDA Runtime API, Unified Memory) MLX's allocator makes first
_MANAGED = ("cudaMemAdvise", "cudaMallocManaged", "cudaMemPrefetchAsync")


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
    elif groups.get("call") in _MANAGED:
        # MLX's CUDA allocator sets up its pool of managed memory when mlx.core is imported
        where = (
            f", in {groups['call']}: MLX's CUDA allocator uses CUDA managed (unified) memory "
            "from the moment mlx.core is imported, so a GPU runtime that does not implement "
            "managed memory or its advice refuses it at once: a sandbox's GPU proxy (gVisor's "
            "nvproxy, as on Modal: google/gvisor #12034), a virtual GPU or a driver without "
            "it; run on a runtime that passes the GPU through whole (runc, a plain VM or host)"
        )
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


# nvidia-container-cli's "<stage> error: <detail>" (libnvidia-container src/cli): what a stage's
# failure says, most specific first: (stage, words of the detail or None, the reading)
_HOOK_STAGES = (
    (
        "ldcache",
        None,
        "the hook runs the container's ldconfig to rebuild its library cache after mounting the "
        "driver (nvidia-container-cli --ldconfig), and that ldconfig failed: an image whose "
        "ldconfig is elsewhere than the hook says, or a nested container or GPU cgroup setup "
        "under which it cannot run. Drop the --ldconfig argument from the hook's "
        "nvidia-container-cli call (enroot's 98-nvidia.sh) so the image's own cache is kept, "
        "or set the ldconfig path of /etc/nvidia-container-runtime/config.toml (ldconfig = "
        '"@/sbin/ldconfig.real" on Debian and Ubuntu hosts)',
    ),
    (
        "initialization",
        ("driver not loaded", "nvml error"),
        "the host's NVIDIA driver is not loaded (the kernel module): `nvidia-smi` on the host "
        "fails too; load it (`modprobe nvidia`, or reinstall the driver for this kernel)",
    ),
    (
        "initialization",
        ("load library failed",),
        "the driver's user-space libraries (libnvidia-ml, libcuda) are not on the host where "
        "the hook looks: install the driver's user-space part, or point the toolkit at it",
    ),
    (
        "requirement",
        ("cuda>=", "unsatisfied condition"),
        "the image asks for a newer CUDA than the host's driver supports (its "
        "NVIDIA_REQUIRE_CUDA): upgrade the host's driver, or use an image built for an older "
        "CUDA",
    ),
    (
        "mount",
        ("device rules", "bpf_prog_query", "device filters"),
        "the hook could not add the container's device-cgroup rules (the eBPF device filter "
        "of cgroup v2): a regression of libnvidia-container 1.17.7 under enroot and pyxis "
        "(NVIDIA/nvidia-container-toolkit #1093); pin libnvidia-container and the toolkit to "
        "1.17.6, or upgrade to a release that fixes it (`nvidia-container-cli --version`)",
    ),
    (
        "mount",
        ("file exists",),
        "the image already holds NVIDIA driver libraries where the hook mounts the host's: "
        "rebuild the image without them (the driver comes from the host)",
    ),
    (
        "detection",
        None,
        "NVIDIA_VISIBLE_DEVICES (or the GPU request) names a GPU the host does not have: list "
        "them with `nvidia-smi -L`",
    ),
)


def container_hook(groups: Mapping[str, str]) -> Optional[str]:
    """What nvidia-container-cli's failed stage (groups ``stage``, ``detail``) says
    (:data:`_HOOK_STAGES`), or None for a stage without a reading."""
    stage, detail = groups.get("stage", "").strip(), groups.get("detail", "").lower()
    return next(
        (
            f"the {stage} stage failed: {reading}"
            for name, words, reading in _HOOK_STAGES
            if stage == name and (words is None or any(w in detail for w in words))
        ),
        None,
    )


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
    signature(
        "MD863",
        "cuda.no-driver-in-process",
        r"rror: Found no NVIDIA driver on your system",
        "PyTorch found no NVIDIA driver in this process's view: neither the driver's library "
        "(libcuda) nor the GPUs' device nodes are there. On a host with GPUs this is almost "
        "always a container whose runtime did not inject the driver: enroot and pyxis inject "
        "it (their 98-nvidia hook) only when NVIDIA_VISIBLE_DEVICES is set, which NVIDIA's "
        "images set and a custom image does not; Docker without --gpus; a Kubernetes pod "
        "without the nvidia runtime class or a GPU request. On the host itself: the driver's "
        "kernel module not loaded.",
        "In an enroot or pyxis container, set NVIDIA_VISIBLE_DEVICES=all (in srun's "
        "environment, an enroot environment file, or the image's ENV; with it "
        "NVIDIA_DRIVER_CAPABILITIES=compute,utility); with Docker, `docker run --gpus all`; in "
        "a pod, a nvidia.com/gpu limit and the nvidia runtime class. `nvidia-smi` inside the "
        "container must then list the GPUs. On the host: `nvidia-smi`, `lsmod | grep nvidia`.",
        "PyTorch torch.cuda (_lazy_init: 'Found no NVIDIA driver on your system'); enroot "
        "doc/standard-hooks.md (98-nvidia.sh acts only with NVIDIA_VISIBLE_DEVICES set); "
        "NVIDIA Container Toolkit documentation (NVIDIA_VISIBLE_DEVICES, "
        "NVIDIA_DRIVER_CAPABILITIES)",
        causes=[
            (
                "a container image that does not set NVIDIA_VISIBLE_DEVICES, run by enroot or "
                "pyxis",
                "the same image sees the GPUs under `docker run --gpus all`; NVIDIA's images work",
            ),
            (
                "a container started without a GPU request",
                "docker without --gpus; a pod without a nvidia.com/gpu limit",
            ),
            ("the host's driver not loaded", "`nvidia-smi` fails on the host too"),
        ],
        examples=(
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        ),
    ),
    signature(
        "MD864",
        "container.nvidia-hook",
        r"nvidia-container-cli: (?P<stage>[\w ]+?) error: (?P<detail>.*)",
        "The NVIDIA container hook (libnvidia-container's nvidia-container-cli, which Docker's "
        "nvidia runtime, enroot's 98-nvidia.sh hook and the Kubernetes toolkit run) could not "
        "set the container up for the GPU: the container does not start, or starts without "
        "the driver.",
        "Read the stage it names (after 'Here:'); then start the container by hand with the "
        "same runtime and `nvidia-smi` inside it (`enroot start --env "
        "NVIDIA_VISIBLE_DEVICES=all IMAGE nvidia-smi`, `docker run --gpus all IMAGE "
        "nvidia-smi`) until it lists the GPUs.",
        "libnvidia-container (nvidia-container-cli's stage errors: initialization, ldcache, "
        "mount, requirement, detection); enroot doc/standard-hooks.md (98-nvidia.sh); NVIDIA "
        "Container Toolkit config.toml (ldconfig)",
        causes=[
            (
                "the container's ldconfig failing under the hook (ldcache)",
                "'ldcache error: process ... ldconfig... failed'",
            ),
            ("the host's driver not loaded (initialization)", "'nvml error: driver not loaded'"),
            (
                "an image that needs a newer driver (requirement)",
                "'unsatisfied condition: cuda>=...'",
            ),
        ],
        refine=container_hook,
        examples=(
            "nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig.real failed with "
            "error code: 1",
            "nvidia-container-cli: initialization error: nvml error: driver not loaded",
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
            "update your driver to a newer version, or use an earlier cuda container",
        ),
    ),
    signature(
        "MD865",
        "container.enroot-hook-failed",
        r"\[ERROR\] (?P<hook>/\S*/hooks\.d/(?P<name>[\w.-]+)) exited with return code "
        r"(?P<rc>\d+)",
        "enroot's container start hook failed, so enroot (and pyxis, for srun "
        "--container-image) did not start the container. The hook's own error is printed just "
        "before this line: 98-nvidia.sh runs nvidia-container-cli (the GPU driver), "
        "99-mellanox.sh mounts the RDMA devices.",
        "Read the hook's own error on the line before; run the hook's step by hand on the "
        "node (`enroot start` of the same image with the same environment) until it passes.",
        "enroot (its hooks in /etc/enroot/hooks.d; doc/standard-hooks.md)",
        role=EITHER,
        examples=("[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",),
    ),
    signature(
        "MD815",
        "mlx.cuda-jit",
        r"Error in parsing name expression for lowered name lookup",
        "MLX's CUDA backend compiles some kernels when they are first used (NVRTC, CUDA's "
        "run-time compiler), and NVRTC refused one: the kernel's source or its name "
        "expression (the kernel and its template types, as MLX wrote it) did not compile. "
        "MLX's own bug for that kernel and dtype (a complex64 gather named with an "
        "unqualified complex64_t, fixed in MLX PR #2775), or an NVRTC of another CUDA than "
        "MLX's CUDA build; not the network or the distributed backend.",
        "Upgrade MLX (and its CUDA wheel, mlx[cuda12] or mlx[cuda13], with it); meanwhile "
        "avoid the dtype or operation the kernel name shows (for a complex64 gather, index "
        "real and imaginary parts apart); if a current MLX fails the same way, report the "
        "name expression to MLX with `python -c 'import mlx.core as mx; print(mx.__version__)'`.",
        "MLX mlx/backend/cuda/jit_module.cpp (NVRTC compile and lowered-name lookup), "
        "mlx/backend/cuda/utils.cpp (dtype_to_cuda_type); "
        "https://github.com/ml-explore/mlx/pull/2775; NVRTC documentation "
        "(nvrtcGetLoweredName, nvrtcResult)",
        causes=[
            (
                "an MLX kernel whose name expression names a type NVRTC cannot resolve (a "
                "release bug for one dtype)",
                "the name expression in the message (mlx::core::cu::KERNEL<TYPES>)",
            ),
            (
                "an NVRTC of another CUDA version than MLX's CUDA build",
                "NVRTC_ERROR_* at every kernel",
            ),
        ],
        examples=(
            "__nv_name_map(17): error: Error in parsing name expression for lowered name lookup. "
            'Input name expression was: " mlx :: core :: cu :: gather < complex64_t, uint32_t, '
            '1, 6, int64_t >"',
        ),
    ),
    signature(
        "MD819",
        "cuda.nvrtc-compile",
        r"Nvrtc Error \d+|NVRTC error: NVRTC_ERROR_\w+|^\s*(?P<src><null>|[\w./-]+\.cu)\(\d+\): "
        r"error: (?!Error in parsing name expression)(?P<msg>.*)",
        "A CUDA kernel compiled at run time (NVRTC, CUDA's run-time compiler) did not "
        "compile: the source the program generated for this GPU is code this CUDA "
        "toolkit's headers reject. A bug of the program's code generator (MLX's CUDA JIT, "
        "tinygrad, Triton, a custom kernel) for this dtype or this CUDA version; not the "
        "driver, the network or the mesh.",
        "Read the compiler's error and the generated line under it (the construct it "
        "rejects); upgrade the program that generated it (a fix for this dtype or CUDA "
        "version may exist), or install the CUDA toolkit version it supports; where a dtype "
        "conversion is ambiguous, run the model in another dtype (float16 or float32) until "
        "then; report it with the error and the CUDA version (`nvcc --version`).",
        "NVRTC documentation (nvrtcCompileProgram, NVRTC_ERROR_COMPILATION, the program log's "
        "'NAME(LINE): error:' diagnostics); CUDA cuda_fp16.hpp and cuda_bf16.hpp (the __half "
        "and __nv_bfloat16 conversions)",
        causes=[
            (
                "a conversion CUDA's headers make ambiguous (bfloat16 to half: several "
                "user-defined conversions apply; cast through float32)",
                '\'more than one user-defined conversion from "nv_bfloat16" to "half"\'',
            ),
            (
                "a generator written against another CUDA toolkit",
                "the error at every kernel after a CUDA upgrade",
            ),
        ],
        refine=lambda g: (
            "bfloat16 and half (float16) convert through several constructors in CUDA's "
            "fp16 headers, so a direct cast between them is ambiguous: the code that casts "
            "should go through float32 (bfloat16 to float32 to float16); upgrade the program "
            "whose generated kernel this is, or load the model in float16 or float32"
            if "nv_bfloat16" in g.get("msg", "") and "half" in g.get("msg", "")
            else None
        ),
        role=EITHER,
        role_of=lambda g: None if g.get("msg") else CONSEQUENCE,
        role_note="The summary line ('Nvrtc Error 6', NVRTC_ERROR_COMPILATION) is the "
        "compiler's diagnostic's consequence: the 'NAME(LINE): error:' line says what failed.",
        examples=(
            '<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to '
            '"half" applies:',
            "Error processing prompt (see logs with DEBUG>=2): Nvrtc Error 6, "
            "NVRTC_ERROR_COMPILATION",
        ),
    ),
)
