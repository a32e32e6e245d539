"""Capability before configuration (MD201, MD205) on fake Macs: Thunderbolt 4 hardware is never
told to enable RDMA in Recovery, in both public variants (no RDMA device listed; rdma_enX listed
but never usable), and its advice is the ring backend; a 40 Gb/s link is blamed on the hardware
when the ports top out at 40 Gb/s, on the cable or dock when both are Thunderbolt 5-capable."""

from __future__ import annotations

import json

from tests.helpers import run_cli, write

ONLY = ("--only", "MD201,MD205")


def ring_over_tb(env_result):
    text = env_result["remediation"]["text"]
    return "ring backend over the Thunderbolt network" in text


def jaccl_hostfile(tmp_path):
    doc = {
        "backend": "jaccl",
        "hosts": [
            {"ssh": "localhost", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en2"]},
            {"ssh": "m2", "ips": ["198.51.100.2"], "rdma": ["rdma_en2", None]},
        ],
    }
    return str(write(tmp_path / "hosts.json", json.dumps(doc)))


def test_tb4_mac_with_rdma_disabled_is_not_sent_to_recovery(fake_mac, tmp_path):
    env = fake_mac("healthy", "rdma-disabled", "tb4-mac")
    r = run_cli("check", "--json", *ONLY, env=env)
    assert r.doc is not None
    (f,) = r.results("MD201")
    assert f["status"] == "warn" and r.rc == 0, r.out
    assert f["summary"].startswith(
        "this Mac has Thunderbolt 4 hardware (no Thunderbolt 5 "
        "receptacle; the ports top out at 40 Gb/s: Thunderbolt 2 "
        "(Up to 40 Gb/s), Thunderbolt 3 (Up to 40 Gb/s)): it can "
        "never do RDMA"
    )
    assert "enabling it from Recovery would not help" in f["summary"]
    assert "rdma_ctl enable` in Recovery changes" in f["remediation"]["text"]
    assert "shut down, hold the power button" not in f["remediation"]["text"]
    assert ring_over_tb(f)
    assert f["evidence"]["chain"]["thunderbolt_hardware"]["generation"] == "tb4"
    # under a jaccl hostfile the launch cannot work: fail, still no Recovery advice
    r = run_cli(
        "check",
        "--json",
        "--local-only",
        "--only",
        "MD201,MD202,MD203,MD204,MD205",
        "--hostfile",
        jaccl_hostfile(tmp_path),
        env=env,
    )
    (f,) = r.results("MD201")
    assert f["status"] == "fail" and r.rc == 1 and ring_over_tb(f)
    # no other RDMA check sends this Mac to Recovery either
    for code in ("MD202", "MD203", "MD204"):
        (x,) = r.results(code)
        assert x["summary"].endswith(
            "this Mac has Thunderbolt 4 hardware, which never does RDMA"
        ), x
        assert "Recovery" not in x["remediation"]["text"]
        assert "ring backend over the Thunderbolt network" in x["remediation"]["text"]


def test_tb4_mac_enabled_with_no_devices(fake_mac):
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "enabled-no-devices", "tb4-mac"))
    (f,) = r.results("MD201")
    assert f["summary"].endswith("no RDMA device is listed, as expected on Thunderbolt 4")
    assert ring_over_tb(f)


def test_tb4_mac_lists_rdma_devices_that_are_never_usable(fake_mac, tmp_path):
    env = fake_mac("healthy", "tb4-devices-listed")
    r = run_cli(
        "check",
        "--json",
        "--local-only",
        "--only",
        "MD201,MD202,MD205",
        "--hostfile",
        jaccl_hostfile(tmp_path),
        env=env,
    )
    assert r.rc == 1, r.out
    (f,) = r.results("MD201")
    assert f["status"] == "fail"
    assert (
        "`ibv_devices` lists rdma_en2, rdma_en3, rdma_en4, but they are never usable on "
        "Thunderbolt 4 (ports PORT_DOWN)"
    ) in f["summary"]
    assert ring_over_tb(f)
    # the 40 Gb/s link on this Mac is the hardware, not the cable
    (link,) = [x for x in r.results("MD205") if "links at 40 Gb/s" in x["summary"]]
    assert link["status"] == "fail" and link["evidence"]["cause"] == "hardware"
    assert link["summary"].startswith(
        "Thunderbolt 1 (en2, rdma_en2) links at 40 Gb/s: this "
        "Mac's ports top out at 40 Gb/s (Thunderbolt 4 hardware"
    )
    assert "no cable or dock changes that" in link["summary"]
    assert "ring backend" in link["remediation"]["text"]
    # the port is down because of the hardware: no advice to reseat cables or enable the peer
    (port,) = r.results("MD202")
    assert port["summary"] == (
        "rdma_en2 (towards rank 1 (m2)) is not active: port 1 PORT_DOWN "
        "(Thunderbolt 4 hardware: never usable for RDMA)"
    )
    assert "ring backend" in port["remediation"]["text"]
    assert "peer also has RDMA enabled" not in port["remediation"]["text"]
    r = run_cli("check", "--json", "--only", "MD202", env=env)
    ws = r.results("MD202")
    assert ws and all(
        "Thunderbolt 4 hardware" in w["summary"] and "ring backend" in w["remediation"]["text"]
        for w in ws
    ), ws


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


def test_every_port_cabled_at_40_gbps_leaves_the_hardware_open(fake_mac):
    """No port shows its capability (all cabled at 40 Gb/s): neither Recovery nor a macOS bug is
    asserted; the first step is to learn whether the ports are Thunderbolt 5."""
    sp = {
        "SPThunderboltDataType": [
            {
                "_name": "thunderboltusb4_bus_0",
                "domain_uuid_key": "5B1C2D3E-0A1B-4C2D-8E3F-0123456789C1",
                "receptacle_1_tag": {
                    "receptacle_id_key": "1",
                    "current_speed_key": "40 Gb/s",
                    "receptacle_status_key": "receptacle_connected",
                },
                "_items": [
                    {"_name": "Mac mini", "domain_uuid_key": "7C2A0F11-3D4E-4F50-9A6B-1C2D3E4F5C02"}
                ],
            }
        ]
    }
    extra = {"system_profiler__SPThunderboltDataType_json.txt": json.dumps(sp)}
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "rdma-disabled", extra=extra))
    (f,) = r.results("MD201")
    assert "whether its ports are Thunderbolt 5 is not visible" in f["summary"]
    assert f["remediation"]["text"].startswith("First make sure this Mac has Thunderbolt 5 ports")
    assert f["evidence"]["chain"]["thunderbolt_hardware"]["generation"] == "unknown"
    r = run_cli(
        "check", "--json", *ONLY, env=fake_mac("healthy", "enabled-no-devices", extra=extra)
    )
    (f,) = r.results("MD201")
    assert "a Thunderbolt 4 Mac never lists RDMA devices" in f["summary"]
    (link,) = [x for x in r.results("MD205") if "40 Gb/s" in x["summary"]]
    assert link["evidence"]["cause"] == "unknown"
