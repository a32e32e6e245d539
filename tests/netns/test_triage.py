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
