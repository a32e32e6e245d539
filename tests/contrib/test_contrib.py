"""The files in contrib/ that other programs run meshdoctor from: the node-problem-detector custom
plugin monitor (its JSON as NPD reads it; its command line run for real on a fake Mac, output
at most 80 bytes, exit 0/1/3), the launchd LaunchDaemon (read with plistlib; every 5 minutes;
its command line run for real with the file written atomically), and the systemd service and
timer (systemd-analyze verify, when this machine has it; the service's command line run)."""

from __future__ import annotations

import json
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import run_cli

CONTRIB = Path(__file__).resolve().parents[2] / "contrib"
MESHDOCTOR = "/usr/local/bin/meshdoctor"  # where the files expect it (their comments say so)


def _mac(fake_mac):
    return {k: v for k, v in fake_mac("healthy").items() if not k.startswith(("MLX_", "JACCL_"))}


def _metrics(path: Path) -> dict:
    return {f.name: f for f in text_string_to_metric_families(path.read_text())}


def test_node_problem_detector_plugin_config(fake_mac):
    conf = json.loads(
        (CONTRIB / "node-problem-detector" / "meshdoctor-plugin-monitor.json").read_text()
    )
    assert conf["plugin"] == "custom"
    pc = conf["pluginConfig"]
    assert pc["max_output_length"] == 80 and pc["invoke_interval"] == "5m"
    (cond,) = conf["conditions"]
    (rule,) = conf["rules"]
    assert rule["type"] == "permanent" and rule["condition"] == cond["type"]
    assert rule["path"] == MESHDOCTOR
    args = rule["args"]
    assert args[:4] == ["check", "--local-only", "--format", "oneline"]
    timeout = float(args[args.index("--timeout") + 1])
    assert timeout < float(rule["timeout"].rstrip("s"))  # meshdoctor answers before NPD kills it
    r = run_cli(*args, env=_mac(fake_mac), private_pids=True)
    assert r.rc in (0, 1, 3), (r.out, r.err)  # OK, NonOK, Unknown
    assert len(r.out.encode("utf-8")) <= pc["max_output_length"] and r.out.count("\n") == 1
    assert r.out.split()[0] == {0: "GO", 1: "NO-GO", 3: "UNKNOWN"}[r.rc]


def test_launchd_plist_runs_the_check_every_5_minutes(fake_mac, tmp_path):
    with open(CONTRIB / "launchd" / "org.meshdoctor.check.plist", "rb") as fh:
        plist = plistlib.load(fh)
    assert plist["Label"] == "org.meshdoctor.check"
    assert plist["StartInterval"] == 300 and plist["RunAtLoad"] is True
    argv = plist["ProgramArguments"]
    assert argv[0] == MESHDOCTOR
    assert argv[1:6] == ["check", "--local-only", "--format", "prometheus", "--output"]
    assert argv[6].endswith(".prom")
    target = tmp_path / "textfile" / Path(argv[6]).name
    target.parent.mkdir()
    r = run_cli(*argv[1:6], str(target), env=_mac(fake_mac), private_pids=True)
    assert r.rc in (0, 1, 3) and r.out == "", (r.out, r.err)
    assert "meshdoctor_check_status" in _metrics(target)


def test_systemd_service_and_timer(fake_mac, tmp_path):
    service = (CONTRIB / "systemd" / "meshdoctor-check.service").read_text()
    timer = (CONTRIB / "systemd" / "meshdoctor-check.timer").read_text()
    assert "OnUnitActiveSec=5min" in timer
    (exec_line,) = [x for x in service.splitlines() if x.startswith("ExecStart=")]
    argv = shlex.split(exec_line[len("ExecStart=") :])
    assert argv[0] == MESHDOCTOR
    assert argv[1:6] == ["check", "--local-only", "--format", "prometheus", "--output"]
    target = tmp_path / "textfile" / Path(argv[6]).name
    target.parent.mkdir()
    r = run_cli(*argv[1:6], str(target), env=_mac(fake_mac), private_pids=True)
    assert r.rc in (0, 1, 3) and r.out == "", (r.out, r.err)
    assert "meshdoctor_info" in _metrics(target)
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed: the units were not verified by systemd")
    units = tmp_path / "units"
    units.mkdir()
    here = str(Path(sys.executable).with_name("meshdoctor"))  # the unit's binary must exist
    (units / "meshdoctor-check.service").write_text(service.replace(MESHDOCTOR, here))
    (units / "meshdoctor-check.timer").write_text(timer)
    p = subprocess.run(
        [analyze, "verify", "--man=no", "meshdoctor-check.service", "meshdoctor-check.timer"],
        cwd=units,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0 and not p.stderr.strip(), p.stderr
