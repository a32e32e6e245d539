"""NCCL's result codes (``ncclResult_t``) as a table: each code's number, its
``ncclGetErrorString`` text (NCCL v2.30.7 src/init.cc; NCCL before 2.12 printed the first words
only, ``'unhandled cuda error'``), the sentence PyTorch prints under it (torch/csrc/distributed/
c10d NCCLUtils ``getNcclErrorDetailStr``: ``ncclInternalError: Internal check failed.``) and a
:class:`~meshdoctor.signatures.model.FailureClass` each (meaning, cause, what helps) for the
nccl.error reading, so every result string reads as its own class whoever prints it: MLX
(``NCCL error file:line '...'``), nccl-tests (``Test NCCL failure file.cu:N '... / ...'``, the
text after ``/`` being ``ncclGetLastError``: NCCL's last WARN, empty when none was recorded),
PyTorch (``NCCL error in: FILE:LINE, ..., NCCL version X``, then the sentence of this table).

A result string says which class of call failed, never which call: the NCCL WARN line before
it does (NCCL_DEBUG=WARN). When one is in the input it is read first (nccl.warn and its
classes) and this line follows from it; these classes say what the result means when it is
the only text there is.
"""

from __future__ import annotations

import re
from typing import Tuple

from meshdoctor.signatures.model import FailureClass, failure_class as fc

_S = "NCCL v2.30.7 src/nccl.h.in, src/init.cc (ncclGetErrorString); PyTorch NCCLUtils "

_NO_WARN = (
    "the line names the class of the failure, not the call: without an NCCL WARN line "
    "before it (NCCL_DEBUG unset) the reason is not in the output"
)
_DEBUG = "rerun every rank with NCCL_DEBUG=WARN (INFO for more): the WARN line names the call"

# (ncclResult_t name, number, ncclGetErrorString's text, PyTorch's sentence)
RESULTS: Tuple[Tuple[str, int, str, str], ...] = (
    ("ncclUnhandledCudaError", 1, "unhandled cuda error", "Call to CUDA function failed."),
    (
        "ncclSystemError",
        2,
        "unhandled system error",
        "System call (e.g. socket, malloc) or external library call failed or device error.",
    ),
    (
        "ncclInternalError",
        3,
        "internal error - please report this issue to the NCCL developers",
        "Internal check failed.",
    ),
    ("ncclInvalidArgument", 4, "invalid argument", "Invalid value for an argument."),
    (
        "ncclInvalidUsage",
        5,
        "invalid usage",
        "This usually reflects invalid usage of NCCL library.",
    ),
    (
        "ncclRemoteError",
        6,
        "remote process exited or there was a network error",
        "A call failed possibly due to a network error or a remote process exiting prematurely.",
    ),
    ("ncclInProgress", 7, "NCCL operation in progress", ""),
    ("ncclTimeout", 8, "timeout", ""),
)

