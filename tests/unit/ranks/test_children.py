"""ranks.children: the children the kernel lists per thread (/proc/PID/task/TID/children) are
the ones psutil finds by reading every process, recursive or not; without that file, psutil's."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from meshdoctor import ranks


@pytest.fixture
def tree():
    """Three children, each with a grandchild (a shell running sleep in the background)."""
    procs = [subprocess.Popen(["sh", "-c", "sleep 30 & wait"]) for _ in range(3)]
    me = psutil.Process()
    deadline = time.monotonic() + 30
    while len(me.children(recursive=True)) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    yield procs
    for p in procs:
        for c in psutil.Process(p.pid).children(recursive=True):
            c.kill()
        p.kill()
        p.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/task: Linux")
@pytest.mark.parametrize("recursive", [False, True])
def test_the_kernels_list_is_psutils(tree, recursive):
    assert ranks._task_children(psutil.Process().pid) is not None
    got = sorted(p.pid for p in ranks.children(recursive=recursive))
    want = sorted(p.pid for p in psutil.Process().children(recursive=recursive))
    assert got == want and len(got) == (6 if recursive else 3)


def test_without_the_kernels_list_psutil_is_asked(tree, monkeypatch):
    monkeypatch.setattr(ranks, "_task_children", lambda pid: None)
    assert sorted(p.pid for p in ranks.children()) == sorted(p.pid for p in tree)
