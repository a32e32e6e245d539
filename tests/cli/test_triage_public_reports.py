"""``meshdoctor triage`` on the lines of public MLX failure reports (each test names its thread):
a fatal line with no specific signature still gives a cause and NO-GO, a line that names its
class gets that class's meaning, and the remedy does not repeat what the report says was tried."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import first_cause as first, run_cli
from tests.helpers import triage_files as triage

# https://github.com/ml-explore/mlx-examples/issues/1296 (mpirun, MLX_METAL_FAST_SYNCH)
INPUT_COHERENT = """\
Terminating due to uncaught exception: [metal::Device] Unable to load kernel input_coherent
[node03:84145] [ 1] 0   libsystem_pthread.dylib             0x0000000192042c20 pthread_kill + 288
[node03:84145] [ 2] 0   libsystem_c.dylib                   0x0000000191f4fa20 abort + 180
[node03:84145] [ 3] 0   libmlx.dylib                        0x0000000106676b80 \
_ZN3mlx4core20abort_with_exceptionERKSt9exception + 400
[node03:84145] *** End of error message ***
--------------------------------------------------------------------------
prterun noticed that process rank 0 with PID 62282 on node node01 exited on
signal 6 (Abort trap: 6).
--------------------------------------------------------------------------
"""

# https://github.com/ml-explore/mlx/issues/2540 (mpi backend, ssh works)
MPI_NO_ROUTE = """\
[balthasar.local:04334] SET DYLD_LIBRARY_PATH=/opt/homebrew/lib
[balthasar][[59259,1],0][btl_tcp_endpoint.c:857:mca_btl_tcp_endpoint_start_connect] peer: \
melchior Unable to connect to the peer 192.168.68.53 on port 1024: No route to host

[balthasar:00000] *** An error occurred in Socket closed
[balthasar:00000] *** reported by process [3883597825,0]
[balthasar:00000] *** on a NULL communicator
[balthasar:00000] *** Unknown error
[balthasar:00000] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[balthasar:00000] ***    and MPI will try to terminate your MPI job as well)
--------------------------------------------------------------------------
prterun has exited due to process rank 0 with PID 0 on node balthasar calling
"abort". This may have caused other processes in the application to be
terminated by signals sent by prterun (as reported here).
--------------------------------------------------------------------------
"""

# https://github.com/ml-explore/mlx/issues/2144 (mlx.launch on localhost)
LAUNCH_BLOCKING_IO = """\
hello worlException in thread Thread-2 (node_thread):
Traceback (most recent call last):
  File "/Users/awnihannun/miniconda3/lib/python3.12/threading.py", line 1073, in _bootstrap_inner
    self.run()
  File "/Users/awnihannun/miniconda3/lib/python3.12/threading.py", line 1010, in run
    self._target(*self._args, **self._kwargs)
  File "/Users/awnihannun/mlx/python/mlx/distributed_run.py", line 292, in node_thread
    outfile.write(msg)
