"""MD206 on a fake Mac: the host's own auto-setup record (written with ``python -m
meshdoctor.receipts record host-setup``, as the fix does over ssh) against its boot time now
(``sysctl -n kern.boottime``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.helpers import run_cli

BOOT = int(time.time()) - 7200


def record(env, **doc):
    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor.receipts", "record", "host-setup"],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)["path"]


def md206(env):
    return run_cli("check", "--only", "MD206", "--json", env=env).results("MD206")[0]


def mac(fake_mac, clean_env, tmp_path, boot):
    env = dict(
        clean_env,
        **fake_mac(
            "healthy",
            extra={
                "sysctl__n_kern.boottime.txt": f"{{ sec = {boot}, usec = 0 }} Thu Jan  1 00:00:00 1970\n"
            },
        ),
    )
    env["MESHDOCTOR_STATE_DIR"] = str(tmp_path / "state")
    return env


def test_no_record_is_a_skip(fake_mac, clean_env, tmp_path):
    got = md206(mac(fake_mac, clean_env, tmp_path, BOOT))
    assert got["status"] == "skip" and "no auto-setup recorded on this host" in got["summary"]
    assert not (tmp_path / "state" / "receipts").exists()  # a check creates no record folder


def test_configured_in_this_boot_then_booted_since(fake_mac, clean_env, tmp_path):
    env = mac(fake_mac, clean_env, tmp_path, BOOT)
    record(
        env,
        started_at="2026-12-01T10:00:00+00:00",
        outcome="ok",
        boot_time=BOOT,
        configured=True,
        by="op1",
    )
    got = md206(env)
    assert got["status"] == "ok", got
    assert (
        got["summary"] == "configured by auto-setup in this boot (2026-12-01T10:00:00+00:00 by op1)"
    )
    rebooted = mac(fake_mac, clean_env, tmp_path, BOOT + 3600)  # same record, a later boot
    got = md206(rebooted)
    assert got["status"] == "warn"
    assert got["summary"].startswith("booted since the last auto-setup (2026-12-01T10:00:00+00:00")
    assert "MLX PR #1902" in got["summary"]


def test_a_run_in_this_boot_that_left_it_unconfigured_warns(fake_mac, clean_env, tmp_path):
    env = mac(fake_mac, clean_env, tmp_path, BOOT)
    record(
        env,
        started_at="2026-12-01T10:00:00+00:00",
        outcome="partial",
        boot_time=BOOT,
        configured=False,
    )
    got = md206(env)
    assert got["status"] == "warn" and "left this host unconfigured (partial)" in got["summary"]
