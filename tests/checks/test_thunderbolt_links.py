"""MD205 (and MD201's Thunderbolt link) on fake Macs: speeds, cabling vs hostfile, bridge0, IPv4."""

from __future__ import annotations

import json

from tests.helpers import run_cli, write
from tests.stubs import FIXTURES
from tests.checks.test_rdma_checks import mesh

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


def test_no_thunderbolt_link(fake_mac, tmp_path):
    env = fake_mac(
        "healthy",
        extra={"system_profiler__SPThunderboltDataType_json.txt": '{"SPThunderboltDataType": []}'},
    )
    r = run_cli("check", "--json", "--only", "MD201,MD205", env=env)
    assert r.status("MD205") == "skip"
    assert (
        r.status("MD201") == "warn"
        and "no Thunderbolt link is connected" in r.results("MD201")[0]["summary"]
    )
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check", "--json", "--only", "MD201,MD205", "--local-only", "--hostfile", str(hf), env=env
    )
    assert r.status("MD201") == "fail" and r.status("MD205") == "fail"


def test_enabled_no_devices_with_tb5_ports_blames_the_build(fake_mac):
    # The enabled-no-devices set is a Thunderbolt 4 Mac; over the healthy TB5 inventory the
    # same "no devices" answer means this macOS build does not enumerate RDMA.
    tb5 = (FIXTURES / "healthy" / "system_profiler__SPThunderboltDataType_json.txt").read_text()
    env = fake_mac(
        "healthy",
        "enabled-no-devices",
        extra={"system_profiler__SPThunderboltDataType_json.txt": tb5},
    )
    r = run_cli("check", "--json", "--only", "MD201", env=env)
    (w,) = r.results("MD201")
    assert "does not enumerate RDMA devices" in w["summary"]
    r = run_cli("check", "--json", "--only", "MD201", env=fake_mac("healthy", "enabled-no-devices"))
    (w,) = r.results("MD201")
    assert "this Mac has Thunderbolt 4 hardware" in w["summary"]
    assert "Thunderbolt 2 (Up to 40 Gb/s)" in w["summary"]
    assert w["evidence"]["chain"]["rdma_ctl"]["enabled"] is True
    assert w["evidence"]["chain"]["ibv_devices"] == []


def test_rdma_disabled_chain_and_remedy(fake_mac):
    r = run_cli("check", "--json", "--only", "MD201", env=fake_mac("healthy", "rdma-disabled"))
    (w,) = r.results("MD201")
    assert "RDMA is disabled" in w["summary"]
    assert "Recovery" in w["remediation"]["text"] and "rdma_ctl enable" in w["remediation"]["text"]
    chain = w["evidence"]["chain"]
    assert chain["rdma_ctl"]["enabled"] is False and chain["ibv_devices"] == []


def test_hung_system_profiler_is_could_not_assess_within_the_deadline(fake_mac):
    env = fake_mac("healthy", extra={"system_profiler.hang": ""})
    r = run_cli("check", "--json", "--only", "MD201,MD205", "--timeout", "2", env=env)
    assert r.rc == 3 and r.elapsed < 2 + 1 + 1.5, (r.rc, r.elapsed)
    (e,) = r.results("MD205")
    assert e["status"] == "error" and "did not finish within" in e["summary"]
    assert "system_profiler SPThunderboltDataType -json" in e["remediation"]["text"]
    (m,) = r.results("MD201")
    assert m["status"] == "ok" and "Thunderbolt links not read" in m["summary"]


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
