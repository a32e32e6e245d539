"""MD205 (thunderbolt.links) on fake Macs: speeds and what limits a 40 Gb/s link, cabling vs
hostfile, bridge0, IPv4."""

from __future__ import annotations

import json

from tests.checks.test_rdma_checks import ONLY, mesh
from tests.helpers import run_cli, write
from tests.stubs import FIXTURES

TB = ("--only", "MD205")


def test_bridge0_active_fails_with_members_and_the_remedy(fake_mac):
    r = run_cli("check", "--json", *TB, env=fake_mac("healthy", "bridge0-active"))
    assert r.rc == 1
    (f,) = r.results("MD205")
    assert f["summary"].startswith("Thunderbolt Bridge (bridge0) is active (members en2, en3")
    assert f["evidence"]["bridge"]["status"] == "active"
    assert "sudo ifconfig bridge0 down" in f["remediation"]["text"]
    assert "Thunderbolt Bridge" in f["remediation"]["text"]


def test_tb4_link_warns_naming_port_interface_and_device(fake_mac, tmp_path):
    r = run_cli("check", "--json", *TB, env=fake_mac("healthy", "tb4-link"))
    (w,) = r.results("MD205")
    assert w["status"] == "warn" and r.rc == 0
    assert w["summary"].startswith("Thunderbolt 3 (en4, rdma_en4) links at 40 Gb/s")
    assert w["evidence"]["link"]["rdma_device"] == "rdma_en4"
    # A hostfile that does not use rdma_en4 does not care about that link.
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en3", "rdma_en3"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check",
        "--json",
        *TB,
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac("healthy", "tb4-link"),
    )
    assert r.status("MD205") == "ok", r.out


def test_named_device_on_an_uncabled_port_fails(fake_mac, tmp_path):
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en3", "rdma_en5"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check", "--json", *TB, "--local-only", "--hostfile", str(hf), env=fake_mac("healthy")
    )
    assert r.rc == 1
    (f,) = r.results("MD205")
    assert f["summary"] == (
        "rdma_en5 (en5, Thunderbolt 4) is named in the hostfile towards "
        "rank 3 (m4) but no cable is connected to Thunderbolt 4"
    )


def test_missing_ifconfig_warns_instead_of_guessing(fake_mac):
    env = fake_mac("healthy", extra={"ifconfig.txt": "", "ifconfig.exit": "1"})
    r = run_cli("check", "--json", *TB, env=env)
    (w,) = r.results("MD205")
    assert w["status"] == "warn" and "could not check bridge0 and IPv4" in w["summary"]


def test_a_dock_without_ipv4_is_no_rdma_link_without_a_hostfile(fake_mac):
    """Without a hostfile only links to another Mac count: a dock on Thunderbolt 4 (en5, no
    IPv4) must not turn the gate to no-go."""
    sp = json.loads(
        (FIXTURES / "healthy" / "system_profiler__SPThunderboltDataType_json.txt").read_text()
    )
    bus = sp["SPThunderboltDataType"][3]
    bus["receptacle_1_tag"].update(
        receptacle_status_key="receptacle_connected", current_speed_key="40 Gb/s"
    )
    bus["_items"] = [
        {"_name": "CalDigit TS4", "mode_key": "thunderbolt_four", "vendor_name_key": "CalDigit"}
    ]
    env = fake_mac(
        "healthy", extra={"system_profiler__SPThunderboltDataType_json.txt": json.dumps(sp)}
    )
    r = run_cli("check", "--json", "--only", "MD205", env=env)
    assert r.rc == 0, r.out
    assert r.status("MD205") == "ok"
    assert "Thunderbolt 4" not in r.results("MD205")[0]["summary"]


def test_40_gbps_link_between_tb5_ports_is_the_cable(fake_mac):
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "tb4-link"))
    (w,) = [x for x in r.results("MD205") if x["status"] == "warn"]
    assert w["evidence"]["cause"] == "cable"
    assert w["summary"].startswith(
        "Thunderbolt 3 (en4, rdma_en4) links at 40 Gb/s although this Mac's ports are Thunderbolt 5"
    )
    assert "the cable (a Thunderbolt 4 or USB4 cable) limits it" in w["summary"]
    assert "Thunderbolt 5 cable" in w["remediation"]["text"]
    assert r.status("MD201") == "ok"  # the hardware can do RDMA


def test_40_gbps_link_through_a_dock_between_tb5_ports_is_the_dock(fake_mac):
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "tb5-dock-40"))
    (w,) = [x for x in r.results("MD205") if x["status"] == "warn"]
    assert w["evidence"]["cause"] == "dock"
    assert "the dock in between (TS5 Plus) limits it" in w["summary"]
    assert r.rc == 0
