"""The Thunderbolt/network parsers: system_profiler JSON, networksetup, ifconfig."""

from __future__ import annotations

import json

from meshdoctor.parsers.macos_links import (
    parse_ifconfig,
    parse_networksetup_ports,
    parse_speed,
    parse_system_profiler_tb,
)
from meshdoctor.facts.thunderbolt import build
from tests.unit.parsers.test_ibv import fixture


def test_system_profiler_host_ports_speeds_and_peers():
    rep = parse_system_profiler_tb(
        fixture("healthy", "system_profiler__SPThunderboltDataType_json.txt")
    )
    assert rep.warnings == []
    assert [p.receptacle for p in rep.ports] == [1, 2, 3, 4, 5, 6]
    p1 = rep.ports[0]
    assert p1.connected and p1.tb5_link and p1.speed_gbps == 80.0
    assert p1.hardware_port == "Thunderbolt 1"
    assert p1.peers[0].domain_uuid == "7C2A0F11-3D4E-4F50-9A6B-1C2D3E4F5A02"
    p4 = rep.ports[3]
    assert not p4.connected and p4.speed_gbps is None and p4.capability_gbps == 120.0


def test_a_peer_behind_a_dock_is_found_one_level_deeper():
    doc = {
        "SPThunderboltDataType": [
            {
                "_name": "bus0",
                "domain_uuid_key": "HOST",
                "receptacle_1_tag": {
                    "receptacle_id_key": "2",
                    "current_speed_key": "40 Gb/s",
                    "receptacle_status_key": "receptacle_connected",
                },
                "_items": [
                    {
                        "_name": "Dock",
                        "mode_key": "thunderbolt_four",
                        "_items": [{"_name": "Mac Studio", "domain_uuid_key": "PEER"}],
                    }
                ],
            }
        ]
    }
    port = parse_system_profiler_tb(json.dumps(doc)).ports[0]
    assert port.receptacle == 2 and not port.tb5_link
    assert [(p.domain_uuid, p.via) for p in port.peers] == [("PEER", "Dock")]
    assert port.devices == ["Dock"]


def test_system_profiler_unreadable_inputs_warn():
    assert parse_system_profiler_tb("{").warnings
    assert parse_system_profiler_tb("[]").warnings
    rep = parse_system_profiler_tb('{"SPThunderboltDataType": [1, {"domain_uuid_key": "x"}]}')
    assert len(rep.ports) == 1 and rep.ports[0].receptacle is None and len(rep.warnings) == 2


def test_speed_text():
    assert parse_speed("80 Gb/s") == (80.0, False)
    assert parse_speed("Up to 120 Gb/s") == (120.0, True)
    assert parse_speed("fast") == (None, False)
    assert parse_speed(None) == (None, False)


def test_networksetup_hardware_ports():
    hw = parse_networksetup_ports(fixture("healthy", "networksetup__listallhardwareports.txt"))
    assert hw.unparsed == []
    assert hw.device_of("Thunderbolt 1") == "en2" and hw.device_of("Thunderbolt 6") == "en7"
    assert hw.device_of("Thunderbolt Bridge") == "bridge0" and hw.device_of("Ethernet") == "en0"


def test_ifconfig_addresses_status_and_bridge_members():
    rep = parse_ifconfig(fixture("healthy", "ifconfig.txt"))
    assert rep.unparsed == []
    en2 = rep.interfaces["en2"]
    assert en2.up and en2.active and en2.inet == ["169.254.37.21"] and en2.mtu == 1500
    assert rep.interfaces["en5"].inet == [] and rep.interfaces["en5"].status == "inactive"
    br = rep.interfaces["bridge0"]
    assert not br.active and not br.up and br.members == [f"en{i}" for i in range(2, 8)]
    active = parse_ifconfig(fixture("bridge0-active", "ifconfig.txt")).interfaces["bridge0"]
    assert active.active and active.up and active.inet == ["169.254.99.14"]
    assert parse_ifconfig(fixture("fe80-only", "ifconfig.txt")).interfaces["en3"].inet == []


def test_links_join_receptacle_hardware_port_interface_and_rdma_device():
    sp = fixture("tb4-link", "system_profiler__SPThunderboltDataType_json.txt")
    hw = fixture("healthy", "networksetup__listallhardwareports.txt")
    inv = build(
        parse_system_profiler_tb(sp),
        parse_networksetup_ports(hw),
        parse_ifconfig(fixture("healthy", "ifconfig.txt")),
    )
    assert [(ln.receptacle, ln.interface, ln.rdma_device, ln.speed_gbps) for ln in inv.links] == [
        (1, "en2", "rdma_en2", 80.0),
        (2, "en3", "rdma_en3", 80.0),
        (3, "en4", "rdma_en4", 40.0),
    ]
    assert [ln.tb4_speed for ln in inv.links] == [False, False, True]
    assert inv.link_for_device("rdma_en4").hardware_port == "Thunderbolt 3"
    assert inv.bridge.name == "bridge0" and len(inv.tb5_links()) == 2
