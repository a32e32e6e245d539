"""MD207 on a fake Mac: exo's LaunchDaemon loaded (launchctl print, tests/fixtures/mac/exo-daemon)
or a real process named EXO running is named; neither is ok."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import psutil

from tests.helpers import run_cli


def md207(env):
    r = run_cli("check", "--only", "MD207", "--json", env=env)
    return r.results("MD207")[0]


def test_nothing_known_is_ok(fake_mac, clean_env):
    got = md207(dict(clean_env, **fake_mac("healthy")))
    assert got["status"] == "ok", got


def test_exo_launch_daemon_is_named(fake_mac, clean_env):
    got = md207(dict(clean_env, **fake_mac("healthy", "exo-daemon")))
    assert got["status"] == "warn"
    assert "LaunchDaemon io.exo.networksetup is loaded" in got["summary"]
    assert "exo PR #1270" in got["summary"]
    assert "launchctl bootout system/io.exo.networksetup" in got["remediation"]["text"]


def test_a_running_exo_process_is_named_with_its_pid(fake_mac, clean_env, tmp_path):
    exe = tmp_path / "EXO"
    shutil.copy(shutil.which("sleep"), exe)
    p = subprocess.Popen([str(exe), "120"], start_new_session=True)
    try:
        for _ in range(100):
            if psutil.Process(p.pid).name() == "EXO":
                break
            time.sleep(0.05)
        got = md207(dict(clean_env, **fake_mac("healthy")))
        assert got["status"] == "warn"
        assert f"process EXO (pid {p.pid}) runs" in got["summary"]
    finally:
        os.killpg(p.pid, 9)
        p.wait(timeout=10)
