"""meshdoctor.proctable.lite gives psutil's answers (psutil is installed here: the two are compared on
processes this test starts)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from meshdoctor.proctable import lite as pslite

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_a_planted_rank_reads_the_same_with_and_without_psutil():
    env = dict(os.environ, MLX_RANK="2", PADDED="a b\tc")
    child = subprocess.Popen(
        [sys.executable, "-c", "import time, sys; time.sleep(60)", "x y", ""], env=env
    )
    try:
        time.sleep(0.3)
        mine, theirs = pslite.Process(child.pid), psutil.Process(child.pid)
        assert mine.cmdline() == theirs.cmdline()
        assert mine.environ() == theirs.environ()
        assert mine.name() == theirs.name()
        assert mine.ppid() == theirs.ppid() == os.getpid()
        assert mine.status() == theirs.status()
        assert mine.username() == theirs.username()
        assert abs(mine.create_time() - theirs.create_time()) < 0.05
        assert mine.memory_info().rss == theirs.memory_info().rss
        assert {p.path for p in mine.memory_maps()} >= {
            p.path for p in theirs.memory_maps(grouped=True) if p.path.startswith("/")
        }
        me = pslite.Process()
        assert child.pid in {p.pid for p in me.children(recursive=True)}
        assert [p.pid for p in me.parents()] == [p.pid for p in psutil.Process().parents()]
        assert mine.is_running()
    finally:
        child.kill()
        child.wait()
    with pytest.raises(pslite.NoSuchProcess):
        pslite.Process(child.pid)
    assert not pslite.pid_exists(child.pid)
    assert set(pslite.pids()) >= {os.getpid(), 1}


def test_zombie_and_machine_figures():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    for _ in range(100):
        if pslite.Process(child.pid).status() == pslite.STATUS_ZOMBIE:
            break
        time.sleep(0.05)
    assert pslite.Process(child.pid).status() == psutil.Process(child.pid).status() == "zombie"
    with pytest.raises(pslite.ZombieProcess):
        pslite.Process(child.pid).cmdline()
    child.wait()
    assert pslite.boot_time() == psutil.boot_time()
    assert pslite.virtual_memory().total == psutil.virtual_memory().total
    mine = {n: {a.address for a in v} for n, v in pslite.net_if_addrs().items()}
    theirs = {
        n: {a.address.split("%")[0] for a in v if a.family in (2, 10)}
        for n, v in psutil.net_if_addrs().items()
    }
    assert {n: s for n, s in mine.items() if s} == {n: s for n, s in theirs.items() if s}
