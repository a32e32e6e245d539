"""The CUDA runtime's error strings, grouped into failure classes.

:data:`TABLE` is ``sites/cuda.tsv`` (made by ``tools/extract_cuda_errors.py`` from a CUDA
toolkit's ``driver_types.h`` and ``libcudart``'s ``cudaGetErrorString``: number, cudaError_t
name, the CUresult of that number, the text). Every row belongs to one class of
:data:`GROUPS` (``tests/unit/signatures/test_cuda_errors.py`` fails on a row none names), and
each class is a :class:`~meshdoctor.signatures.model.FailureClass` whose regex is built from its
rows' texts: the meaning, cause and remedy hold whichever wrapper printed the text
(:mod:`meshdoctor.signatures.cuda`). Two classes come first and read the NCCL source file a
``Cuda failure`` came from (group ``site``): NVLS (``transport/nvls.cc``) and the SHM
transport's cuMem host memory (``transport/shm.cc``), whose CUDA errors mean something of
their own.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Dict, List, NamedTuple, Tuple

from meshdoctor.signatures.model import FailureClass, failure_class


class CudaError(NamedTuple):
    """One row of ``sites/cuda.tsv``: ``number``, ``name`` (cudaError_t), ``driver`` (the
    CUresult name of that number, or ``-``), ``text`` (cudaGetErrorString)."""

    number: int
    name: str
    driver: str
    text: str


def load() -> Tuple[List[CudaError], List[Tuple[str, str]]]:
    """The rows of ``sites/cuda.tsv`` and its provenance (``#`` lines as ``(key, value)``)."""
    raw = resources.files("meshdoctor.signatures").joinpath("sites", "cuda.tsv")
    rows: List[CudaError] = []
    prov: List[Tuple[str, str]] = []
    for line in raw.read_text("utf-8").splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition("\t")
            prov.append((key.strip(), value.strip()))
            continue
        parts = line.split("\t")
        if len(parts) != 4 or parts[0] == "number":
            continue
        rows.append(CudaError(int(parts[0]), parts[1], parts[2], parts[3]))
    return rows, prov


TABLE, PROVENANCE = load()
BY_NAME: Dict[str, CudaError] = {e.name: e for e in TABLE}
# the driver API's CUresult names (``CUDA_ERROR_NOT_INITIALIZED``), as XLA, JAX and cuda-python
# print them, to the row of the same number
BY_DRIVER: Dict[str, CudaError] = {e.driver: e for e in TABLE if e.driver != "-"}

_RT = "CUDA Runtime API cudaError_t (CUDA 13.0 driver_types.h, cudaGetErrorString)"

# class name -> (cudaError_t names without the 'cudaError' prefix, meaning, cause, remedy,
# source); in the order tried, after the two NCCL site classes below
GROUPS: Tuple[Tuple[str, Tuple[str, ...], str, str, str, str], ...] = (
    (
        "cuda.system-not-ready",
        ("SystemNotReady",),
        "CUDA reports the system not yet initialized (cudaErrorSystemNotReady, "
        "CUDA_ERROR_SYSTEM_NOT_READY): on an NVSwitch host (HGX/DGX A100, H100, H200, B200) "
        "the GPUs have not completed their NVLink fabric registration, so no CUDA work can "
        "start",
        "the NVIDIA fabric manager (nvidia-fabricmanager, and on Blackwell NVLSM) is not "
        "running or failed: typically after a reboot without the service enabled, or a "
        "fabric manager of another version than the driver",
        "`systemctl enable --now nvidia-fabricmanager` (the same version as the driver, "
        "`nvidia-smi` and `nv-fabricmanager --version`); `nvidia-smi -q | grep -A2 Fabric` "
        "must show State Completed; `journalctl -u nvidia-fabricmanager` says why it failed",
        _RT + "; NVIDIA/nccl-tests #264 (fixed by enabling the fabric manager service), #338",
    ),
    (
        "cuda.driver-mismatch",
        (
            "InsufficientDriver",
            "CallRequiresNewerDriver",
            "SystemDriverMismatch",
            "CompatNotSupportedOnDevice",
            "StubLibrary",
            "UnsupportedPtxVersion",
            "IncompatibleDriverContext",
        ),
        "the CUDA driver on this host does not match the CUDA the program was built for",
        "a driver older than the CUDA runtime of the wheel or toolkit (CUDA 12.x wheels need "
        "a 525+ driver, 13.x a 580+), a user-space libcuda of another version than the kernel "
        "module (a container's compat package), or the stub libcuda found first; in a "
        "container or a Kubernetes pod whose driver is new enough on the host, the runtime "
        "did not inject the host's driver (a pod without runtimeClassName: nvidia where "
        "nvidia is not the default runtime class, docker without --gpus): the image's CUDA "
        "then meets no driver or only its compat library",
        "compare `nvidia-smi` (driver and its highest CUDA) with the program's CUDA (`nvcc "
        "--version`, the wheel's cuda12/cuda13 tag); upgrade the driver or install the build "
        "for the older CUDA; check `ldconfig -p | grep libcuda` (no stubs/ on LD_LIBRARY_PATH); "
        "in a pod, set runtimeClassName: nvidia (or make nvidia the default runtime class) and "
        "check `nvidia-smi` inside it",
        _RT,
    ),
    (
        "cuda.no-kernel-image",
        (
            "NoKernelImageForDevice",
            "InvalidKernelImage",
            "InvalidSource",
            "InvalidPtx",
            "JitCompilerNotFound",
            "JitCompilationDisabled",
            "InvalidDeviceFunction",
            "UnsupportedDevSideSync",
            "SharedObjectSymbolNotFound",
            "SharedObjectInitFailed",
            "FileNotFound",
            "SymbolNotFound",
            "FunctionNotLoaded",
        ),
        "the binary has no code this GPU can run (no kernel image for its compute "
        "capability, or PTX that could not be compiled for it)",
        "a build (of NCCL, PyTorch, MLX or the program) made for other GPU architectures "
        "than this one (TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES, NVCC_GENCODE), or a "
        "driver too old to JIT the PTX",
        "install a build that includes this GPU's architecture (`nvidia-smi "
        "--query-gpu=compute_cap --format=csv`) or rebuild with it; upgrade the driver",
        _RT,
    ),
    (
        "cuda.out-of-memory",
        ("MemoryAllocation",),
        "a CUDA allocation failed: the GPU is out of memory",
        "the job's model, batch or buffers, or another process, fill the GPU",
        "a smaller per-GPU model or batch; no other process on the GPU (`nvidia-smi`); for "
        "NCCL's own buffers lower NCCL_BUFFSIZE",
        _RT,
    ),
    (
        "cuda.device-visibility",
        ("NoDevice", "InvalidDevice"),
        "the process sees no GPU, or fewer than it asks for (an invalid device ordinal)",
        "CUDA_VISIBLE_DEVICES naming GPUs the host does not have (more ranks on the host than "
        "GPUs, a launcher that numbers ranks past the host's GPUs), or no GPU passed to the "
        "container, or a CUDA_VISIBLE_DEVICES set after CUDA was initialised in the process "
        "(CUDA reads it once, at its first call: an import that touches CUDA before a "
        "launcher such as Ray or an engine's worker set the variable leaves the process with "
        "the wrong set, and set_device of its own GPU fails); or, for 'invalid device "
        "ordinal' at an engine's start, CUDA IPC between GPUs that report peer access but "
        "cannot open each other's IPC handles (cudaIpcOpenMemHandle on PCIe-only GPUs: the "
        "workspace of an engine's custom all-reduce)",
        "put at most as many ranks on a host as it has GPUs (`nvidia-smi -L`), check "
        "CUDA_VISIBLE_DEVICES per rank, and expose the GPUs to containers (docker --gpus all); "
        "when a worker fails in set_device though the host has the GPU, find what initialised "
        "CUDA before its launcher set CUDA_VISIBLE_DEVICES (an import at module level: "
        "upgrade the engine or move the import); for the custom all-reduce's IPC on "
        "PCIe-only GPUs, use NCCL's all-reduce (vLLM --disable-custom-all-reduce, "
        "TensorRT-LLM allreduce_strategy NCCL) or an engine release that falls back itself",
        _RT,
    ),
    (
        "cuda.device-busy",
        ("DevicesUnavailable", "DeviceAlreadyInUse", "SetOnActiveProcess"),
        "the GPU is busy or unavailable to this process",
        "the GPU is in an exclusive compute mode and another process (or rank) holds it, or "
        "it is held by a stuck process",
        "`nvidia-smi -q -d COMPUTE` (Exclusive_Process allows one process per GPU: one rank "
        "per GPU, or `nvidia-smi -c DEFAULT`); stop the process `nvidia-smi` lists on it",
        _RT,
    ),
    (
        "cuda.peer-access",
        (
            "PeerAccessUnsupported",
            "PeerAccessAlreadyEnabled",
            "PeerAccessNotEnabled",
            "TooManyPeers",
        ),
        "direct peer access between two GPUs (P2P over PCIe or NVLink) is not supported here "
        "or not set up",
        "GPUs without P2P between them (consumer, L4 or virtualised GPUs, PCIe behind "
        "different root complexes, ACS or an IOMMU that blocks it), while NCCL's P2P "
        "transport or its cuMem-shared memory asks for it",
        "`nvidia-smi topo -p2p r` shows which pairs have P2P; NCCL_P2P_DISABLE=1 for the P2P "
        "transport, and NCCL_CUMEM_HOST_ENABLE=0 when the failure is in NCCL's SHM "
        "transport (transport/shm.cc); an engine's own custom all-reduce kernels need P2P "
        "too: turn them off on such GPUs (vLLM --disable-custom-all-reduce, TensorRT-LLM's "
        "NCCL all-reduce strategy, SGLang --disable-custom-all-reduce)",
        _RT + "; NVIDIA/nccl #1838",
    ),
    (
        "cuda.gpu-fault",
        (
            "ECCUncorrectable",
            "NvlinkUncorrectable",
            "Contained",
            "IllegalAddress",
            "LaunchFailure",
            "HardwareStackError",
            "IllegalInstruction",
            "MisalignedAddress",
            "InvalidAddressSpace",
            "InvalidPc",
            "ExternalDevice",
        ),
        "a kernel faulted on the GPU (an illegal memory access or instruction, an "
        "uncorrectable ECC or NVLink error): the CUDA context is lost and every later call "
        "of this process fails",
        "a GPU hardware fault (ECC, NVLink, a GPU fallen off the bus: an Xid in the kernel "
        "log), or a bug in a kernel (the program's, a library's, NCCL's) reading memory it "
        "does not own",
        "`nvidia-smi -q -d ECC` (uncorrectable or retired pages), `dmesg | grep -i xid` (Xid "
        "48/63/64/74/79/94/95: hardware or NVLink; 13/31/43: a kernel fault), then reset the "
        "GPU (`nvidia-smi -r`) or reboot; rerun with CUDA_LAUNCH_BLOCKING=1 or "
        "`compute-sanitizer` to find a faulting kernel",
        _RT + "; NVIDIA Xid messages (XID Errors, NVIDIA GPU deployment guide)",
    ),
    (
        "cuda.device-assert",
        ("Assert",),
        "a kernel's assertion failed on the GPU (a device-side assert)",
        "the program's data: an index out of range (an embedding id, a label past the "
        "number of classes), a NaN where a kernel checks",
        "rerun with CUDA_LAUNCH_BLOCKING=1 to see which operation asserted; check the "
        "indices and labels it was given",
        _RT,
    ),
    (
        "cuda.launch-timeout",
        ("LaunchTimeout",),
        "a kernel ran past the display watchdog and was killed",
        "a GPU that also drives a display (its watchdog ends long kernels), or a kernel "
        "that never ends (a collective waiting for a peer)",
        "run on a GPU without a display (or disable the watchdog); if a collective, find the "
        "rank it waits for",
        _RT,
    ),
    (
        "cuda.prior-failure",
        ("PriorLaunchFailure", "ContextIsDestroyed", "CudartUnloading"),
        "a CUDA call failed because of an earlier failure or the process's teardown (a "
        "prior launch failed, the context is destroyed, the runtime is unloading)",
        "an earlier error of this process (its first CUDA error), or a call made while the "
        "process exits",
        "find the first CUDA error of this process and fix that one",
        _RT,
    ),
    (
        "cuda.init",
        (
            "InitializationError",
            "StartupFailure",
            "DeviceUninitialized",
            "NotReady",
            "Unknown",
            "DeviceNotLicensed",
            "SoftwareValidityNotEstablished",
        ),
        "CUDA could not initialise the driver or the GPU",
        "the NVIDIA kernel module not loaded or not matching the user-space driver, "
        "/dev/nvidia* not passed to the container, a GPU fallen off the bus or in a bad "
        "state (an Xid), or a vGPU without a license",
        "`nvidia-smi` on the host and in the container; `dmesg | grep -i -e xid -e nvrm`; "
        "check the container runtime's GPU options (docker --gpus all, the NVIDIA container "
        "toolkit); reboot a host whose GPU is lost",
        _RT,
    ),
    (
        "cuda.mps",
        (
            "MpsConnectionFailed",
            "MpsRpcFailure",
            "MpsServerNotReady",
            "MpsMaxClientsReached",
            "MpsMaxConnectionsReached",
            "MpsClientTerminated",
            "CdpNotSupported",
            "CdpVersionMismatch",
        ),
        "CUDA MPS (the multi-process service) refused or dropped this client",
        "the MPS control daemon not running (CUDA_MPS_PIPE_DIRECTORY set for a daemon that "
        "is gone), its client limit reached, or a feature MPS does not allow",
        "start the daemon (`nvidia-cuda-mps-control -d`) or unset the CUDA_MPS_* variables "
        "to run without MPS; `echo quit | nvidia-cuda-mps-control` stops a stuck one",
        _RT,
    ),
    (
        "cuda.not-permitted",
        ("NotPermitted", "NotSupported", "OperatingSystem", "UnsupportedExecAffinity"),
        "the operation is not permitted or not supported on this system",
        "a feature this GPU, driver, OS or container does not allow: CUDA IPC or cuMem "
        "handle sharing across containers or without the needed capabilities, MIG "
        "limits, a vGPU in a virtual machine without unified memory (UVM) enabled (newer "
        "NCCL allocates through cuMem and memory pools at init, which a vGPU without UVM "
        "refuses), an old driver without the call",
        "in a virtual machine on a vGPU, enable unified memory for the vGPU (NVIDIA vGPU "
        "documentation: the vGPU's enable_uvm=1 setting; VMware: pciPassthru0.cfg.enable_uvm "
        "= 1 in the VM's options) or use the NCCL release that worked; in containers run the "
        "ranks of a host in one container with its IPC namespace shared (docker --ipc=host); "
        "for NCCL step around the feature (NCCL_P2P_DISABLE=1, NCCL_CUMEM_ENABLE=0) and read "
        "NCCL_DEBUG=INFO for the call that failed",
        _RT,
    ),
    (
        "cuda.stream-capture",
        (
            "StreamCaptureUnsupported",
            "StreamCaptureInvalidated",
            "StreamCaptureMerge",
            "StreamCaptureUnmatched",
            "StreamCaptureUnjoined",
            "StreamCaptureIsolation",
            "StreamCaptureImplicit",
            "CapturedEvent",
            "StreamCaptureWrongThread",
            "GraphExecUpdateFailure",
        ),
        "a CUDA graph capture was used in a way CUDA does not allow",
        "a call that cannot be captured (a synchronisation, an allocation, a collective not "
        "capturable in this NCCL) made while a stream was capturing a CUDA graph",
        "run that part outside graph capture (disable CUDA graphs: PyTorch's "
        "torch.compile mode, vLLM's --enforce-eager) or upgrade the library that captures it",
        _RT,
    ),
    (
        "cuda.timeout",
        ("Timeout",),
        "a CUDA wait timed out",
        "the GPU work it waited for never completed (a hung kernel or a peer that never answered)",
        "find what the GPU waits for: a hung collective's peer, or a GPU fault in `dmesg`",
        _RT,
    ),
    (
        "cuda.launch-too-large",
        (
            "LaunchOutOfResources",
            "InvalidConfiguration",
            "CooperativeLaunchTooLarge",
            "InvalidClusterSize",
        ),
        "a kernel launch asked for more than the GPU allows: its threads per block times the "
        "registers each needs (too many resources requested), or a grid or block dimension "
        "past its limit (a grid's y or z over 65535, a block over 1024 threads)",
        "a library's kernel launched with a fixed block size, or a grid sized from the input "
        "without a bound: a large tensor or a long sequence, a fused kernel of many inputs "
        "(MLX's mx.compile fuses elementwise ops into one JIT kernel); a bug of that "
        "library's launch configuration at this shape, not of the GPU",
        "upgrade the library that launched it (MLX's CUDA backend: pip install -U "
        "'mlx[cuda]'); until then avoid that shape or fusion: turn mx.compile off for the "
        "function, or process the input in smaller pieces",
        _RT,
    ),
    (
        "cuda.invalid-argument",
        (
            "InvalidValue",
            "InvalidResourceHandle",
            "InvalidHostPointer",
            "InvalidDevicePointer",
            "InvalidPitchValue",
            "InvalidSymbol",
            "InvalidMemcpyDirection",
            "IllegalState",
            "HostMemoryAlreadyRegistered",
            "HostMemoryNotRegistered",
            "AlreadyMapped",
            "AlreadyAcquired",
            "NotMapped",
            "NotMappedAsArray",
            "NotMappedAsPointer",
            "ArrayIsMapped",
            "MapBufferObjectFailed",
            "UnmapBufferObjectFailed",
            "MemoryValueTooLarge",
            "InvalidResourceType",
            "InvalidResourceConfiguration",
            "UnsupportedLimit",
            "LossyQuery",
        ),
        "a CUDA call was given an argument or handle it does not accept",
        "a pointer, stream or handle of another device or context (or one already freed), "
        "a launch configuration past the GPU's limits, or a library built for another "
        "CUDA; often the echo of an earlier failure",
        "read the call named before it (NCCL_DEBUG=INFO for NCCL); check the library and "
        "driver versions; find an earlier error of this process",
        _RT,
    ),
    (
        "cuda.api-misuse",
        (
            "ProfilerDisabled",
            "ProfilerNotInitialized",
            "ProfilerAlreadyStarted",
            "ProfilerAlreadyStopped",
            "InvalidTexture",
            "InvalidTextureBinding",
            "InvalidChannelDescriptor",
            "AddressOfConstant",
            "TextureFetchFailed",
            "TextureNotBound",
            "SynchronizationError",
            "InvalidFilterSetting",
            "InvalidNormSetting",
            "MixedDeviceExecution",
            "NotYetImplemented",
            "InvalidSurface",
            "DuplicateVariableName",
            "DuplicateTextureName",
            "DuplicateSurfaceName",
            "MissingConfiguration",
            "LaunchMaxDepthExceeded",
            "LaunchFileScopedTex",
            "LaunchFileScopedSurf",
            "SyncDepthExceeded",
            "LaunchPendingCountExceeded",
            "LaunchIncompatibleTexturing",
            "InvalidGraphicsContext",
            "TensorMemoryLeak",
            "ApiFailureBase",
        ),
        "a CUDA API was used in a way this CUDA does not support",
        "a defect of the program or library that made the call, or one built for another "
        "CUDA version",
        "upgrade the library that made the call, or report it with the CUDA version",
        _RT,
    ),
)

_NCCL = "NCCL v2.30.7 src/transport/"


def _texts(names: Tuple[str, ...]) -> List[str]:
    return sorted({BY_NAME["cudaError" + n].text for n in names}, key=len, reverse=True)


def _regex(names: Tuple[str, ...]) -> str:
    """A regex that finds the text of any of ``names`` (longest first), or its driver API
    name (``CUDA_ERROR_NOT_INITIALIZED``) or runtime enum name (``cudaErrorInvalidDevice``),
    as the whole of the match's last group (the text a
    wrapper printed; the site and numbers come before it)."""
    named = sorted({BY_NAME["cudaError" + n].driver for n in names} - {"-"})
    named += sorted("cudaError" + n for n in names)
    return r"(?:^|\s)(?:" + "|".join(re.escape(t) for t in _texts(names) + named) + ")$"


# the NCCL source files whose CUDA failures mean something of their own (group ``site`` of
# :mod:`meshdoctor.signatures.cuda`'s match, the file NCCL's WARN names)
SITE_CLASSES: Tuple[FailureClass, ...] = (
    failure_class(
        "cuda.nccl-nvls",
        r"\bnvls\.cc\b",
        "a CUDA call of NCCL's NVLS transport (NVLink SHARP: NVLink multicast objects on "
        "NVSwitch, H100/H200/H800/B200) failed: CUDA refused to create or bind a multicast "
        "object, and NCCL ends the communicator's init instead of running without NVLS",
        "the NVIDIA fabric manager was stopped or restarted while processes held GPU "
        "resources, or is unhealthy (maintainer, NVIDIA/nccl #976; tell: on the host "
        "`nvidia-smi -q | grep -A2 Fabric` does not show Completed); or multicast is not "
        "available to this process although the fabric is fine: a container without the "
        "multicast capability (its /dev/nvidia-caps devices, or IMEX channels on a "
        "multi-node NVLink system), a virtual machine or a MIG partition",
        "set NCCL_NVLS_ENABLE=0 on every rank to run without NVLS; then, for the fabric "
        "manager, reboot the node (or stop every GPU process, reset the GPUs with `nvidia-smi "
        "-r`, then restart nvidia-fabricmanager) until `nvidia-smi -q | grep -A2 Fabric` shows "
        "Completed; in a container, give it the capability (--device /dev/nvidia-caps, or the "
        "NVIDIA runtime with all driver capabilities)",
        _NCCL + "nvls.cc (cuMulticastCreate, cuMulticastBindMem); NVIDIA/nccl #976, #1338, "
        "#1488; NCCL environment variable NCCL_NVLS_ENABLE",
    ),
    failure_class(
        "cuda.nccl-p2p-ipc",
        r"\bp2p\.cc\b.*" + _regex(("InvalidValue", "InvalidDevice", "MapBufferObjectFailed")),
        "NCCL's P2P transport could not map a peer GPU's buffer into this process: it opens "
        "the peer's CUDA IPC handle (cudaIpcOpenMemHandle, the legacy path NCCL takes when its "
        "cuMem path is off, NCCL_CUMEM_ENABLE=0) or imports its cuMem handle, and CUDA "
        "refused the handle",
        "NCCL_CUMEM_ENABLE=0 set in some processes of the communicator (a framework sets it for "
        "its own workers: vLLM's) so the two ends use different IPC paths or the legacy one "
        "fails, processes in different containers without a shared IPC namespace, or GPUs "
        "without P2P between them",
        "give every process of the communicator the same NCCL_CUMEM_ENABLE (unset it, or 1, "
        "where a framework set 0), run the containers with a shared IPC namespace (docker "
        "--ipc=host), or NCCL_P2P_DISABLE=1 for this communicator; `nvidia-smi topo -p2p r` "
        "for the pair",
        _NCCL + "p2p.cc (cudaIpcOpenMemHandle, the cuMem import); NCCL environment variables "
        "NCCL_CUMEM_ENABLE, NCCL_P2P_DISABLE",
    ),
    failure_class(
        "cuda.nccl-cumem-host",
        r"\bshm\.cc\b.*" + _regex(("PeerAccessUnsupported", "NotSupported")),
        "NCCL's SHM transport shares host memory between the ranks of a host through cuMem "
        "handles (NCCL_CUMEM_HOST_ENABLE, on by default in the NCCL 2.27 of NVIDIA/nccl "
        "#1838), and CUDA refused it on these GPUs: they have no peer access (P2P) between "
        "them; NCCL_P2P_DISABLE does not turn this path off",
        "GPUs without P2P (L4, consumer or virtualised GPUs) under an NCCL whose SHM "
        "transport uses cuMem host memory",
        "NCCL_CUMEM_HOST_ENABLE=0 (NCCL's environment variables), or an NCCL with the fix; "
        "confirm with `nvidia-smi topo -p2p r`",
        _NCCL + "shm.cc (2.27); NVIDIA/nccl #1838",
    ),
)

_BY_GROUP = {g[0]: g for g in GROUPS}

# a kernel launch (cudaLaunchKernel, cuLaunchKernelEx, a CUDA graph's kernel node) refused
# as an invalid argument: the launch's own configuration (its grid, block or parameters),
# which CUDA reports as cudaErrorInvalidValue where a grid dimension is past its limit (CUDA
# C++ Programming Guide, "Compute Capabilities": gridDim.y and .z at most 65535)
CALL_CLASSES: Tuple[FailureClass, ...] = (
    failure_class(
        "cuda.launch-rejected",
        r"\b(?:cu\w*Launch\w*|cu\w*Graph\w*KernelNode\w*)\b.*\binvalid argument\s*$",
        "a kernel launch was refused as an invalid argument: CUDA checks a launch's grid and "
        "block when it is made (or added to a CUDA graph), so the launch itself asked for "
        "what the GPU does not allow, most often a grid dimension past its limit (gridDim.y "
        "or .z over 65535, a grid sized from a large batch or a long sequence) or a size "
        "that overflowed a 32-bit integer (an array of more than 2^31 elements)",
        _BY_GROUP["cuda.launch-too-large"][3],
        _BY_GROUP["cuda.launch-too-large"][4],
        _RT + "; CUDA C++ Programming Guide (grid and block limits)",
    ),
)

CLASSES: Tuple[FailureClass, ...] = (
    SITE_CLASSES
    + CALL_CLASSES
    + tuple(
        failure_class(name, _regex(names), meaning, cause, remedy, source)
        for name, names, meaning, cause, remedy, source in GROUPS
    )
)
