"""meshdoctor.signatures.frames: the frame and thread lines of Apple's crash report text, lldb
and gdb read as (image, symbol), and the frame signatures they name (the one classification that
.ips reports and pasted text share)."""

from __future__ import annotations

import pytest

from meshdoctor.signatures import frames


@pytest.mark.parametrize(
    "line,frame",
    [
        (
            "0   libthunderboltrdma.dylib      \t       0x104c0d52c tbt_post_recv + 44",
            ("libthunderboltrdma.dylib", "tbt_post_recv"),
        ),
        (
            "3   Metal                         \t       0x19b7c1a2c -[_MTLCommandBuffer "
            "commitAndWaitUntilSubmitted] + 72",
            ("Metal", "-[_MTLCommandBuffer commitAndWaitUntilSubmitted]"),
        ),
        (
            "  * frame #0: 0x0000000104c0d52c librdma.dylib`ibv_reg_mr + 28",
            ("librdma.dylib", "ibv_reg_mr"),
        ),
        (
            "    frame #2: 0x0000000105300460 libmlx.dylib`mlx::core::eval(...) + 96 at eval.cpp:12",
            ("libmlx.dylib", "mlx::core::eval(...)"),
        ),
        (
            "#0  0x00007ffff7a3c4d1 in tbt_post_send () from /usr/lib/libthunderboltrdma.dylib",
            ("libthunderboltrdma.dylib", "tbt_post_send"),
        ),
        ("#1  jaccl::MeshImpl::send (this=0x1) at mesh.cpp:120", ("", "jaccl::MeshImpl::send")),
        ("2026-01-05 10:00:04 INFO runner: step 3", None),
        ("Thread 3 Crashed::  com.apple.jaccl.send", None),
    ],
)
def test_frame_lines_of_each_shape(line, frame):
    assert frames.parse_frame(line) == frame


@pytest.mark.parametrize(
    "line,head",
    [
        ("Thread 3 Crashed::  com.apple.jaccl.send", (3, True)),
        ("Thread 0::  Dispatch queue: com.apple.main-thread", (0, False)),
        ("Thread 1:", (1, False)),
        ("Crashed Thread:        3", (3, True)),
        ("* thread #4, queue = 'mlx', stop reason = EXC_BAD_ACCESS (code=1)", (4, True)),
        ("  thread #1, queue = 'com.apple.main-thread'", (1, False)),
        ('Thread 5 "python3" received signal SIGSEGV, Segmentation fault.', (5, True)),
        ("Exception Type:  EXC_BAD_ACCESS (SIGSEGV)", None),
    ],
)
def test_thread_headers(line, head):
    assert frames.thread_header(line) == head


def test_the_frame_signatures_decide_in_family_order_and_metal_only_aborts_by_image():
    tbt = ("libthunderboltrdma.dylib", "tbt_post_recv")
    reg = ("librdma.dylib", "ibv_reg_mr")
    metal_img = ("Metal", "-[MTLDevice newBufferWithLength:]")
    sig, fr = frames.classify_frames([("libsystem_c.dylib", "abort"), reg, tbt])
    assert (sig.code, fr) == ("MD612", tbt)
    assert frames.classify_frames([metal_img], "SIGABRT")[0].code == "MD661"
    assert frames.classify_frames([metal_img], "SIGSEGV") == (None, metal_img)
    assert frames.classify_frames([]) == (None, None)


def test_report_headers():
    assert frames.report_header("Process:               python3.12 [48213]") == (
        "process",
        ("python3.12", "48213"),
    )
    assert frames.report_header("Date/Time:             2026-01-05 10:00:04.1830 +0100") == (
        "time",
        ("2026-01-05 10:00:04.1830 +0100",),
    )
    assert frames.report_header("Path: /usr/bin/python3") is None


def test_abseils_crash_frames_are_frames():
    from meshdoctor.signatures.frames import parse_frame

    assert parse_frame("(W pid=1) PC: @     0x7f32d184f03d  (unknown)  ncclLaunchPrepare()") == (
        "",
        "ncclLaunchPrepare()",
    )
    assert parse_frame("(W pid=1)     @     0x7f62fb1b8520  (unknown)  (unknown)") is None