BlockingIOError: [Errno 35] write could not complete without blocking
"""


def test_uncaught_exception_with_a_missing_metal_kernel_and_the_mpi_rank_it_killed(tmp_path):
    doc = triage(tmp_path, {"node03.log": INPUT_COHERENT})
    f = first(doc)
    assert f["code"] == "MD698" and f["groups"] == {"kernel": "input_coherent"}
    assert "MLX_METAL_FAST_SYNCH" in f["meaning"] and "mlx-metal" in f["remedy"]
    assert doc["verdict"] == "no-go" and doc["exit_code"] == 1
    # the generic uncaught-exception and MLX-error findings gave way to the specific one
    codes = [x["code"] for x in doc["triage"]["findings"]]
    assert "MD696" not in codes and "MD697" not in codes
    rank = next(x for x in doc["triage"]["findings"] if x["code"] == "MD657")
    assert rank["rank"] == 0 and rank["consequence_of"] == f["id"]


def test_one_line_mpirun_report_gives_the_rank_and_its_signal(tmp_path):
    line = (
        "mpirun noticed that process rank 1 with PID 4242 on node m2 exited on signal 11 "
        "(Segmentation fault: 11).\n"
    )
    f = first(triage(tmp_path, {"mpirun.log": line}))
    assert f["code"] == "MD657" and f["rank"] == 1 and f["groups"]["signal"] == "11"
    assert "SIGSEGV" in f["meaning"] and f["exit"]["signal"] == 11


def test_open_mpi_connect_failure_although_ssh_works(tmp_path):
    doc = triage(tmp_path, {"launch.log": MPI_NO_ROUTE})
    f = first(doc)
    assert f["code"] == "MD699" and f["groups"]["peer"] == "192.168.68.53"
    assert "1024" in f["meaning"] and "ssh" in f["meaning"]
    assert "btl_tcp_if_include" in f["remedy"]
    assert "github.com/ml-explore/mlx/issues/2540" in run_cli("explain", "MD699").out


def test_generic_uncaught_exception_and_mlx_error_are_causes(tmp_path):
    doc = triage(
        tmp_path,
        {
            "rank0.log": "libc++abi: terminating due to uncaught exception of type "
            "std::runtime_error: Failed to open the weights file\n",
            "rank1.log": "RuntimeError: [metal::Device] Unable to build metal library from "
            "source\n",
        },
    )
    by = {f["code"]: f for f in doc["triage"]["findings"]}
    assert set(by) == {"MD696", "MD697"} and by["MD696"]["first_cause"]
    assert "[metal::Device] is the Metal GPU backend" in by["MD697"]["meaning"]
    assert "MLX version" in by["MD697"]["meaning"]


def test_a_bare_exception_line_is_a_python_exception_without_its_header(tmp_path):
    # https://github.com/ml-explore/mlx/issues/2944 (mlx.distributed_config)
    f = first(triage(tmp_path, {"config.log": "NameError: name 'log_warning' is not defined\n"}))
    assert f["code"] == "MD663" and f["groups"]["bare"] == "NameError"
    assert "Traceback (most recent call last):` header" in f["meaning"]


def test_an_exception_in_mlx_launch_itself_is_a_launcher_fault(tmp_path):
    f = first(triage(tmp_path, {"launch.log": LAUNCH_BLOCKING_IO}))
    assert f["code"] == "MD663" and f["groups"]["type"] == "BlockingIOError"
    assert f["groups"]["file"].endswith("mlx/distributed_run.py")
    assert "launcher fault" in f["meaning"] and "ranks may be fine" in f["meaning"]


def test_command_buffer_out_of_memory_names_the_shard_tell(tmp_path):
    # https://github.com/Blaizzy/mlx-vlm/issues/1383 (the error name, in MLX's wording)
    line = (
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] "
        "Command buffer execution failed: Insufficient Memory "
        "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
    )
    doc = triage(tmp_path, {"rank0.log": line})
    f = first(doc)
    assert [x["code"] for x in doc["triage"]["findings"]] == ["MD661"]
    assert f["groups"]["error"] == "OutOfMemory" and "shard" in f["meaning"]
    innocent = line.replace("OutOfMemory", "InnocentVictim")
    f = first(triage(tmp_path, {"rank0.log": innocent}))
    assert "another one on the GPU faulted" in f["meaning"]
    # Metal's hang: its error name or only its description (Apple's IOGPU names)
    for text in (
        line.replace("OutOfMemory", "Hang"),
        line.replace("Insufficient Memory", "Caused GPU Hang Error").replace(
            "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", ""
        ),
    ):
        f = first(triage(tmp_path, {"rank0.log": text}))
        assert "stopped making progress" in f["meaning"] and "not memory" in f["meaning"]


def test_ring_reset_with_no_peer_error_is_first_a_link_reset(tmp_path):
    # https://github.com/ml-explore/mlx/issues/3862
    text = "[ring] Receiving from socket 51 failed with errno 54\n" * 10
    text += "[ring] Too many send/recv errors. Aborting...\n"
    f = first(triage(tmp_path, {"rank3.log": text}))
    assert f["code"] == "MD615" and f["causes"][0]["cause"].startswith(
        "a link reset (the network dropped or reset the connection; every peer still alive)"
    )


def test_connect_failures_name_a_node_local_syn_sent(tmp_path):
    # https://github.com/ml-explore/mlx/issues/3755: ping and nc work from the same host
    doc = triage(
        tmp_path,
        {
            "rank2-jaccl.log": "[jaccl] Couldn't connect (error: 60)\n",
            "rank2-ring.log": "[ring] Couldn't connect (error: 65)\n",
        },
    )
    for f in doc["triage"]["findings"]:
        assert any("SYN_SENT" in c["cause"] for c in f["causes"]), f["code"]
        assert "netstat -an | grep SYN_SENT" in f["remedy"]


def test_gpu_timeout_remedy_does_not_stop_at_the_cpu_stream(tmp_path):
    # https://github.com/Blaizzy/mlx-vlm/issues/2179: stream=mx.cpu was applied and did not help
    line = (
        "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
    )
    f = first(triage(tmp_path, {"rank0.log": line}))
    assert f["code"] == "MD616" and "not always enough" in f["remedy"]
    causes = " ".join(c["cause"] for c in f["causes"])
    assert "network latency on a slow link" in causes and "tied to GPU buffers" in causes


def test_no_rdma_names_thunderbolt_4_first(tmp_path):
    # https://github.com/ml-explore/mlx/issues/3777: rdma_ctl already enabled, a 40 Gb/s link
    f = first(triage(tmp_path, {"config.log": "  [ERROR] m2 does not seem to have RDMA enabled\n"}))
    assert f["code"] == "MD689"
    assert f["causes"][0]["cause"].startswith("Thunderbolt 4 (or older) hardware, at most 40 Gb/s")
    assert "ring backend" in f["remedy"]


# https://github.com/ml-explore/mlx/issues/3830: `sample` of a hung rank, MLX_METAL_FAST_SYNCH=1
FENCE_HANG = """\
Call graph:
    2706 Thread_1234   DispatchQueue_1: com.apple.main-thread  (serial)
      2706 start  (in dyld) + 2840
        2706 mlx::core::array::wait()  (in libmlx.dylib) + 76
          2706 mlx::core::Fence::wait(mlx::core::Stream, mlx::core::array const&)  (in libmlx.dylib) + 96
          2706 mlx::core::Event::wait()  (in libmlx.dylib) + 60
            2706 -[IOSurfaceSharedEvent waitUntilSignaledValue:timeoutMS:]  (in IOSurface) + 84
    2706 Thread_1240
      2706 mlx::core::distributed::ring::SocketThread::worker()  (in libmlx.dylib) + 212
        2706 std::__1::condition_variable::wait(std::__1::unique_lock<std::__1::mutex>&)
