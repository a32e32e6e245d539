"""MD101 (node.platform) on a fake Mac: the macOS version JACCL needs."""

from __future__ import annotations

import json

from tests.helpers import run_cli, write


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
