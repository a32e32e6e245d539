"""A tool's child that leaves the tool's process group (``setsid``, a daemon's double fork) is
still found, by the command token it inherited (meshdoctor.execute.COMMAND_MARKER_ENV), and
killed with the tool: nothing a tool started outlives meshdoctor."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from meshdoctor import execute

ESCAPING_TOOL = """#!/bin/sh
# a hung tool whose child leaves its process group and session (setsid(1) execs sleep: same pid)
setsid sleep 300 &
echo $! > "{ready}.tmp" && mv "{ready}.tmp" "{ready}"
sleep 300
"""


def _escaped(tmp_path):
    """The stub tool and the file it writes its escaped child's pid to."""
    ready = tmp_path / "ready"
    tool = tmp_path / "ibv_devinfo"
    tool.write_text(ESCAPING_TOOL.format(ready=ready))
    tool.chmod(0o755)
    return tool, ready


def _escaped_child(ready):
    """The escaped child (a psutil.Process), or None when it is gone already."""
    try:
        return psutil.Process(int(ready.read_text()))
    except psutil.NoSuchProcess:
        return None


def _gone(p, wait_s: float = 30.0) -> bool:
    if p is None:
        return True
    t_end = time.monotonic() + wait_s
    while time.monotonic() < t_end:
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_a_setsid_child_of_a_timed_out_tool_is_killed_with_it(tmp_path):
    tool, ready = _escaped(tmp_path)
    r = execute.run([str(tool)], timeout=3)
    assert r.timed_out
    child = _escaped_child(ready)
    try:
        assert _gone(child), f"pid {child.pid} outlived its tool"
    finally:
        if child is not None and child.is_running():
            child.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stub needs setsid(1)")
def test_a_setsid_child_of_a_hung_tool_does_not_outlive_check(tmp_path, clean_env):
    tool, ready = _escaped(tmp_path)
    env = dict(
        clean_env,
        PATH=f"{tmp_path}:{clean_env.get('PATH', '')}",
        MESHDOCTOR_PLATFORM="linux",
        MESHDOCTOR_SYSTEM_PYTHON="",  # the stub, not pyverbs
    )
    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor", "check", "--only", "MD201", "--timeout", "4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode in (1, 3), (p.stdout, p.stderr)
    assert ready.exists(), "the stub never ran"
    child = _escaped_child(ready)
    try:
        assert _gone(child, 10.0), f"pid {child.pid} outlived check"
    finally:
        if child is not None and child.is_running():
            child.kill()
