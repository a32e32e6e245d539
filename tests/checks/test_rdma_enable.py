"""MD201 (rdma.enable) on fake Macs: the chain rdma_ctl -> ibv_devices -> Thunderbolt hardware and
its remedy."""

from __future__ import annotations

from tests.checks.test_rdma_checks import ONLY, ring_over_tb
from tests.helpers import run_cli
from tests.stubs import FIXTURES


def test_tb4_mac_enabled_with_no_devices(fake_mac):
    r = run_cli("check", "--json", *ONLY, env=fake_mac("healthy", "enabled-no-devices", "tb4-mac"))
    (f,) = r.results("MD201")
    assert f["summary"].endswith("no RDMA device is listed, as expected on Thunderbolt 4")
    assert ring_over_tb(f)


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


def test_thunderbolt_4_summary_names_the_states_its_ports_read(fake_mac, tmp_path):
    text = (FIXTURES / "tb4-devices-listed" / "ibv_devinfo__v.txt").read_text()
    text = text.replace("PORT_DOWN (1)", "PORT_INIT (2)", 1)
    env = fake_mac("healthy", "tb4-devices-listed", extra={"ibv_devinfo__v.txt": text})
    r = run_cli("check", "--only", "MD201", "--json", env=env)
    (f,) = r.results("MD201")
    assert (
        "never usable on Thunderbolt 4 (rdma_en2 PORT_INIT, rdma_en3 PORT_DOWN, rdma_en4 PORT_DOWN)"
    ) in f["summary"]
