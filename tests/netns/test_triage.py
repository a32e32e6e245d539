"""meshdoctor triage --hostfile across real hosts: network namespaces, each with its own sshd
(tests/netns/). Crash reports and logs are fetched over `ssh -o BatchMode=yes`, in parallel,
and triaged together; an unreachable host is named without hiding the others' findings.

The hosts share one file system; each host's sshd gets its own view of one folder (a bind mount
inside its mount namespace), so the same path holds different files on each host, as on a
cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import netns
from tests.helpers import run_cli

why = netns.unavailable() or (None if shutil.which("nsenter") else "needs nsenter")
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TBT_IPS = Path(__file__).parents[1] / "fixtures" / "triage" / "python3.12-2026-01-05-100004.ips"


def _argv(proc) -> list:
    """A child's command line, or [] for one that ended while it was read (a zombie or gone:
    triage's short-lived commands come and go between listing and reading)."""
    import psutil

    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _sshd_pid(ns: str) -> int:
    pids = subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10
    ).stdout.split()
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                return int(pid)
        except OSError:
            continue
    raise RuntimeError(f"no sshd in {ns}")


def _give_view(bed, host: str, src: Path, dst: Path) -> None:
    subprocess.run(
        [
            "nsenter",
            "-t",
            str(_sshd_pid(bed.netns[host])),
            "-m",
            "mount",
            "--bind",
            str(src),
            str(dst),
        ],
        check=True,
        capture_output=True,
        timeout=10,
    )


