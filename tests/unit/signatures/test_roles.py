"""The role of each match (meshdoctor.signatures: ``Signature.role_of``, ``Match.role``): the
echo of another rank's failure (a broken pipe, a reset or peer-closed socket, NCCL's remote
error, mlx.launch's teardown of a survivor) is a consequence, whatever backend printed it; the
same signature's original faults stay causes. Lines as MLX and NCCL print them (sources in each
signature)."""

from __future__ import annotations

import io

import pytest

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage.collect import Collected, read_stream
from meshdoctor.triage.findings import Input

CAUSE, EITHER, CONSEQUENCE = signatures.CAUSE, signatures.EITHER, signatures.CONSEQUENCE


def roles(text: str):
    """code -> role of every finding triage makes of a log holding ``text``."""
    col = Collected()
    read_stream(io.BytesIO(text.encode()), Input(source="rank1.log"), col)
    return {f.code: f.role for f in col.findings}


@pytest.mark.parametrize(
    "line,code,role",
    [
        # ring.cpp's worker (MLX 0.32.x): a peer's death seen from here ...
        ("[ring] Receiving from socket 4 failed with errno 104", "MD615", CONSEQUENCE),
        ("[ring] Receiving from socket 7 failed with errno 54", "MD615", CONSEQUENCE),
        ("[ring] Sending to socket 5 failed with errno 32", "MD615", CONSEQUENCE),
        # ... and this rank's own fault
        ("[ring] Sending to socket 5 failed with errno 22", "MD615", CAUSE),
        ("[ring] Receiving from socket 6 failed with errno 14", "MD615", CAUSE),
        # NCCL: ncclRemoteError's string, its peer-closed socket (2.12-2.28 and 2.29+ wording)
        (
            "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there "
            "was a network error'",
            "MD650",
            CONSEQUENCE,
        ),
        (
            "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'unhandled system error (run "
            "with NCCL_DEBUG=INFO for details)'",
            "MD681",
            EITHER,  # a summary: the WARN before it that says why is the cause (NVIDIA/nccl #2013)
        ),
        (
            "node2:1234:1300 [1] NCCL WARN socketProgressOpt: Call to recv from "
            "10.0.0.8<40123> failed : Broken pipe",
            "MD686",
            CONSEQUENCE,
        ),
        (
            "node2:1234:1300 [1] NCCL WARN ncclOsSocketProgressOpt: Call to send to "
            "10.0.0.8<40123> failed : Connection reset by peer",
            "MD686",
            CONSEQUENCE,
        ),
        # NCCL's proxy thread (proxy.cc) after ncclRemoteError (6) and after a system error (2)
        (
            "gpu-node-2:4102:4190 [0] NCCL WARN [Service thread] Error encountered progressing "
            "operation=Connect, res=6, closing connection",
            "MD653",
            CONSEQUENCE,
        ),
        (
            "gpu-node-2:4102:4190 [0] NCCL WARN [Proxy Service 1] Failed to execute operation "
            "Setup from rank 1, retcode 2",
            "MD653",
            EITHER,
        ),
        # a completion the peer never acknowledged (NCCL net_ib.cc): a bad link alone, the
        # echo of a peer that died mid-transfer when another rank failed
        (
            "NCCL WARN NET/IB : Got completion from peer 10.1.2.3<50123> with error 12, opcode "
            "129, len 0, vendor err 129 (Recv)",
            "MD685",
            EITHER,
        ),
        # Metal's watchdog on a GPU-stream collective that waited on a slow or dead peer
        (
            "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
            "MD616",
            EITHER,
        ),
        # JACCL's abort of MLX <= 0.32.0 takes the role of the message inside it
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[jaccl] Recv failed with errno=54",
            "MD617",
            CONSEQUENCE,
        ),
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[jaccl] Recv failed with errno=60",
            "MD617",
            EITHER,
        ),
        (
            "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
            "[jaccl] Recv failed with error code -12",
            "MD617",
            CAUSE,
        ),
        # mlx.launch's terminate() of a survivor (launch.py: "Node with rank R was killed")
        ("\x1b[33m[WARN] Node with rank 3 was killed\x1b[0m", "MD657", CONSEQUENCE),
        ("[WARN] Node with rank 2 exited with code -15", "MD657", CONSEQUENCE),
        ("[WARN] Node with rank 2 exited with code -9", "MD657", CAUSE),
    ],
)
def test_each_match_has_the_role_its_text_gives(line, code, role):
    assert roles(line)[code] == role


@pytest.mark.parametrize(
    "exc,role",
    [
        ("BrokenPipeError: [Errno 32] Broken pipe", CONSEQUENCE),
        ("ConnectionResetError: [Errno 104] Connection reset by peer", CONSEQUENCE),
        ("ConnectionResetError: [Errno 54] Connection reset by peer", CONSEQUENCE),
        ("ConnectionAbortedError: [Errno 53] Software caused connection abort", CONSEQUENCE),
        ("KeyError: 'model.layers.0'", EITHER),
    ],
)
def test_a_python_socket_exception_of_a_peer_gone_is_a_consequence(exc, role):
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/srv/serve.py", line 52, in <module>\n'
        "    conn.sendall(reply)\n"
        f"{exc}\n"
    )
    assert roles(tb) == {"MD663": role}


def test_a_role_hook_needs_its_note_and_the_note_is_in_the_doc():
    kw = dict(examples=("x",), role_of=lambda g: CAUSE)
    with pytest.raises(ValueError, match="role_note"):
        signature("MD699", "t.x", "x", "m", "r", "s", **kw)
    s = signature("MD699", "t.x", "x", "m", "r", "s", role_note="X is a cause.", **kw)
    assert s.doc.why.endswith("X is a cause.")
    m = signatures.Match("MD699", "t.x", "m", "r", "x", sig=s)
    assert m.role == CAUSE
    # a hook's answer that is no role leaves the signature's own
    s = signature("MD699", "t.x", "x", "m", "r", "s", role_note="n", **dict(kw, role_of=str))
    assert signatures.Match("MD699", "t.x", "m", "r", "x", sig=s).role == s.role


def test_mlx_mpi_warning_is_read_as_mlx_prints_it():
    # mlx/distributed/mpi/mpi.cpp: two sentences streamed to std::cerr with no space between
    line = (
        "[mpi] MPI found but it does not appear to be Open MPI.MLX requires Open MPI but this "
        "is MPICH Version:\t4.1.2\n"
    )
    col = Collected()
    read_stream(io.BytesIO(line.encode()), Input(source="rank0.log"), col)
    (f,) = col.findings
    assert f.code == "MD669" and f.role == CAUSE
    assert "the MPI library found is MPICH Version:\t4.1.2" in f.match.meaning
    assert "ring" in f.match.remedy and "Open MPI" in f.match.remedy
