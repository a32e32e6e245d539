"""Every read of a command's output is bounded in bytes and time (meshdoctor.execute.run): a
tool that never stops printing is killed at the cap, with its whole group, and says it was cut."""

from __future__ import annotations

import os
import sys
import time

import psutil

from meshdoctor import execute

CAP = 1024 * 1024


def test_a_tool_that_never_stops_printing_is_cut_at_the_cap_and_killed():
    t0 = time.monotonic()
    r = execute.run(["yes", "hca_id: rdma_en2"], timeout=60, max_bytes=CAP)
    assert time.monotonic() - t0 < 30  # a verdict at all, far inside the deadline
    assert r.cut == "stdout" and r.returncode is None and not r.timed_out and not r.ok
    assert len(r.stdout.encode()) == CAP
    assert r.describe() == (
        f"`yes 'hca_id: rdma_en2'` printed more than {CAP} bytes on stdout (cut there and killed)"
    )


def test_stderr_is_capped_too_and_the_tool_group_is_gone(tmp_path):
    pidfile = tmp_path / "child"
    code = (
        "import os, subprocess, sys; "
        f"c = subprocess.Popen(['sleep', '300']); open({str(pidfile)!r}, 'w').write(str(c.pid)); "
        "sys.stderr.flush()\nwhile True: os.write(2, b'x' * 65536)"
    )
    r = execute.run([sys.executable, "-c", code], timeout=60, max_bytes=CAP)
    assert r.cut == "stderr" and len(r.stderr) == CAP
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while psutil.pid_exists(child) and time.monotonic() < deadline:
        try:
            if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie"


def test_under_the_cap_output_and_input_pass_whole():
    data = "line\n" * 200_000  # 1 MB through stdin and back
    r = execute.run(["cat"], timeout=60, input=data)
    assert r.ok and r.stdout == data and r.cut is None
    r = execute.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")


def test_a_silent_hang_is_still_a_timeout_with_what_it_printed():
    r = execute.run(["sh", "-c", "echo partial; exec sleep 300"], timeout=1)
    assert r.timed_out and r.cut is None and r.stdout == "partial\n"
    assert os.getpgrp() != 0  # this process's group was never signalled
