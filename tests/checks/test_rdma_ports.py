"""MD202 (rdma.ports) on fake Macs: the devices a hostfile names, and their port states."""

from __future__ import annotations

import json

from tests.checks.test_rdma_checks import RDMA, mesh
from tests.helpers import run_cli, write
from tests.stubs import FIXTURES


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


# rdma-core's `ibv_devinfo -v` reading mixed states: rdma_en2 PORT_ACTIVE, rdma_en3 PORT_INIT,
# rdma_en4 PORT_ARMED, rdma_en5 and rdma_en7 PORT_DOWN, rdma_en6 two ports (1 PORT_DOWN, 2
# PORT_ACTIVE): no summary may state a port state that this reading contradicts
MIXED = ("healthy", "mixed-port-states")


def test_without_a_hostfile_init_and_armed_ports_are_not_counted_as_down(fake_mac):
    r = run_cli("check", "--only", "MD202", "--json", env=fake_mac(*MIXED))
    got = r.results("MD202")
    (summary,) = [f for f in got if f["status"] == "ok"]
    assert summary["summary"] == (
        "2 active RDMA port(s): rdma_en2 port 1, rdma_en6 port 2; not active: "
        "1 PORT_INIT (link up, not yet configured), 1 PORT_ARMED (link up, not yet "
        "activated), 3 PORT_DOWN (not cabled, or the peer has RDMA disabled)"
    )
    warns = {f["evidence"]["device"]: f for f in got if f["status"] == "warn"}
    assert warns["rdma_en3"]["summary"].startswith("rdma_en3 port 1 is PORT_INIT although")
    # the link is up: the advice is not the one for a missing cable or peer
    assert "was not activated" in warns["rdma_en3"]["remediation"]["text"]
    assert "PORT_DOWN until" not in warns["rdma_en3"]["remediation"]["text"]
    states = {(p["device"], p["port"]): p["state"] for p in summary["evidence"]["ports"]}
    assert states[("rdma_en6", 1)] == "PORT_DOWN" and states[("rdma_en6", 2)] == "PORT_ACTIVE"


def test_no_active_port_at_all_names_the_states_read(fake_mac):
    text = (FIXTURES / "mixed-port-states" / "ibv_devinfo__v.txt").read_text()
    text = text.replace("PORT_ACTIVE (4)", "PORT_INIT (2)").replace(
        "PORT_DOWN (1)", "PORT_INIT (2)"
    )
    r = run_cli(
        "check",
        "--only",
        "MD202",
        "--json",
        env=fake_mac(*MIXED, extra={"ibv_devinfo__v.txt": text}),
    )
    got = [f for f in r.results("MD202") if "no RDMA port is active" in f["summary"]]
    (f,) = got
    assert f["summary"] == (
        "no RDMA port is active (6 PORT_INIT (link up, not yet configured), 1 PORT_ARMED "
        "(link up, not yet activated)): no port was activated"
    )
    assert "was not activated" in f["remediation"]["text"]


def test_a_named_device_in_port_init_fails_saying_port_init(fake_mac, tmp_path):
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en3", "rdma_en4", "rdma_en6"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check",
        "--only",
        "MD202",
        "--json",
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac(*MIXED),
    )
    by = {f["evidence"]["device"]: f for f in r.results("MD202") if f["status"] == "fail"}
    # the logical state read, and the physical one `ibv_devinfo -v` printed beside it
    assert by["rdma_en3"]["summary"] == (
        "rdma_en3 (towards rank 1 (m2)) is not active: port 1 PORT_INIT (physical state LINK_UP)"
    )
    assert "was not activated" in by["rdma_en3"]["remediation"]["text"]
    assert by["rdma_en4"]["summary"] == (
        "rdma_en4 (towards rank 2 (m3)) is not active: port 1 PORT_ARMED (physical state LINK_UP)"
    )
    assert by["rdma_en4"]["evidence"]["ports"] == [
        {
            "device": "rdma_en4",
            "port": 1,
            "state": "PORT_ARMED",
            "state_code": 3,
            "phys_state": "LINK_UP",
        }
    ]
    # port 1 down, port 2 active: the device is usable, so it is not a finding
    assert "rdma_en6" not in by
    assert by["rdma_en4"]["evidence"]["named_devices"] == {"active": 1, "named": 3}
