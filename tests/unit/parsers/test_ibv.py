"""The verbs parsers (``ibv_devinfo -v``, ``ibv_devices``, ``rdma_ctl status``) on fixture text."""

from __future__ import annotations

from meshdoctor.parsers.ibv import (
    normalize_gid,
    parse_ibv_devices,
    parse_ibv_devinfo,
    parse_rdma_ctl_status,
    value_and_code,
)
from tests.stubs import FIXTURES


def fixture(setname: str, name: str) -> str:
    return (FIXTURES / setname / name).read_text()


def test_healthy_devinfo_reads_devices_ports_gids_and_limits():
    rep = parse_ibv_devinfo(fixture("healthy", "ibv_devinfo__v.txt"))
    assert [d.name for d in rep.devices] == [f"rdma_en{i}" for i in range(2, 8)]
    assert rep.unparsed == [] and rep.warnings == []
    en2 = rep.devices[0]
    assert en2.transport == "Thunderbolt" and en2.is_thunderbolt
    assert en2.node_guid == "3a1f:c2ff:fe02:1a02" and en2.phys_port_cnt == 1
    assert en2.limits == {
        "max_qp": 256,
        "max_qp_wr": 1024,
        "max_cq": 256,
        "max_cqe": 4096,
        "max_mr": 4096,
        "max_pd": 64,
    }
    port = en2.port(1)
    assert port.active and port.state == "PORT_ACTIVE" and port.state_code == 4
    assert (port.max_mtu, port.active_mtu, port.link_layer, port.gid_tbl_len) == (
        4096,
        1024,
        "Thunderbolt",
        16,
    )
    assert [(g.index, g.gid) for g in port.gids] == [
        (0, "fe80::32a1:c2ff:fe02:1a02"),
        (1, "::ffff:169.254.37.21"),
    ]
    assert [g.ipv4 for g in port.mapped_gids()] == ["169.254.37.21"]
    active = [d.name for d in rep.devices if any(p.active for p in d.ports)]
    assert active == ["rdma_en2", "rdma_en3", "rdma_en4"]
    down = rep.devices[3].port(1)
    assert down.state == "PORT_DOWN" and down.state_code == 1 and not down.gids


def test_mapped_gid_at_index_2():
    rep = parse_ibv_devinfo(fixture("mapped-gid-2", "ibv_devinfo__v.txt"))
    mapped = rep.devices[0].port(1).mapped_gids()
    assert [(g.index, g.gid) for g in mapped] == [(2, "::ffff:169.254.37.21")]


def test_no_devices_and_no_subsystem_on_either_stream():
    assert parse_ibv_devinfo("No IB devices found\n").no_devices
    assert parse_ibv_devinfo("", "No IB devices found\n").no_devices
    rep = parse_ibv_devinfo("", "Failed to get IB devices list: Function not implemented\n")
    assert rep.no_subsystem and not rep.devices and not rep.unparsed


def test_extra_and_missing_lines_are_tolerated():
    # Keys this parser does not know, a flags value continued on indented lines, a GID type
    # after a comma and the fixed-width GID form: all read or skipped, nothing raises.
    text = (
        "hca_id:\tdevA\n"
        "\ttransport:\t\t\tInfiniBand (0)\n"
        "\tfw_ver:\t\t\t\t1.2.3\n"
        "\tsome_future_key:\t\tvalue\n"
        "\tdevice_cap_flags:\t\t0x00000021\n"
        "\t\t\t\t\tRESIZE_MAX_WR\n"
        "\t\t\t\t\tBAD_PKEY_CNTR\n"
        "\tmax_qp:\t\t\t\t0x40\n"
        "\t\tport:\t1\n"
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
        "\t\t\tlink_layer:\t\tEthernet\n"
        "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0202:c9ff:fe00:0001, RoCE v1\n"
        "\t\t\tGID[  3]:\t\t0000:0000:0000:0000:0000:ffff:c633:640a, RoCE v2\n"
    )
    rep = parse_ibv_devinfo(text)
    dev = rep.devices[0]
    assert rep.unparsed == []
    assert dev.fw_ver == "1.2.3" and dev.limits["max_qp"] == 64 and not dev.is_thunderbolt
    assert dev.attrs["some_future_key"] == "value"
    gids = dev.port(1).gids
    assert [(g.index, g.gid, g.gid_type) for g in gids] == [
        (0, "fe80::202:c9ff:fe00:1", "RoCE v1"),
        (3, "::ffff:198.51.100.10", "RoCE v2"),
    ]
    # phys_port_cnt missing, max_mtu missing: simply absent
    assert dev.phys_port_cnt is None and dev.port(1).max_mtu is None


