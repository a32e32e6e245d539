"""Node checks on a fake Mac: stub commands print fixtures written from the real tools' output formats."""

from __future__ import annotations

import json

from tests.helpers import run_cli, write

NODE = ("--only", "MD101,MD302")


def test_healthy_mac_node(fake_mac, clean_env):
    env = dict(fake_mac("healthy"), **{k: v for k, v in clean_env.items() if k == "PYTHONPATH"})
    r = run_cli("check", "--json", *NODE, env=env)
    assert r.rc == 0, r.out
    plat = r.results("MD101")[0]
    assert plat["status"] == "ok" and "macOS 26.3.1 (25D2128) on arm64" in plat["summary"]
    mem = r.results("MD302")[0]
    assert mem["status"] == "ok"
    assert mem["evidence"]["wired_bytes"] == 412345 * 16384
    assert mem["evidence"]["hw_memsize_bytes"] == 549755813888
    assert mem["evidence"]["iogpu_wired_limit_mb"] == 0


def test_leftover_wired_memory_with_no_rank_needs_reboot(fake_mac):
    env = fake_mac("healthy", "wired-leftover")
    # "no rank running" is a fact about this machine: pinned by a private PID namespace
    r = run_cli("check", "--json", "--only", "MD302", env=env, private_pids=True)
    assert r.rc == 1
    mem = r.results("MD302")[0]
    assert mem["status"] == "fail" and mem["severity"] == "critical"
    # unrelated MLX jobs on this machine explain a few GiB at most, never 139.7 GiB
    assert mem["summary"].startswith("139.7 GiB wired and ")
    assert mem["summary"].endswith("a dead process holds it")
    assert mem["evidence"]["wired_bytes"] == 9155000 * 16384
    assert r.doc["needs_reboot"] == [mem["host"]]


def test_wired_limit_leaving_macos_no_room_warns(fake_mac):
    env = fake_mac(
        "healthy",
        extra={
            "sysctl__hw.memsize_iogpu.wired_limit_mb.txt": "hw.memsize: 137438953472\niogpu.wired_limit_mb: 131072\n"
        },
    )
    r = run_cli("check", "--json", "--only", "MD302", env=env)
    assert r.rc == 0 and r.status("MD302") == "warn"
    assert "iogpu.wired_limit_mb=131072" in r.results("MD302")[0]["summary"]


def test_old_macos_warns_without_jaccl_and_fails_with_it(fake_mac, tmp_path):
    env = fake_mac("healthy", "old-macos")
    r = run_cli("check", "--json", "--only", "MD101", env=env)
    assert r.rc == 0 and r.status("MD101") == "warn"
    assert "needs macOS 26.2" in r.results("MD101")[0]["summary"]
    hf = write(
        tmp_path / "hosts.json",
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en3"]},
                    {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en3", None]},
                ],
            }
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD101", "--local-only", "--hostfile", str(hf), env=env
    )
    assert r.rc == 1 and r.status("MD101") == "fail"


def test_hung_vm_stat_is_a_finding_within_the_deadline(fake_mac):
    env = fake_mac("healthy", "vm-stat-hang")
    r = run_cli("check", "--json", "--only", "MD302", "--timeout", "2", env=env)
    assert r.rc == 1, r.out
    mem = r.results("MD302")[0]
    assert mem["status"] == "fail" and "did not finish" in mem["summary"]
    assert mem["needs_reboot"] is True
    assert r.elapsed < 2 + 1 + 0.5


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
