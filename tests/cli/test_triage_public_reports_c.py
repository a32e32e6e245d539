"""``meshdoctor triage`` on public failure reports of five kinds, each as the report printed it
and in another wording of the same kind (another prefix, another tool's wrapper) made from the
sources: a Metal command-buffer error that aborted the process, seen in a crash summary; MLX
that cannot be imported on a node (libmlx missing or of another build); NCCL's ``internal
error`` and ``unhandled cuda error`` with no WARN line to explain them (nccl-tests, MLX,
PyTorch); an NCCL_SOCKET_IFNAME that names no interface of the host, read across the lines of
a log. Each test asserts the first cause a user sees, its meaning and what helps."""

from __future__ import annotations

from pathlib import Path
from typing import List

from tests.helpers import first_cause as first, run_cli
from tests.helpers import triage_files as triage


def findings(doc: dict) -> List[dict]:
    return doc["triage"]["findings"]


# https://github.com/exo-explore/exo/issues/2088 (a user's summary of 18 crash reports on two
# Mac Studios: the trigger was the macmon GPU monitor EXO.app starts as its child)
METAL_SUMMARY = """\
**Environment:** 2x Mac Studio M3 Ultra 512GB, Thunderbolt-bridged, exo GUI app
**Crash count:** 18 `.ips` files across both nodes over 2026-05-08 -> 2026-05-14

**Stack matches yours exactly** (top 14 frames identical):
- `libmlx::check_error(MTL::CommandBuffer*)` throws -> libc++abi terminates -> `abort()`
- Triggered thread: `com.Metal.CompletionQueueDispatch`
- bug_type 309 (EXC_CRASH)

**macmon corroboration:** macmon IS running in our EXO process tree at all times:

```
501 74987 74960  /Applications/EXO.app/Contents/Resources/exo/_internal/macmon pipe --interval 1000
```
"""


def test_a_crash_summary_of_a_metal_command_buffer_abort_names_it(tmp_path):
    doc = triage(tmp_path, {"report.txt": METAL_SUMMARY})
    f = first(doc)
    assert f["code"] == "MD661" and "check_error" in f["line"]
    assert "completion handler" in f["meaning"] and "Not an RDMA or network fault" in f["meaning"]
    assert "macmon" in f["remedy"] and "0.32.0" in f["remedy"] and "stderr" in f["remedy"]
    # the EXC_CRASH line is that crash, not a second one with no known frame
    assert [g["code"] for g in findings(doc)] == ["MD661"]
    assert not any("Thunderbolt" in c["cause"] for c in f["causes"])


def test_the_crashed_thread_on_metals_completion_queue_names_it_in_crash_text(tmp_path):
    # Apple's crash text names the crashed thread's queue before the exception; a summary that
    # keeps those two lines only (the frames cut) still reads as the command-buffer abort
    text = (
        "Process:               python3.12 [48213]\n"
        "Crashed Thread:        4  Dispatch queue: com.Metal.CompletionQueueDispatch\n"
        "\n"
        "Exception Type:        EXC_CRASH (SIGABRT)\n"
        "Exception Codes:       0x0000000000000000, 0x0000000000000000\n"
    )
    doc = triage(tmp_path, {"crash.txt": text})
    f = first(doc)
    assert f["code"] == "MD661" and "com.Metal.CompletionQueueDispatch" in f["meaning"]
    assert [g["code"] for g in findings(doc)] == ["MD661"]


# https://github.com/exo-explore/exo/issues/2156 (exo on two Linux PCs: the mlx wheel without
# its Linux backend; the thread's fix: uv sync --extra mlx_cpu)
EXO_IMPORT = """\
> ImportError: libmlx.so: cannot open shared object file: No such file or directory
> [ 12:20:58.7931AM | INFO    ] bye from the runner
> [ 12:20:58.9011AM | INFO    ] Runner exited with exit code 1
> [ 12:20:58.9013AM | ERROR   ] Runner terminated with exitcode=1
> Runner error: ImportError: libmlx.so: cannot open shared object file: No such file or directory
> Traceback (most recent call last):
>   File "/home/minipc/exo/src/exo/worker/runner/bootstrap.py", line 75, in entrypoint
>     from exo.worker.engines.mlx.patches import apply_mlx_patches
>   File "/home/minipc/exo/src/exo/worker/engines/mlx/patches/opt_batch_gen.py", line 4, in <module>
>     import mlx.core as mx
> ImportError: libmlx.so: cannot open shared object file: No such file or directory
>
> [ 12:20:58.9019AM | INFO    ] Runner supervisor shutting down
"""


