"""The suite never reads the machine it runs on (tests/isolation.py): each test sees only its
own worker's processes and network, and a run whose tests leave a process or a network
namespace behind fails, naming the test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from tests import isolation

ROOT = Path(__file__).resolve().parents[2]


def _isolated() -> None:
    if os.environ.get(isolation.ISOLATED_ENV) != "1":
        prefix, why = isolation.worker_prefix()
        if why:  # the namespaces cannot be made here: the suite reads this machine
            pytest.fail(f"this test runs in the machine's namespaces: {why}")
        pytest.skip("run in the pytest process (-p no:xdist, -s, --pdb): not isolated")


def test_a_test_sees_no_process_of_this_machine():
    """Only the worker's init (pid 1), the worker and what they started: no user's job, no
    other worker, nothing of the machine."""
    _isolated()
    init = psutil.Process(1)
    assert init.name() == "dumb-init", init.cmdline()
    mine = {1} | {p.pid for p in init.children(recursive=True)}
    others = [(p.pid, p.name()) for p in psutil.process_iter() if p.pid not in mine]
    assert not others, others


def test_a_test_sees_only_its_own_network():
    """Its loopback (up), and the bridges and veths of a test bed of this worker: not the
    machine's interfaces, nor a port a program outside the worker listens on."""
    _isolated()
    names = set(psutil.net_if_addrs())
    assert "lo" in names
    own = ("mdself", "mdbr", "mdv")  # isolation.network_up's pair, a bed's bridge and veths
    assert not {n for n in names if n != "lo" and not n.startswith(own)}, names
    # a port listened on here belongs to a process of this worker (a bed another test of this
    # worker keeps for the session, e.g. the Slurm daemons), never to one outside its PID
    # namespace: a socket whose owner psutil cannot see here would be the machine's
    listening = [c for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN]
    assert not [c for c in listening if c.pid is None or not psutil.pid_exists(c.pid)]


def test_an_orphan_a_test_plants_has_a_live_parent():
    """A rank-looking process whose launcher died is re-parented to the namespace's init (pid 1
    here, a live process on the machine), never to the machine's init: the user's meshdoctor
    beside the suite never sees a stale rank of ours."""
    _isolated()
    p = subprocess.run(
        ["sh", "-c", "MLX_RANK=1 sleep 30 >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    pid = int(p.stdout)
    try:
        orphan = psutil.Process(pid)
        assert orphan.ppid() == 1 and psutil.Process(1).name() == "dumb-init"
    finally:
        os.kill(pid, 9)


LEAVES = """
import subprocess

def test_that_leaves_a_sleep():
    subprocess.Popen(["sleep", "300"], start_new_session=True)

def test_that_cleans_up():
    subprocess.run(["true"], check=True)
"""


def _nested_run(tmp_path, body: str) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F401,F403\n")
    (tmp_path / "test_nested.py").write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env=env,
    )


def test_a_process_left_behind_fails_the_run_and_names_its_test(tmp_path):
    _isolated()
    p = _nested_run(tmp_path, LEAVES)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "2 passed" in p.stdout
    assert "tests left these behind" in p.stdout
    (line,) = [x for x in p.stdout.splitlines() if x.startswith("process left behind")]
    assert "(sleep 300)" in line and "test_that_leaves_a_sleep" in line, line


LEAKS_NETNS = """
import subprocess

def test_that_leaves_a_netns():
    subprocess.run(["ip", "netns", "add", "md-leak-{tag}"], check=True)
"""


def test_a_network_namespace_left_behind_fails_the_run(tmp_path):
    _isolated()
    if os.geteuid() != 0 or not subprocess.run(["which", "ip"], capture_output=True).stdout:
        pytest.skip("needs root and ip (iproute2)")
    tag = os.urandom(3).hex()
    try:
        p = _nested_run(tmp_path, LEAKS_NETNS.format(tag=tag))
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"network namespace left behind: /run/netns/md-leak-{tag}" in p.stdout, p.stdout
    finally:
        subprocess.run(["ip", "netns", "del", f"md-leak-{tag}"], capture_output=True)
