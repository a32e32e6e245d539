"""The fake-Mac test bed itself (tests/stubs.py): stub commands serve fixtures by their
arguments."""

from __future__ import annotations


def test_stub_test_bed_serves_by_arguments(fake_mac):
    import subprocess

    env = fake_mac("healthy")
    out = subprocess.run(
        ["sysctl", "hw.memsize", "iogpu.wired_limit_mb"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    assert out.startswith("hw.memsize: 549755813888")
    p = subprocess.run(
        ["networksetup", "-nonsense"], env=env, capture_output=True, text=True, timeout=30
    )
    assert p.returncode == 127 and "no fixture" in p.stderr  # like a missing command