def test_mlx_without_its_linux_backend_is_an_install_of_that_node(tmp_path):
    f = first(triage(tmp_path, {"exo.log": EXO_IMPORT}))
    assert f["code"] == "MD876" and f["count"] == 3
    assert "cannot be imported" in f["meaning"] and "mlx[cpu]" in f["meaning"]
    assert "not the network" in f["meaning"]
    assert 'pip install "mlx[cpu]"' in f["remedy"] and "uv sync --extra mlx_cpu" in f["remedy"]
    assert f["check"].endswith("--only MD102")


def test_an_undefined_mlx_symbol_is_two_mlx_builds_mixed(tmp_path):
    # the same kind in another wording: the extension and libmlx of different MLX versions
    # (mlx and mlx-cpu upgraded apart), as a rank's traceback ends
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/job.py", line 1, in <module>\n'
        "    import mlx.core as mx\n"
        "ImportError: /venv/lib/python3.12/site-packages/mlx/core.cpython-312-x86_64-linux-"
        "gnu.so: undefined symbol: _ZN3mlx4core5arrayD1Ev\n"
    )
    f = first(triage(tmp_path, {"rank1.log": log}))
    assert f["code"] == "MD876" and "different versions" in f["meaning"]
    assert "pip show mlx mlx-cpu" in f["remedy"]


# https://github.com/NVIDIA/nccl-tests/issues/275 (no WARN line; the maintainer: with NCCL 2.18
# ignore that message and rerun with NCCL_DEBUG=WARN; the reporter's fix: NCCL 2.19.3)
INTERNAL = (
    "Test NCCL failure common.cu:1012 'internal error - please report this issue to the NCCL "
    "developers / ' .. dell03 pid 543317: Test failure common.cu:891\n"
)


def test_an_internal_error_with_no_warn_line_says_get_the_warn_and_the_2_18_misreport(tmp_path):
    f = first(triage(tmp_path, {"output.txt": INTERNAL}))
    assert f["code"] == "MD650" and "ncclInternalError" in f["meaning"]
    assert "NCCL recorded no WARN" in f["meaning"] and "NCCL 2.18" in f["meaning"]
    assert "upgrade NCCL" in f["meaning"] and "NCCL_DEBUG=WARN" in f["meaning"]
    assert "NCCL_DEBUG=WARN" in f["remedy"]


def test_pytorchs_form_of_an_internal_error_on_nccl_2_18_names_the_upgrade(tmp_path):
    # the same kind as PyTorch prints it (NVIDIA/nccl #1092: NCCL 2.18 reported network errors
    # as internal ones), with its rank prefix and the sentence under it
    log = (
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
        "c10d/ProcessGroupNCCL.cpp:1333, internal error - please report this issue to the NCCL "
        "developers, NCCL version 2.18.1\n"
        "[rank1]: ncclInternalError: Internal check failed.\n"
    )
    doc = triage(tmp_path, {"train.log": log})
    f = first(doc)
    assert f["code"] == "MD650" and f["count"] == 2  # the sentence is the same failure
    assert "NCCL 2.18.1 is a 2.18 release" in f["meaning"] and "2.19 or later" in f["meaning"]


# https://github.com/NVIDIA/nccl-tests/issues/6 (no WARN line; a later reporter's
# NCCL_DEBUG=WARN showed a libnccl for CUDA 11.0 on a CUDA 10.2 system)
CUDA_INIT = "$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4\nNCCL failure common.cu:908 'unhandled cuda error'.\n"


