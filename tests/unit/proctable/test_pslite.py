"""meshdoctor.proctable.lite gives psutil's answers (psutil is installed here: the two are compared on
processes this test starts)."""

from __future__ import annotations

import json
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


NO_PSUTIL = (  # meshdoctor run as on a host without psutil: its import fails
    "import runpy, sys; sys.modules['psutil'] = None; sys.argv[0] = 'meshdoctor'; "
    "runpy.run_module('meshdoctor', run_name='__main__', alter_sys=True)"
)


def test_the_node_check_gives_the_same_results_without_psutil():
    """Every check of this node, beside a planted rank of a running job, with psutil and with
    the /proc reader in its place: the same results, none an error (a psutil API that the
    reader lacks or answers in another shape is an error of the check that calls it)."""
    rank = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"],
        env=dict(os.environ, MLX_RANK="1", MLX_HOSTFILE="/dev/null"),
    )
    try:

        def results(argv):
            p = subprocess.run(
                [*argv, "check", "--json"],
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            doc = json.loads(p.stdout)
            return p.returncode, sorted((x["code"], x["status"]) for x in doc["results"]), doc

        with_psutil = results([sys.executable, "-m", "meshdoctor"])
        without = results([sys.executable, "-c", NO_PSUTIL])
        assert not [x for x in without[2]["results"] if x["status"] == "error"]
        assert without[:2] == with_psutil[:2]
        (md301,) = [x for x in without[2]["results"] if x["code"] == "MD301"]
        assert md301["status"] == "warn" and f"pid {rank.pid} " in md301["summary"], md301
    finally:
        rank.kill()
        rank.wait()


def test_macos_memory_interfaces_and_boot_from_the_tools_psutil_reads(tmp_path, monkeypatch):
    """On macOS the reader runs the tools a Mac has (fake-Mac stubs here, formats of
    tests/fixtures/mac/healthy) and gives psutil's macOS figures: available is inactive +
    free + speculative pages (psutil _psosx.virtual_memory), addresses with their zones."""
    from tests import stubs

    stubs.install(
        tmp_path / "bin",
        ["healthy"],
        extra={
            "sysctl__n_hw.memsize.txt": "549755813888\n",
            "sysctl__n_kern.boottime.txt": "{ sec = 1764650000, usec = 12 } Tue Dec  2 04:33:20 2025\n",
        },
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(pslite, "LINUX", False)
    vm = pslite.virtual_memory()
    page = 16384
    assert vm.total == 549755813888
    assert vm.available == (987654 + 21475311 + 12345) * page
    assert vm.used == (1012345 + 412345) * page
    assert vm.free == 21475311 * page
    assert vm.percent == round((vm.total - vm.available) / vm.total * 100, 1)
    addrs = pslite.net_if_addrs()
    assert {a.address for a in addrs["lo0"]} == {"127.0.0.1", "::1", "fe80::1%lo0"}
    assert "192.168.50.11" in {a.address for a in addrs["en0"]}
    assert pslite.boot_time() == 1764650000.0
