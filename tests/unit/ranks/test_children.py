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
    """A parent of our own (not this worker, whose other children come and go) with three
    children, each with a grandchild (a shell running sleep in the background)."""
    top = subprocess.Popen(["sh", "-c", "for i in 1 2 3; do sh -c 'sleep 30 & wait' & done; wait"])
    root = psutil.Process(top.pid)
    deadline = time.monotonic() + 30
    while len(root.children(recursive=True)) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    yield top
    for c in root.children(recursive=True):
        c.kill()
    top.kill()
    top.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/task: Linux")
@pytest.mark.parametrize("recursive", [False, True])
def test_the_kernels_list_is_psutils(tree, recursive):
    assert ranks._task_children(tree.pid) is not None
    got = sorted(p.pid for p in ranks.children(tree.pid, recursive=recursive))
    want = sorted(p.pid for p in psutil.Process(tree.pid).children(recursive=recursive))
    assert got == want and len(got) == (6 if recursive else 3)


def test_without_the_kernels_list_psutil_is_asked(tree, monkeypatch):
    monkeypatch.setattr(ranks, "_task_children", lambda pid: None)
    want = sorted(p.pid for p in psutil.Process(tree.pid).children())
    assert sorted(p.pid for p in ranks.children(tree.pid)) == want and len(want) == 3