def test_an_unhandled_cuda_error_at_init_names_the_nccl_cuda_build_mismatch(tmp_path):
    doc = triage(tmp_path, {"output.txt": CUDA_INIT})
    f = first(doc)
    assert f["code"] == "MD650" and "ncclUnhandledCudaError" in f["meaning"]
    assert "another CUDA version" in f["meaning"] and "NCCL_DEBUG=WARN" in f["meaning"]
    assert "libnccl2=X+cudaY" in f["meaning"] and "nvidia-smi" in f["meaning"]
    rest = [g for g in findings(doc) if not g["first_cause"]]
    assert all(g["consequence_of"] == f["id"] for g in rest)


def test_the_same_cuda_error_through_mlx_and_pytorch_reads_alike(tmp_path):
    # MLX's "NCCL error file:line '...'" and PyTorch's sentence (NVIDIA/nccl #1410's form,
    # rank-prefixed), the NCCL version named
    for text in (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details)'\n",
        "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.\n",
        "h1: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO "
        "for details) / '\n",
    ):
        f = first(triage(tmp_path, {"rank.log": text}))
        assert f["code"] == "MD650", text
        assert "another CUDA version" in f["meaning"], text


def test_the_last_error_nccl_tests_prints_is_read_as_the_warn_it_is(tmp_path):
    line = (
        "node1: Test NCCL failure common.cu:1279 'unhandled system error (run with "
        "NCCL_DEBUG=INFO for details) / Error while creating shared memory segment "
        "/dev/shm/nccl-2bX0 (size 9637888)'\n"
    )
    f = first(triage(tmp_path, {"out.txt": line}))
    assert f["code"] == "MD650" and "NCCL's last error (its last WARN)" in f["meaning"]
    assert "/dev/shm" in f["meaning"] and "NCCL_SHM_DISABLE=1" in f["meaning"]


# https://github.com/NVIDIA/nccl/issues/1837 (NCCL 2.27.7, NCCL_SOCKET_IFNAME=eth2 on a host
# without eth2: no warning, then a garbage address family)
IFNAME = """\
[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2
[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set to eth2
...
[trainer0|0]:ncclInternalError: Internal check failed.
[trainer0|0]:Last error:
[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)
"""


def test_an_ifname_naming_no_interface_is_the_first_cause_not_a_version_skew(tmp_path):
    doc = triage(tmp_path, {"trainer.log": IFNAME})
    f = first(doc)
    assert f["code"] == "MD894" and f["role"] == "cause"
    assert "NCCL_SOCKET_IFNAME is 'eth2'" in f["meaning"] and "family 59936" in f["meaning"]
    assert "not a peer, the network or the NCCL version" in f["meaning"]
    assert "ip -br addr" in f["remedy"] and "unset it" in f["remedy"]
    rest = {g["code"]: g for g in findings(doc) if not g["first_cause"]}
    assert set(rest) == {"MD650", "MD803"}
    assert all(g["consequence_of"] == f["id"] for g in rest.values())
    assert "uninitialised memory" in rest["MD803"]["meaning"]
    assert "NVIDIA/nccl #1837" in run_cli("explain", "MD894").out


def test_an_ifname_from_the_environment_with_a_bootstrap_warning_is_read_too(tmp_path):
    # the older NCCL's warning, NCCL's own prefix, the setting as a command line shows it
    log = (
        "+ NCCL_SOCKET_IFNAME=ib0 NCCL_DEBUG=WARN torchrun --nproc-per-node 8 train.py\n"
        "gpu7:4242:4242 [0] bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found\n"
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
        "c10d/ProcessGroupNCCL.cpp:3087, internal error - please report this issue to the NCCL "
        "developers, NCCL version 2.21.5\n"
    )
    f = first(triage(tmp_path, {"gpu7.log": log}))
    assert f["code"] == "MD894" and "'ib0'" in f["meaning"]


def test_an_ifname_that_matched_an_interface_is_not_blamed(tmp_path):
    # NCCL used eth0, which the prefix "eth" selects: the failure is something else
    log = (
        "h1:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth\n"
        "h1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "[rank0]: ncclSocketInit: connecting to address  with family 0 is neither AF_INET(2) "
        "nor AF_INET6(10)\n"
    )
    f = first(triage(tmp_path, {"h1.log": log}))
    assert f["code"] == "MD803" and "ranks running different NCCL versions" in f["meaning"]


