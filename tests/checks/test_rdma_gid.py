"""MD203 (rdma.gid) on fake Macs: the IPv4-mapped GID JACCL needs, and where it sits in the
table."""

from __future__ import annotations

import json

from tests import fakemlx
from tests.checks.test_rdma_capacity import hostfile
from tests.checks.test_rdma_checks import RDMA
from tests.helpers import run_cli, write


def test_mapped_gid_at_index_2_fails_when_the_hostfile_uses_it_and_mlx_lacks_the_fix(
    fake_mac, tmp_path
):
    # rank 0 reaches rank 1 over rdma_en2, whose IPv4-mapped GID sits at GID[2]
    doc = hostfile(
        [
            [None, "rdma_en2", "rdma_en3"],
            ["rdma_en2", None, "rdma_en3"],
            ["rdma_en2", "rdma_en3", None],
        ],
        "jaccl",
    )
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    env = fake_mac("healthy", "mapped-gid-2")
    env.update(fakemlx.install(tmp_path / "old", "0.32.0", guard=False))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 1 and r.doc["verdict"] == "no-go", r.out
    (f,) = [x for x in r.results("MD203") if x["status"] == "fail"]
    assert f["summary"].startswith(
        "rdma_en2 port 1: IPv4-mapped GID ::ffff:169.254.37.21 is at "
        "GID[2], but JACCL sends from GID[1]"
    )
    assert "MLX PR #3389" in f["summary"] and "will fail at RTR (errno 22)" in f["summary"]
    assert f["evidence"]["certain"] is True and f["evidence"]["mlx_version"] == "0.32.0"
    # a build with the fix: go
    env.update(fakemlx.install(tmp_path / "guard", "0.32.1", guard=True))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD203") == "ok", r.out
    # the build could not be inspected: may fail, so a warning
    env.update(fakemlx.install(tmp_path / "unknown", "0.32.0", guard=None))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD203") == "warn", r.out
    # no hostfile: nothing says this device will be used; a warning
    env.update(fakemlx.install(tmp_path / "old2", "0.32.0", guard=False))
    r = run_cli("check", "--json", "--only", "MD203", env=env)
    assert r.rc == 0 and r.status("MD203") == "warn", r.out


def test_fe80_only_gid_fails_with_the_table_and_the_remedy(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy", "fe80-only"))
    (f,) = r.results("MD203")
    assert f["status"] == "fail" and f["severity"] == "critical"
    assert f["summary"].startswith("rdma_en3 port 1 has no IPv4-mapped GID (GID[0] fe80::")
    assert "errno 22" in f["summary"]
    ev = f["evidence"]
    assert (ev["device"], ev["port"]) == ("rdma_en3", 1)
    assert ev["gids"] == [{"index": 0, "gid": "fe80::33a1:c2ff:fe03:1a03"}]
    assert "en3" in f["remediation"]["text"] and "--auto-setup" in f["remediation"]["text"]
    (tb,) = r.results("MD205")
    assert "Thunderbolt 2 (en3, rdma_en3) has no IPv4 address" in tb["summary"]


def test_mapped_gid_at_index_2_warns_naming_the_index(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy", "mapped-gid-2"))
    (w,) = [x for x in r.results("MD203") if x["status"] == "warn"]
    assert "rdma_en2 port 1" in w["summary"] and "GID[2]" in w["summary"]
    assert "GID[1]" in w["summary"]
    ev = w["evidence"]
    assert ev["mapped_gid_index"] == 2 and ev["device"] == "rdma_en2" and ev["port"] == 1
    assert [g["index"] for g in ev["gids"]] == [0, 1, 2]
    assert "jaccl_guard" in ev  # the MLX build fact was consulted (None = unknown here)
