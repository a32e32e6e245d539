"""Node checks together (MD101 with MD302) on a fake Mac: stub commands print fixtures written
from the real tools' output formats. Each check's own tests: tests/checks/test_node_<check>.py."""

from __future__ import annotations

from tests.helpers import run_cli

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


def test_mac_without_its_tools_is_not_assessed_rather_than_failed(fake_mac, tmp_path):
    env = fake_mac("healthy")
    for tool in ("sw_vers", "vm_stat"):
        (tmp_path / "bin" / tool).unlink()
    r = run_cli("check", "--json", "--only", "MD101,MD302", env=env)
    assert r.rc == 3, r.out
    assert r.status("MD101") == "error" and r.status("MD302") == "error"
    assert "not found" in r.results("MD302")[0]["summary"]