def test_ifname_values_select_interfaces_as_nccl_does():
    from meshdoctor.triage.ifname import matches

    assert matches("eth", "eth0") and matches("eth,en", "ens5") and not matches("eth2", "eth0")
    assert matches("=eth0", "eth0") and not matches("=eth", "eth0")
    assert matches("^lo,docker", "eth0") and not matches("^lo,docker", "docker0")


def test_pytorchs_last_error_is_the_reason_of_the_internal_error_above_it(tmp_path):
    # PyTorch prints NCCL's last WARN text bare after "Last error:" (the next line, behind the
    # rank prefix, or the same line): it is read as that WARN, the first cause
    for text in (
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
        "c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL version 2.14.3\n"
        "[rank0]: ncclInternalError: Internal check failed.\n"
        "[rank0]: Last error:\n"
        "[rank0]: Duplicate GPU detected : rank 0 and rank 4 both on CUDA device 7000\n",
        "ncclInternalError: Internal check failed.\n"
        "Last error: Duplicate GPU detected : rank 0 and rank 4 both on CUDA device 7000\n",
    ):
        doc = triage(tmp_path, {"train.log": text})
        f = first(doc)
        assert f["code"] == "MD653" and "Duplicate GPU detected" in f["line"], text
        assert "one rank per GPU" in f["meaning"]
        (summary,) = [g for g in findings(doc) if g["code"] == "MD650"]
        assert summary["consequence_of"] == f["id"]


def test_a_last_error_that_says_the_peer_went_away_stays_an_echo(tmp_path):
    text = (
        "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote "
        "process exiting prematurely.\n"
        "[rank1]: Last error:\n"
        "[rank1]: socketProgress: Connection closed by remote peer node3<52314>\n"
    )
    r = run_cli("triage", str(_write(tmp_path, text)), "--json")
    roles = {f["code"]: f["role"] for f in r.doc["triage"]["findings"]}
    assert set(roles.values()) == {"consequence"}, roles


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "rank1.log"
    p.write_text(text)
    return p


def test_a_crash_report_of_the_abort_names_the_completion_handler(tmp_path):
    # the .ips itself (Apple's JSON crash report): the faulting thread on Metal's completion
    # queue through MLX's check_error to abort, as mlx #3390 and exo #2088 quote it
    import json

    header = {
        "app_name": "python3.12",
        "bug_type": "309",
        "name": "python3.12",
        "timestamp": "2026-05-14 11:46:42.00 +0200",
        "os_version": "macOS 26.4 (25E246)",
    }
    images = [
        {"name": "libsystem_kernel.dylib"},
        {"name": "libc++abi.dylib"},
        {"name": "libmlx.dylib"},
        {"name": "Metal"},
    ]
    frames = [
        ("__pthread_kill", 0),
        ("abort", 0),
        ("std::__terminate(void (*)())", 1),
        ("__cxa_throw", 1),
        ("mlx::core::gpu::check_error(MTL::CommandBuffer*)", 2),
        ("-[_MTLCommandBuffer didCompleteWithStartTime:endTime:error:]", 3),
    ]
    body = {
        "procName": "python3.12",
        "pid": 74990,
        "captureTime": "2026-05-14 11:46:42.1 +0200",
        "exception": {"type": "EXC_CRASH", "signal": "SIGABRT"},
        "faultingThread": 0,
        "threads": [
            {
                "triggered": True,
                "queue": "com.Metal.CompletionQueueDispatch",
                "frames": [{"symbol": s, "imageIndex": i} for s, i in frames],
            }
        ],
        "usedImages": images,
    }
    p = tmp_path / "python3.12-2026-05-14-114642.ips"
    p.write_text(json.dumps(header) + "\n" + json.dumps(body))
    r = run_cli("triage", str(p), "--json")
    (f,) = [f for f in r.doc["triage"]["findings"] if f["first_cause"]]
    assert f["code"] == "MD661" and "completion handler" in f["meaning"]
    assert "macmon" in f["remedy"] and "DiagnosticReports" not in f["remedy"]
