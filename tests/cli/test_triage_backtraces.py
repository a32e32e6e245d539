"""``meshdoctor triage`` on a crash pasted as text: Apple's crash report text (the ``.crash``
format, Apple "Examining the fields in a crash report"), lldb's and gdb's ``bt``. The block is one
record: the crashed thread's frames (only its own, not the other threads') are classified as an
``.ips`` report's are, so the specific signature (MD612 ``tbt_post_recv``, MD609 ``ibv_reg_mr``,
MD661 Metal) replaces the generic native crash, and a crash whose frames name no signature
(MD662) is told without sending the reader to find a crash report it already has."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli, validate

CRASH_TEXT = Path(__file__).parent.parent / "fixtures/triage/python3.12-2026-01-05-100004.crash"
RUNNER = (
    "2026-01-05 09:59:58,120 INFO  runner: loading model shard 2/4\n"
    "2026-01-05 09:59:59,480 INFO  runner: mx.distributed.init(backend='jaccl')\n"
)


def _findings(r):
    assert r.rc == 1, r.err
    validate(r.doc)
    return r.doc["triage"]["findings"]


def test_a_crash_report_text_names_the_crashed_threads_frame():
    r = run_cli("triage", str(CRASH_TEXT), "--json")
    (f,) = _findings(r)  # thread 0's Metal frame and thread 2's JACCL frame are not it
    assert f["code"] == "MD612" and f["first_cause"]
    assert "tbt_post_recv" in f["line"] and f["context"][0].startswith("Exception Type:")
    assert f["groups"]["thread"] == "3"
    assert (f["groups"]["process"], f["groups"]["pid"]) == ("python3.12", "48213")
    assert f["time"].startswith("2026-01-05T09:00:04.183")  # its Date/Time, +0100
    assert any("MeshImpl::all_reduce" in c for c in f["context"])
    human = run_cli("triage", str(CRASH_TEXT))
    assert "tbt.post-recv-sigsegv" in human.out and "tbt_post_recv" in human.out
    assert "native.crash" not in human.out


def test_a_crash_report_text_pasted_in_a_rank_log_is_that_ranks_crash(tmp_path):
    log = tmp_path / "rank2.log"
    log.write_text(RUNNER + CRASH_TEXT.read_text() + "\n[INFO] runner: exiting\n")
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD612" and f["rank"] == 2


def test_a_crash_whose_frames_name_no_signature_says_where_it_crashed(tmp_path):
    text = CRASH_TEXT.read_text()
    crashed = text.index("Thread 3 Crashed")
    text = text[:crashed] + text[crashed:].replace(
        "libthunderboltrdma.dylib      \t       0x104c0d52c tbt_post_recv + 44",
        "libobjc.A.dylib               \t       0x18c3d0c20 objc_release + 16",
        1,
    )
    log = tmp_path / "node2.txt"
    log.write_text(text)
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD662"
    assert f["groups"]["frame"] == "libobjc.A.dylib objc_release"
    assert "libobjc.A.dylib objc_release" in f["meaning"]
    assert "Find the crash report" not in f["remedy"] and "DiagnosticReports" not in f["remedy"]
    assert "with this file" in f["remedy"]
    human = run_cli("triage", str(log))
    assert "Find the crash report" not in human.out and "objc_release" in human.out


def test_a_signal_without_frames_still_sends_for_the_crash_report(tmp_path):
    log = tmp_path / "rank1.log"
    log.write_text(RUNNER + "Segmentation fault: 11\n")
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD662" and "Find the crash report" in f["remedy"]


def test_an_lldb_backtrace_names_ibv_reg_mr(tmp_path):
    log = tmp_path / "rank0.log"
    log.write_text(
        RUNNER + "(lldb) bt all\n"
        "  thread #1, queue = 'com.apple.main-thread'\n"
        "    frame #0: 0x000000018c9e5f30 libsystem_kernel.dylib`__psynch_cvwait + 8\n"
        "    frame #1: 0x000000019b7c1a2c Metal`-[_MTLCommandBuffer waitUntilCompleted] + 72\n"
        "* thread #4, queue = 'mlx', stop reason = EXC_BAD_ACCESS (code=1, address=0x18)\n"
        "  * frame #0: 0x0000000104c0d52c librdma.dylib`ibv_reg_mr + 28\n"
        "    frame #1: 0x0000000104e1c000 libjaccl.dylib`jaccl::MeshImpl::MeshImpl(...) + 100\n"
        "    frame #2: 0x0000000105300460 libmlx.dylib`mlx::core::distributed::init(bool) + 96\n"
        "(lldb) quit\n"
    )
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD609" and "ibv_reg_mr" in f["line"]
    assert f["groups"]["thread"] == "4" and f["rank"] == 0


def test_a_gdb_backtrace_names_tbt_post_send(tmp_path):
    log = tmp_path / "rank1.log"
    log.write_text(
        RUNNER + 'Thread 5 "python3" received signal SIGSEGV, Segmentation fault.\n'
        "[Switching to Thread 0x7fffd0a1b640 (LWP 1234)]\n"
        "(gdb) bt\n"
        "#0  0x00007ffff7a3c4d1 in tbt_post_send () from /usr/lib/libthunderboltrdma.dylib\n"
        "#1  0x00007ffff7b10000 in jaccl::MeshImpl::send (this=0x1) at mesh.cpp:120\n"
    )
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD612" and "tbt_post_send" in f["line"]


def test_a_metal_abort_in_crash_text_is_a_metal_failure(tmp_path):
    log = tmp_path / "rank3.log"
    log.write_text(
        "Process:               python3.12 [50001]\n"
        "Date/Time:             2026-01-05 10:00:05.0000 +0100\n"
        "Crashed Thread:        0  Dispatch queue: com.apple.main-thread\n\n"
        "Exception Type:        EXC_CRASH (SIGABRT)\n"
        "Exception Codes:       0x0000000000000000, 0x0000000000000000\n\n"
        "Thread 0 Crashed::  Dispatch queue: com.apple.main-thread\n"
        "0   libsystem_kernel.dylib        \t       0x18c9ea5b0 __pthread_kill + 8\n"
        "1   libsystem_c.dylib             \t       0x18c92f9c0 abort + 124\n"
        "2   Metal                         \t       0x19b7c1a2c MTLReportFailure + 500\n"
        "3   libmlx.dylib                  \t       0x1052c1a20 mlx::core::metal::Device::"
        "new_queue(int) + 64\n\n"
        "Thread 1:\n"
        "0   libsystem_pthread.dylib       \t       0x18ca25b74 start_wqthread + 0\n"
    )
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD661" and "MTLReportFailure" in f["line"]
    assert f["groups"]["thread"] == "0" and f["time"].startswith("2026-01-05T09:00:05")
    assert "Application Specific Information" in f["remedy"]


def test_a_text_crash_report_in_a_diagnostic_reports_folder_is_read(tmp_path):
    d = tmp_path / "DiagnosticReports"
    d.mkdir()
    (d / "python3.12_2026-01-05-100004_Mac-mini.crash").write_text(CRASH_TEXT.read_text())
    (d / "Safari_2026-01-05-100004_Mac-mini.crash").write_text(CRASH_TEXT.read_text())
    r = run_cli("triage", "--crash-reports", str(d), "--since", "2d", "--json")
    (f,) = _findings(r)
    assert f["code"] == "MD612" and f["source"].endswith("_Mac-mini.crash")
    assert [i["source"] for i in r.doc["triage"]["inputs"]] == [f["source"]]


def test_a_crash_text_of_type_exc_resource_is_a_resource_kill_not_a_native_crash(tmp_path):
    log = tmp_path / "rank1.log"
    log.write_text(
        "Process:               python3.12 [48213]\n"
        "Date/Time:             2026-01-05 10:00:04.1830 +0100\n\n"
        "Exception Type:        EXC_RESOURCE\n"
        "Exception Subtype:     MEMORY\n"
        "Exception Message:     (Limit 6144 MB) Crossed Memory High Watermark\n\n"
        "Thread 0 Crashed::  Dispatch queue: com.apple.main-thread\n"
        "0   libsystem_kernel.dylib        \t       0x18c9e5f30 __psynch_cvwait + 8\n"
    )
    (f,) = _findings(run_cli("triage", str(log), "--json"))
    assert f["code"] == "MD694" and "killed for going over the limit" in f["meaning"]
