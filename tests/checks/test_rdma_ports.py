"""MD202 (rdma.ports) on fake Macs: the devices a hostfile names, and their port states."""

from __future__ import annotations

import json

from tests.checks.test_rdma_checks import RDMA, mesh
from tests.helpers import run_cli, write


def test_named_device_that_does_not_exist_lists_the_ones_that_do(fake_mac, tmp_path):
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en9", "rdma_en4"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check", "--json", *RDMA, "--local-only", "--hostfile", str(hf), env=fake_mac("healthy")
    )
    assert r.rc == 1
    (f,) = r.results("MD202")
    assert f["summary"].startswith("rdma_en9 (towards rank 2 (m3)) does not exist on this node")
    assert f["evidence"]["existing"] == [f"rdma_en{i}" for i in range(2, 8)]
    assert "regenerate the hostfile" in f["remediation"]["text"].lower()


def test_named_port_down_fails_naming_device_port_and_peer(fake_mac, tmp_path):
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check",
        "--json",
        *RDMA,
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac("healthy", "one-port-down"),
    )
    (f,) = r.results("MD202")
    assert f["summary"] == "rdma_en4 (towards rank 3 (m4)) is not active: port 1 PORT_DOWN"
    assert f["evidence"]["ports"] == [
        {"device": "rdma_en4", "port": 1, "state": "PORT_DOWN", "state_code": 1}
    ]
    assert f["evidence"]["named_devices"] == {"active": 2, "named": 3}  # 2 of the 3 are up


def test_an_ibv_devinfo_that_never_stops_printing_is_cut_and_the_finding_says_so(
    fake_mac, tmp_path
):
    env = fake_mac("healthy")
    (tmp_path / "endless").mkdir()
    endless = write(tmp_path / "endless" / "ibv_devinfo", '#!/bin/sh\nexec yes "hca_id: x"\n')
    endless.chmod(0o755)
    env["PATH"] = f"{endless.parent}:{env['PATH']}"
    r = run_cli("check", "--only", "MD202", "--json", env=env, timeout=120)
    assert r.rc == 3, r.err
    [res] = r.results("MD202")
    assert res["status"] == "error"
    assert (
        "`ibv_devinfo -v` printed more than 8388608 bytes on stdout (cut there and killed)"
        in (res["summary"])
    )
