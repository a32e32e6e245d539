"""meshdoctor triage --hostfile --crash-reports on a real host (a network namespace with its own
sshd, tests/netns/): a crash report as text (``.crash``), a GPU restart report (bug_type 284) and
an EXC_RESOURCE report (385) in the host's DiagnosticReports folder are found over ssh, read and
placed on the timeline like its ``.ips`` crash reports."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests import netns
from tests.helpers import run_cli

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

FIX = Path(__file__).parents[1] / "fixtures" / "triage"


def _report(path: Path, bug_type: str, body: str) -> None:
    header = {"bug_type": bug_type, "timestamp": "2026-01-05 10:00:03.00 +0100", "name": "x"}
    path.write_text(json.dumps(header) + "\n" + body)


def test_text_gpu_restart_and_resource_reports_are_read_from_a_remote_host():
    with netns.TestBed(1) as bed:
        reports = bed.dir / "reports"
        reports.mkdir()
        crash = reports / "python3.12_2026-01-05-100004_Mac-mini.crash"
        shutil.copy(FIX / "python3.12-2026-01-05-100004.crash", crash)
        _report(
            reports / "GPURestart-2026-01-05-100003.ips",
            "284",
            json.dumps({"date": "2026-01-05 10:00:03.10 +0100", "reason": "GPU hang"}),
        )
        _report(
            reports / "python3.12_2026-01-05-100002_Mac-mini.wakeups_resource.ips",
            "385",
            "Date/Time:  2026-01-05 10:00:02.000 +0100\nCommand:  python3.12\nPID:  48213\n"
            "Event:  wakeups\nAction taken:  none\n",
        )
        hf = bed.dir / "hosts.json"
        hf.write_text(json.dumps([{"ssh": "h0", "ips": [bed.ips["h0"]]}]))
        env = dict(os.environ, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
        r = run_cli(
            "triage",
            "--hostfile",
            str(hf),
            "--crash-reports",
            str(reports),
            "--since",
            "3650d",
            "--json",
            env=env,
            timeout=120,
        )
        assert r.rc == 1, r.outcome()
        got = [(f["code"], f["host"], f["time"][:19]) for f in r.doc["triage"]["findings"]]
        assert got == [
            ("MD694", "h0", "2026-01-05T09:00:02"),
            ("MD693", "h0", "2026-01-05T09:00:03"),
            ("MD612", "h0", "2026-01-05T09:00:04"),
        ], got
        tbt = r.doc["triage"]["findings"][2]
        assert tbt["groups"]["thread"] == "3" and "tbt_post_recv" in tbt["line"]
        sources = {i["source"] for i in r.doc["triage"]["inputs"]}
        assert f"h0:{crash}" in sources and len(sources) == 3
