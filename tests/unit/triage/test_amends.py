"""Readings that amend a finding with what the lines around it say: a faulthandler dump's
innermost frame (pyfault), nccl-tests' buffers beside NCCL's out of memory (benchmem), a Metal
out of memory while the model loaded (loadphase), a bare exception's wrapped message
(unread.wrapped), and an NCCL trace line beside the WARN of its rank (timeline)."""

from __future__ import annotations

import pytest

from tests.helpers import first_cause, triage_files

BIG = (
    "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
    "[metal::malloc] Attempting to allocate 40000000000 bytes which is greater than the "
    "maximum allowed buffer size of 20000000000 bytes.\n"
    "Fatal Python error: Aborted\n\n"
)


def test_the_crashed_threads_innermost_frame_is_named(tmp_path):
    dump = (
        "Thread 0x0000000170e2b000 (most recent call first):\n"
        '  File "/usr/lib/python3.12/threading.py", line 331 in wait\n\n'
        "Current thread 0x00000001e136dc40 (most recent call first):\n"
        '  File "/srv/venv/lib/python3.12/site-packages/mlx_vlm/models/x/vision.py", line 81 '
        "in attention\n"
        '  File "/srv/venv/lib/python3.12/site-packages/mlx_vlm/generate.py", line 84 in main\n'
    )
    f = first_cause(triage_files(tmp_path, {"log.txt": BIG + dump}))
    assert f["code"] == "MD673"
    assert "vision.py, line 81, in attention" in f["meaning"]
    assert "mlx_vlm's code asked for the operation that failed" in f["meaning"]
    assert "threading.py" not in f["meaning"]
    assert "2.0 times the largest buffer" in f["meaning"]


def test_a_dump_far_below_the_failure_is_not_its_place(tmp_path):
    gap = "".join(f"step {i}\n" for i in range(60))
    dump = 'Current thread 0x1 (most recent call first):\n  File "/srv/a.py", line 3 in f\n'
    f = first_cause(triage_files(tmp_path, {"log.txt": BIG.replace("Fatal", gap + "Fatal") + dump}))
    assert "faulthandler" not in f["meaning"]


OOM = "h1:402:402 [0] enqueue.cc:1451 NCCL WARN Cuda failure 2 'out of memory'\n"


def test_nccl_out_of_memory_in_nccl_tests_names_the_benchmarks_buffers(tmp_path):
    files = {
        "log.txt": "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor)\n"
        "NCCL_BUFFSIZE=8388608\n" + OOM + "alltoall_perf: Test NCCL failure alltoall.cu:62\n"
    }
    f = first_cause(triage_files(tmp_path, files))
    assert f["code"] == "MD800" and "the job is nccl-tests" in f["meaning"]
    assert "maximum size is 17179869184" in f["meaning"] and "NCCL_BUFFSIZE=8388608" in f["meaning"]


def test_nccl_out_of_memory_of_a_training_job_is_not_read_as_nccl_tests(tmp_path):
    f = first_cause(triage_files(tmp_path, {"rank0.log": "step 10 loss 2.1\n" + OOM}))
    assert f["code"] == "MD800" and "nccl-tests" not in f["meaning"]


METAL_OOM = (
    "[METAL] Command buffer execution failed: Insufficient Memory "
    "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
)


@pytest.mark.parametrize(
    "before,at_load",
    [
        ("Loading model weights from /models/m\nWarm-up pass\n", True),
        ("request 41 done\nrequest 42 started\n", False),
    ],
)
def test_a_metal_out_of_memory_says_when_it_failed_while_loading(tmp_path, before, at_load):
    f = first_cause(triage_files(tmp_path, {"log.txt": before + METAL_OOM}))
    assert f["code"] == "MD661"
    assert ("while the model was loading or warming up" in f["meaning"]) is at_load


def test_a_bare_exception_wrapped_onto_the_next_lines_is_read_with_them(tmp_path):
    text = (
        "AssertionError: Failed to download config.json from \n"
        "https://huggingface.co/org/model/resolve/\n"
        "main/config.json: 403\n"
    )
    f = first_cause(triage_files(tmp_path, {"log.txt": text}))
    assert f["code"] == "MD663" and "HTTP 401/403" in f["meaning"]
    assert "with the 2 line(s) after it" in f["meaning"]


WARN = (
    "h1:11172:11249 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.9<51577> failed : Connection refused\n"
)
TRACE = "h1:11172:11249 [3] NCCL INFO transport/net.cc:687 -> 2\n"


def test_a_trace_line_before_the_warn_of_its_rank_is_its_consequence(tmp_path):
    f = first_cause(triage_files(tmp_path, {"rank0.log": TRACE + WARN + TRACE}))
    assert f["code"] == "MD653" and "socketStartConnect" in f["line"]


def test_trace_lines_alone_still_say_where_it_failed(tmp_path):
    f = first_cause(triage_files(tmp_path, {"rank0.log": TRACE}))
    assert f["code"] == "MD653" and "transport/net.cc:687 with result 2" in f["meaning"]