def test_truncated_devinfo_reports_what_it_could_not_read():
    rep = parse_ibv_devinfo(fixture("truncated", "ibv_devinfo__v.txt"))
    assert [d.name for d in rep.devices] == ["rdma_en2", "rdma_en3"]
    assert any("rdma_en3: phys_port_cnt is 1 but 0 port block(s)" in w for w in rep.warnings)
    state_cut = "hca_id:\tx\n\tphys_port_cnt:\t1\n\t\tport:\t1\n\t\t\tmax_mtu:\t4096 (5)\n"
    assert any("x port 1: no state line" in w for w in parse_ibv_devinfo(state_cut).warnings)


def test_garbage_is_unparsed_not_devices():
    rep = parse_ibv_devinfo(fixture("garbage", "ibv_devinfo__v.txt"))
    assert rep.devices == [] and not rep.no_devices
    assert len(rep.unparsed) >= 4


def test_ibv_devices_list_header_only_and_garbage():
    lst = parse_ibv_devices(fixture("healthy", "ibv_devices.txt"))
    assert lst.header and lst.names == [f"rdma_en{i}" for i in range(2, 8)]
    assert lst.devices[0] == ("rdma_en2", "3a1fc2fffe021a02") and lst.unparsed == []
    off = parse_ibv_devices(fixture("rdma-disabled", "ibv_devices.txt"))
    assert off.header_only and off.names == []
    junk = parse_ibv_devices(fixture("garbage", "ibv_devices.txt"))
    assert not junk.header and junk.names == [] and junk.unparsed


def test_rdma_ctl_status():
    assert parse_rdma_ctl_status("enabled\n") is True
    assert parse_rdma_ctl_status("disabled\n") is False
    assert parse_rdma_ctl_status("RDMA: Disabled") is False
    assert parse_rdma_ctl_status("???") is None


def test_small_helpers():
    assert value_and_code("PORT_DOWN (1)") == ("PORT_DOWN", 1)
    assert value_and_code("Thunderbolt") == ("Thunderbolt", None)
    assert normalize_gid("::ffff:169.254.10.1") == "::ffff:169.254.10.1"
    assert normalize_gid("0000:0000:0000:0000:0000:0000:0000:0000") == "::"
    assert normalize_gid("not a gid") is None


def test_mixed_port_states_are_read_as_printed_with_the_physical_state():
    rep = parse_ibv_devinfo((FIXTURES / "mixed-port-states" / "ibv_devinfo__v.txt").read_text())
    got = {
        (d.name, p.num): (p.state_name, p.phys_state, p.active, p.down)
        for d in rep.devices
        for p in d.ports
    }
    assert got[("rdma_en2", 1)] == ("PORT_ACTIVE", "LINK_UP", True, False)
    assert got[("rdma_en3", 1)] == ("PORT_INIT", "LINK_UP", False, False)  # not down
    assert got[("rdma_en4", 1)] == ("PORT_ARMED", "LINK_UP", False, False)
    assert got[("rdma_en6", 1)] == ("PORT_DOWN", "POLLING", False, True)
    assert got[("rdma_en6", 2)] == ("PORT_ACTIVE", "LINK_UP", True, False)
    assert not rep.warnings and not rep.unparsed


def test_a_state_read_by_its_code_alone_is_named_by_it():
    rep = parse_ibv_devinfo(
        "hca_id:\tx\n\t\tport:\t1\n\t\t\tstate:\t\t\t(2)\n\t\t\tphys_state:\t\t(5)\n"
    )
    (p,) = rep.devices[0].ports
    assert p.state_name == "PORT_INIT" and p.phys_state == "LINK_UP" and not p.down
    assert p.to_dict()["state"] == "PORT_INIT"