def test_crash_reports_and_logs_fetched_from_every_host(tmp_path):
    with netns.TestBed(3) as bed:
        node = bed.dir / "node"  # the path every host is asked for
        (node / "reports").mkdir(parents=True)
        for h in bed.hosts:
            own = bed.dir / f"{h}-view"
            (own / "reports").mkdir(parents=True)
            _give_view(bed, h, own, node)
        # h1: the Thunderbolt RDMA driver crashed (09:00:04 UTC); h0: its rank saw the side
        # channel close a second later
        shutil.copy(TBT_IPS, bed.dir / "h1-view" / "reports" / TBT_IPS.name)
        (bed.dir / "h0-view" / "rank.log").write_text(
            "2026-01-05 09:00:01 INFO runner: init jaccl\n"
            "2026-01-05 09:00:05 RuntimeError: [jaccl] Recv failed with errno=2\n"
        )
        (bed.dir / "h1-view" / "rank.log").write_text("2026-01-05 09:00:01 INFO ok\n")
        (bed.dir / "h2-view" / "rank.log").write_text("2026-01-05 09:00:01 INFO ok\n")
        hf = bed.dir / "hosts.json"
        hf.write_text(
            json.dumps(
                {"backend": "jaccl", "hosts": [{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts]}
            )
        )
        env = dict(os.environ, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
        assert bed.ssh("h0", f"cat {node}/rank.log").stdout.count("Recv failed") == 1
        assert bed.ssh("h1", f"ls {node}/reports").stdout.strip() == TBT_IPS.name

        r = run_cli(
            "triage",
            "--hostfile",
            str(hf),
            str(node / "rank.log"),
            "--crash-reports",
            str(node / "reports"),
            "--since",
            "3650d",
            "--json",
            env=env,
            timeout=120,
        )
        assert r.rc == 1, r.outcome()
        fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
        (first,) = r.doc["triage"]["first_cause"]
        assert (fs[first]["code"], fs[first]["host"]) == ("MD612", "h1")
        assert fs[first]["crash_report"]["faulting_frame"]["symbol"] == "tbt_post_recv"
        recv = next(f for f in fs.values() if f["code"] == "MD606")
        assert recv["host"] == "h0" and recv["consequence_of"] == first
        sources = {i["source"] for i in r.doc["triage"]["inputs"]}
        assert f"h1:{node / 'reports' / TBT_IPS.name}" in sources
        assert {f"h{i}:{node / 'rank.log'}" for i in range(3)} <= sources
        assert r.doc["needs_reboot"] == ["h1"]

        # one host's link pulled: named unreachable, the others' findings still decide
        bed.link("h2", False)
        r = run_cli(
            "triage",
            "--hostfile",
            str(hf),
            str(node / "rank.log"),
            "--crash-reports",
            str(node / "reports"),
            "--since",
            "3650d",
            "--json",
            env=env,
            timeout=120,
        )
        assert r.rc == 1
        assert [(h["host"], h["reachable"]) for h in r.doc["hosts"]] == [
            ("h0", True),
            ("h1", True),
            ("h2", False),
        ]
        assert any(f["code"] == "MD612" for f in r.doc["triage"]["findings"])
        # nothing failed and a host is unreachable: could not assess
        (bed.dir / "h1-view" / "reports" / TBT_IPS.name).unlink()
        (bed.dir / "h0-view" / "rank.log").write_text("2026-01-05 09:00:01 INFO ok\n")
        r = run_cli(
            "triage", "--hostfile", str(hf), str(node / "rank.log"), "--json", env=env, timeout=120
        )
        assert r.rc == 3 and r.doc["verdict"] == "unknown"


def _fifo_bed(bed):
    """Every host's view of ``node`` holds a FIFO ``rank.fifo`` nobody writes to; this
    machine's ``node`` is empty, so triage reads the file over ssh on each host."""
    node = bed.dir / "node"
    node.mkdir()
    for h in bed.hosts:
        own = bed.dir / f"{h}-view"
        own.mkdir()
        os.mkfifo(own / "rank.fifo")
        _give_view(bed, h, own, node)
    hf = bed.dir / "hosts.json"
    hf.write_text(json.dumps([{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts]))
    return hf, node / "rank.fifo"


BOUND_S = 60  # generous, and half the 120 s host deadline: an end before it is the signal's


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_triage_of_a_remote_fifo_at_once(sig):
    """Remote FIFOs that never get a writer: SIGINT or SIGTERM ends triage --hostfile (exit 3,
    the interrupt reported) instead of waiting for the host deadline; the host's ssh master
    holding the reader's stderr pipe does not keep it waiting."""
    import signal
    import sys
    import time

    import psutil

    with netns.TestBed(2) as bed:
        hf, fifo = _fifo_bed(bed)
        env = dict(os.environ, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
        p = subprocess.Popen(
            [sys.executable, "-m", "meshdoctor", "triage", "--hostfile", str(hf), str(fifo)]
            + ["--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + BOUND_S
            while True:  # both hosts' `cat` are running over ssh
                kids = [" ".join(_argv(c)) for c in psutil.Process(p.pid).children()]
                if sum("rank.fifo" in k for k in kids) == 2:
                    break
                assert time.monotonic() < deadline and p.poll() is None, kids
                time.sleep(0.1)
            time.sleep(1.0)
            p.send_signal(getattr(signal, sig))
            out, err = p.communicate(timeout=BOUND_S)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        assert p.returncode == 3, err.decode()[-2000:]
        doc = json.loads(out)
        assert doc["verdict"] == "unknown", doc


def test_a_remote_fifo_is_cut_at_the_host_deadline():
    """The same FIFOs read with a 3 s host deadline: each read is cut there and said, the
    verdict comes back (never a wait for the ssh master's copy of the reader's stderr)."""
    import sys

    code = (
        "import sys\n"
        "from meshdoctor.triage import collect\n"
        "col = collect.Collected()\n"
        "collect.fetch_hosts(['h0', 'h1'], [sys.argv[1]], None, 60.0, col, budget_s=3.0)\n"
        "print('\\n'.join(w for i in col.inputs for w in i.warnings))\n"
    )
    with netns.TestBed(2) as bed:
        hf, fifo = _fifo_bed(bed)
        env = dict(os.environ, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
        p = subprocess.Popen(
            [sys.executable, "-c", code, str(fifo)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = p.communicate(timeout=BOUND_S)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
        assert p.returncode == 0, err[-2000:]
        assert out.count("read cut off at the host's deadline") == 2, out + err