"""


def test_a_hung_rank_waiting_on_a_metal_fence_points_at_fast_synch(tmp_path):
    f = first(triage(tmp_path, {"rank0-sample.txt": FENCE_HANG}))
    assert f["code"] == "MD692" and "MLX_METAL_FAST_SYNCH" in f["remedy"]


# https://github.com/exo-explore/exo/issues/1004: a traceback pasted with its frames unindented
UNINDENTED = """\
[ 2025-12-24 13:04:46.001 | WARNING | exo.worker.runner.runner:main:249 ] Runner 079d crashed \
with critical exception [jaccl] Malformed device file
Traceback (most recent call last):

File "__main__.py", line 38, in <module>

File "multiprocessing/spawn.py", line 122, in spawn_main
"""


def test_a_frame_line_that_lost_its_indent_is_not_read_as_the_exception(tmp_path):
    doc = triage(tmp_path, {"node.log": UNINDENTED})
    assert [f["code"] for f in doc["triage"]["findings"]] == ["MD631"]


def test_a_libstdcxx_abort_of_an_mlx_op_is_a_cause_naming_the_op(tmp_path):
    # https://github.com/exo-explore/exo/issues/690 (MLX on a Linux CPU)
    doc = triage(
        tmp_path,
        {
            "exo.txt": "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  [Matmul::eval_cpu] Currently only supports float32.\n"
            "Aborted (core dumped)\n"
        },
    )
    codes = {f["code"]: f for f in doc["triage"]["findings"]}
    # the what() line's message is the error; libstdc++'s terminate line above it wraps it
    assert first(doc)["code"] == "MD697"
    assert "the Matmul operation on the CPU" in codes["MD697"]["meaning"]
    assert not codes["MD696"]["first_cause"]
    assert "SIGABRT" in codes["MD695"]["meaning"]


def test_a_short_crashed_thread_blames_the_first_frame_that_is_not_the_systems(tmp_path):
    # https://github.com/exo-explore/exo/issues/1808: memmove on top, JACCL's all_gather below
    f = first(
        triage(
            tmp_path,
            {
                "crash.txt": "Exception Type:  EXC_BAD_ACCESS (SIGBUS)\n\nThread 2 Crashed:\n"
                "  0  _platform_memmove                                        + 544\n"
                "  1  jaccl::MeshImpl::all_gather(char const*, char*, long long) + 1380\n"
                "  2  mlx::core::scheduler::StreamThread::thread_fn()          + 456\n"
            },
        )
    )
    assert f["code"] == "MD662" and "jaccl::MeshImpl::all_gather" in f["meaning"]
    assert "report it to MLX" in f["meaning"] and "Find the crash report" not in f["remedy"]


def test_hung_waits_inside_mlx_are_named_by_what_they_wait_on(tmp_path):
    cuda = 'Thread 0x7F8A1C2E4740 (active): "MainThread"\n    mlx::core::cu::AtomicEvent::wait (libmlx.so)\n'
    exo = (
        "[ 2026-04-01 12:46:18.963 | ERROR    | exo.worker.engines.mlx.auto_parallel:watchdog:99 ] "
        "mlx_item evaluation timed out after 10s. This may indicate an issue with FAST_SYNCH "
        "and tensor parallel sharding. Terminating process.\n"
    )
    # https://github.com/ml-explore/mlx/issues/3876, https://github.com/exo-explore/exo/issues/1826
    a = first(triage(tmp_path, {"pyspy.txt": cuda}))
    assert a["code"] == "MD692" and "CUDA event" in a["meaning"]
    b = first(triage(tmp_path, {"exo.log": exo}))
    assert b["code"] == "MD692" and "watchdog ended the runner after 10 s" in b["meaning"]


def test_metal_internal_error_0xe_reads_as_a_gpu_timeout(tmp_path):
    # https://github.com/ml-explore/mlx/issues/1231
    line = "RuntimeError: [METAL] Command buffer execution failed: Internal Error (0000000e:Internal Error)\n"
    f = first(triage(tmp_path, {"rank0.log": line}))
    assert f["code"] == "MD661" and "the GPU timed out" in f["meaning"]


def test_a_worker_threads_exception_without_its_traceback_line_keeps_its_frames(tmp_path):
    # https://github.com/ml-explore/mlx-lm/issues/1181
    log = (
        "Exception in thread Thread-2 (_generate):\n"
        '  File "mlx_lm/server.py", line 825, in _generate\n'
        "    prompt_responses, gen_responses = batch_generator.next()\n"
        "RuntimeError: There is no Stream(gpu, 0) in current thread.\n"
    )
    f = first(triage(tmp_path, {"server.log": log}))
    assert f["code"] == "MD663" and "mlx-lm to 0.31.3" in f["meaning"]
    assert "header" not in f["meaning"] and f["context"]


def test_a_crash_summary_line_is_no_python_exception(tmp_path):
    # https://github.com/exo-explore/exo/issues/1458 (the reporter's summary of a crash report)
    text = (
        "Exception: EXC_CRASH / SIGABRT (Abort trap: 6)\n"
        "  [libmlx.dylib] mlx::core::gpu::check_error(MTL::CommandBuffer*)\n"
    )
    f = first(triage(tmp_path, {"summary.txt": text}))
    assert f["code"] == "MD661"


def test_a_gpu_event_wait_behind_a_spinning_jaccl_peer_is_not_the_fence_deadlock(tmp_path):
    # https://github.com/ml-explore/mlx/issues/3910: the main thread waits on the GPU event
    # because the stream thread spins in MeshImpl::recv (a dead peer)
    sample = (
        "    2706 mlx::core::Event::wait()  (in libmlx.dylib) + 60\n"
        "      2706 -[IOSurfaceSharedEvent waitUntilSignaledValue:timeoutMS:]  (in IOSurface)\n"
        "    2706 jaccl::MeshImpl::recv(char*, long, int)  (in libjaccl.dylib) + 120\n"
    )
    r = run_cli("triage", str(_one(tmp_path, sample)), "--json")
    assert [f["code"] for f in r.doc["triage"]["findings"]] == ["MD611"]


def test_only_echoes_read_is_said_plainly(tmp_path):
    # https://github.com/exo-explore/exo/issues/2067: one rank's log, its peer's failure elsewhere
    r = run_cli("triage", str(_one(tmp_path, "RuntimeError: [jaccl] Recv failed with errno=2\n")))
    assert "[F1 FIRST SEEN (an echo: its cause is in a log not given, or in none)]" in r.out


def _one(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exo.log"
    p.write_text(text)
    return p
