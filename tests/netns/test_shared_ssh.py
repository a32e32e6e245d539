"""One ssh connection per host for a whole command (meshdoctor.remote: OpenSSH ControlMaster
with the run's own control sockets): calls share it, nothing of it outlives the command (also
after an interrupt), and a host whose master dies mid-command is still reported as what it is.

A real sshd per host in network namespaces (tests/netns/); the fleet check runs the real CLI
with the bed's ssh config, its local state directory private to the test, so the control
sockets the test looks for are the ones its own command made.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests import netns
from tests.netns.fleet_bed import MacMesh

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TIMEOUT = "20"  # per-check deadline on each host: generous, this machine has 2 busy cores
HANG_BOUND_S = 60.0  # a bound on waiting for something that must happen, not a budget


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(3) as tb:
        tb.mesh = MacMesh(tb, fast_stubs=True)
        tb.mesh.write(cables=[])
        tb.hostfile = tb.dir / "ring.json"
        tb.hostfile.write_text(
            json.dumps(
                {"backend": "ring", "hosts": [{"ssh": h, "ips": [tb.ips[h]]} for h in tb.hosts]}
            )
        )
        yield tb


@pytest.fixture
def state():
    """The local meshdoctor's own state directory (where its control sockets go): a short
    path, as a socket path must be (a long one sends them to the temporary folder)."""
    d = Path(tempfile.mkdtemp(prefix="mdst-", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def env_of(bed, state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
    env["MESHDOCTOR_STATE_DIR"] = str(state)
    return env


def slow_python(bed, host: str, seconds: int) -> str:
    """An interpreter wrapper that waits ``seconds`` on ``host`` before running meshdoctor."""
    p = bed.dir / f"slow-{host}"
    p.write_text(
        "#!/bin/sh\n"
        f'if [ "$TESTBED_HOST" = {host} ]; then sleep {seconds}; fi\n'
        f'exec {bed.mesh.python} "$@"\n'
    )
    p.chmod(0o755)
    return str(p)


def start_check(bed, state: Path, python: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "meshdoctor",
            "check",
            "--hostfile",
            str(bed.hostfile),
            "--python",
            python,
            "--timeout",
            TIMEOUT,
            "--json",
        ],
        env=env_of(bed, state),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def sockets(state: Path):
    """The control sockets under ``state`` (one folder per run)."""
    return [p for d in state.glob("ssh-*") for p in d.iterdir()]


def masters(state: Path):
    """ssh master processes whose control socket lies under ``state`` (ssh names itself after
    its socket once it is a master: ``ssh: PATH [mux]``)."""
    out = []
    for p in psutil.process_iter(["cmdline"]):
        line = " ".join(p.info["cmdline"] or [])
        if str(state) in line and "[mux]" in line:
            out.append(p)
    return out


def wait_for(what, bound: float = HANG_BOUND_S):
    t0 = time.monotonic()
    while time.monotonic() - t0 < bound:
        got = what()
        if got:
            return got
        time.sleep(0.1)
    return what()


def master_pid(bed, sock: Path, host: str) -> int:
    """The pid of the master behind ``sock``, as it says itself (``ssh -O check``)."""
    p = subprocess.run(
        ["ssh", "-F", str(bed.ssh_config), "-o", f"ControlPath={sock}", "-O", "check", host],
        capture_output=True,
        text=True,
        timeout=20,
    )
    m = re.search(r"pid=(\d+)", p.stderr + p.stdout)
    assert m, (p.returncode, p.stderr)
    return int(m.group(1))


def test_calls_to_a_host_share_one_master_and_nothing_outlives_the_run(bed, state):
    """In one process: three calls to h0, one master; a master killed between two calls is
    replaced by the next call; ending the run (what the command line does at exit) ends the
    masters and removes their folder."""
    code = f"""
import json, os, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from meshdoctor import remote
hosts = remote.Hosts()
out = [hosts.run("h0", ["echo", str(i)], 20).stdout.strip() for i in range(3)]
d = remote.SHARED.dir
print(json.dumps({{"out": out, "dir": str(d), "socks": os.listdir(d)}}), flush=True)
sys.stdin.readline()  # the test kills h0's master here
again = hosts.run("h0", ["echo", "after"], 20)
print(json.dumps({{"rc": again.returncode, "out": again.stdout.strip(),
                   "unreachable": hosts.unreachable}}), flush=True)
remote.close_shared()
print(json.dumps({{"left": os.path.exists(d)}}), flush=True)
"""
    p = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env_of(bed, state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first = json.loads(p.stdout.readline())
        assert first["out"] == ["0", "1", "2"]
        assert len(first["socks"]) == 1  # one master for the three calls
        assert len(masters(state)) == 1
        sock = Path(first["dir"]) / first["socks"][0]
        os.kill(master_pid(bed, sock, "h0"), signal.SIGKILL)  # ours: it answered on our socket
        assert wait_for(lambda: not masters(state))
        p.stdin.write("\n")
        p.stdin.flush()
        second = json.loads(p.stdout.readline())
        assert second == {"rc": 0, "out": "after", "unreachable": {}}
        assert json.loads(p.stdout.readline()) == {"left": False}
        assert p.wait(timeout=HANG_BOUND_S) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert wait_for(lambda: not masters(state)) and not sockets(state)


def test_fleet_check_leaves_no_master_or_socket_behind(bed, state):
    p = start_check(bed, state, bed.mesh.python)
    out, err = p.communicate(timeout=180)
    doc = json.loads(out)
    assert p.returncode in (0, 1), err
    assert [h["reachable"] for h in doc["hosts"]] == [True, True, True]
    assert wait_for(lambda: not masters(state)), [m.cmdline() for m in masters(state)]
    assert not sockets(state) and not list(state.glob("ssh-*"))


def test_interrupted_fleet_check_leaves_no_master_or_socket_behind(bed, state):
    """SIGINT while a slow host is still checking: the verdict so far, exit 3, no master left."""
    p = start_check(bed, state, slow_python(bed, "h2", 40))
    try:
        assert wait_for(lambda: len(sockets(state)) == 3), sockets(state)  # every master up
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=HANG_BOUND_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, err
    doc = json.loads(out)
    assert doc["exit_code"] == 3
    assert wait_for(lambda: not masters(state)), [m.cmdline() for m in masters(state)]
    assert not sockets(state) and not list(state.glob("ssh-*"))


def test_host_whose_master_dies_mid_command_is_reported_as_reached(bed, state):
    """h1's master is killed while h1 checks: h1 is named (no verdict, its ssh connection
    broke) as reachable, not as a host ssh cannot reach; the other hosts are checked."""
    p = start_check(bed, state, slow_python(bed, "h1", 30))
    try:
        from meshdoctor.remote import socket_name

        def h1_socket():
            return [s for s in sockets(state) if s.name == socket_name("h1")]

        (sock,) = wait_for(h1_socket)
        os.kill(master_pid(bed, sock, "h1"), signal.SIGKILL)
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    doc = json.loads(out)
    assert p.returncode == 3, err
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert hosts["h1"]["reachable"] is True and hosts["h1"]["node"]["verdict"] == "unknown"
    assert hosts["h0"]["node"]["verdict"] != "unknown" != hosts["h2"]["node"]["verdict"]
    (r,) = [x for x in doc["results"] if x["code"] == "MD402" and x["host"] == "h1"]
    assert "h1 gave no verdict: the ssh connection to h1 broke" in r["summary"], r["summary"]
    assert "cannot reach" not in r["summary"]
    assert wait_for(lambda: not masters(state)) and not list(state.glob("ssh-*"))