# what each result means, why and what helps: one failure class per row of RESULTS
_READINGS = {
    "ncclUnhandledCudaError": (
        "a CUDA call inside NCCL failed (ncclUnhandledCudaError); " + _NO_WARN,
        "when it fails at init, on every run and before any transfer: most often an NCCL "
        "built for another CUDA version than the driver and runtime installed (a libnccl for "
        "CUDA 11.0 on a CUDA 10.2 system: NVIDIA/nccl-tests #6); else GPU memory exhausted, "
        "a GPU in exclusive-process mode used by another process, or peer access refused "
        "between GPUs",
        _DEBUG + " and its CUDA error; compare the CUDA of NCCL's banner ('NCCL version "
        "X+cudaY', NCCL_DEBUG=INFO; `dpkg -l | grep nccl`) with the driver's (`nvidia-smi`) "
        "and the toolkit's (`nvcc --version`); install the libnccl built for that CUDA "
        "(libnccl2=X+cudaY), or use the NCCL bundled with the PyTorch or MLX wheel",
    ),
    "ncclSystemError": (
        "a system call or external library call inside NCCL failed (ncclSystemError: a "
        "socket, shared memory, an RDMA device); " + _NO_WARN,
        "/dev/shm too small in a container, a socket to a peer that failed, a limit on open "
        "files or locked memory, or an RDMA device NCCL could not use",
        _DEBUG + "; in containers give /dev/shm room (docker --shm-size, --ipc=host); check "
        "`ulimit -n` and `ulimit -l`",
    ),
    "ncclInternalError": (
        "NCCL returned ncclInternalError ('internal error - please report this issue to the "
        "NCCL developers'); " + _NO_WARN + ". NCCL 2.18 reported every network error this way "
        "(its maintainers: 'with NCCL 2.18 you can ignore that message', NVIDIA/nccl-tests "
        "#275, NVIDIA/nccl #1092), so the message itself does not mean an NCCL defect",
        "whatever the WARN line would name (often an earlier failure: a closed socket, a "
        "network interface or device NCCL could not use, an aborted communicator); with NCCL "
        "2.18.x a misreported error that upgrading NCCL fixed (2.19.3 in NVIDIA/nccl-tests "
        "#275)",
        _DEBUG + "; on NCCL 2.18.x upgrade NCCL (2.19 or later); report it to NVIDIA/nccl "
        "only when the WARN line says the failure is NCCL's own",
    ),
    "ncclInvalidArgument": (
        "an argument of an NCCL call was invalid (ncclInvalidArgument)",
        "the program passed a value NCCL rejects (a count, a datatype, a root or peer rank "
        "out of range, a null buffer); in a collective of a framework (XLA, PyTorch) whose "
        "own call cannot be wrong, most often two copies of NCCL in one process: another "
        "framework imported beside it (a GPU build of TensorFlow or PyTorch beside JAX) "
        "loads its own libnccl, and a communicator of one is handed to the other",
        "rerun with NCCL_DEBUG=WARN: it names the argument; fix the call; if the call is a "
        "framework's, list the libnccl copies the process loaded (`grep nccl "
        "/proc/PID/maps`, or LD_DEBUG=libs) and import only one framework's GPU build (a "
        "CPU-only TensorFlow for data loading: `pip install tensorflow-cpu`)",
    ),
    "ncclInvalidUsage": (
        "NCCL was called in a way it does not allow (ncclInvalidUsage)",
        "most often two ranks of one communicator on the same GPU (each rank must have a GPU "
        "of its own: CUDA_VISIBLE_DEVICES not set per rank, a container or pod exposing one "
        "GPU to several ranks, no torch.cuda.set_device(local_rank), a trainer process that "
        "joins an inference server's group on a GPU the server uses (TRL's vllm-serve "
        "client on cuda:0), an engine that takes workers of two hosts for one node and "
        "gives them the same local GPU (vLLM's VLLM_HOST_IP set to one address on every "
        "node: it must be each node's own, vllm #7699)); else an NCCL_* setting NCCL "
        "rejects, or a communicator used after an error",
        "check that every rank of a host uses its own GPU: compare the 'cudaDev'/'busId' of "
        "each rank's 'ncclCommInitRank ... Init START' line (NCCL_DEBUG=INFO), set "
        "CUDA_VISIBLE_DEVICES or the device per rank, give the pod as many GPUs as ranks; then "
        "rerun with NCCL_DEBUG=WARN: it names the setting or call",
    ),
    "ncclRemoteError": (
        "a peer rank exited or the network between the ranks failed (ncclRemoteError): "
        "another rank's failure seen from here",
        "a peer that died or was killed first, or the link between the hosts; when no rank "
        "died, NCCL's socket traffic on an interface the other hosts cannot reach (a second "
        "NIC, a docker or VPN interface NCCL chose: NCCL_SOCKET_IFNAME)",
        "find the rank that failed first (its exit status and stderr); if none did, check "
        "the link between the hosts and the interface NCCL uses ('Bootstrap : Using' and "
        "'NET/Socket : Using' under NCCL_DEBUG=INFO): set NCCL_SOCKET_IFNAME on every host to "
        "the interface that joins them",
    ),
    "ncclInProgress": (
        "an NCCL operation was still in progress (ncclInProgress: a non-blocking communicator)",
        "the program used a non-blocking communicator before its init or call completed",
        "poll ncclCommGetAsyncError until it is no longer ncclInProgress before using the "
        "communicator",
    ),
    "ncclTimeout": (
        "an NCCL operation timed out (ncclTimeout)",
        "a peer that never joined or answered (it hung, died or waits in another "
        "collective), or a network too slow for NCCL's timeout",
        "read the other ranks' logs for the one that stopped first; NCCL_DEBUG=WARN names "
        "the operation",
    ),
}


def _regex(name: str, text: str, sentence: str) -> str:
    """What a row is read by: its ncclGetErrorString text (the words before ' - ' or '('),
    its enum name, PyTorch's sentence."""
    words = re.split(r" - | \(", text)[0]
    alts = [re.escape(words), re.escape(name)]
    if sentence:
        alts.append(re.escape(sentence.split(" (")[0].rstrip(".")))
    body = "|".join(alts)
    return rf"\b(?:{body})" if words != "timeout" else rf"(?:^|[\s'])timeout\b|\b{name}\b"


CLASSES: Tuple[FailureClass, ...] = tuple(
    fc(
        f"nccl.result-{num}",
        _regex(name, text, sentence),
        *_READINGS[name],
        _S
        + "(getNcclErrorDetailStr)"
        + {
            "ncclUnhandledCudaError": "; NVIDIA/nccl-tests #6",
            "ncclInternalError": "; NVIDIA/nccl-tests #275; NVIDIA/nccl #1092",
        }.get(name, ""),
    )
    for name, num, text, sentence in RESULTS
)
