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


# https://github.com/ml-explore/mlx/issues/1903: a Mac mini whose ring hostfile address 10.25.0.1
# sits on bridge0 (members en2, en3, en4), as its ifconfig in the thread shows
BRIDGE_1903 = """\
bridge0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 9000
\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>
\tether 36:6a:0f:f5:b0:80
\tinet6 fe80::1442:a0bf:3f10:95ba%bridge0 prefixlen 64 secured scopeid 0x12
\tinet 10.25.0.1 netmask 0xffffff00 broadcast 10.25.0.255
\tConfiguration:
\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0
\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200
\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0
\t\tipfilter disabled flags 0x0
\tmember: en2 flags=3<LEARNING,DISCOVER>
\t        ifmaxaddr 0 port 11 priority 0 path cost 0
\tmember: en3 flags=3<LEARNING,DISCOVER>
\t        ifmaxaddr 0 port 12 priority 0 path cost 0
\tmember: en4 flags=3<LEARNING,DISCOVER>
\t        ifmaxaddr 0 port 13 priority 0 path cost 0
\tnd6 options=201<PERFORMNUD,DAD>
\tmedia: autoselect
\tstatus: active
"""


def _ring_hostfile(tmp_path, my_ip: str):
    doc = {
        "backend": "ring",
        "hosts": [{"ssh": "localhost", "ips": [my_ip]}, {"ssh": "m2", "ips": ["10.25.0.2"]}],
    }
    return write(tmp_path / "hosts.json", json.dumps(doc))


def _ifconfig_with(bridge: str) -> str:
    text = (FIXTURES / "healthy" / "ifconfig.txt").read_text()
    return text.split("bridge0:")[0] + bridge


def test_a_ring_hostfile_address_on_bridge0_fails_as_for_jaccl(fake_mac, tmp_path):
    env = fake_mac("healthy", extra={"ifconfig.txt": _ifconfig_with(BRIDGE_1903)})
    hf = _ring_hostfile(tmp_path, "10.25.0.1")
    r = run_cli("check", "--json", *TB, "--local-only", "--hostfile", str(hf), env=env)
    assert r.rc == 1, r.outcome()
    (f,) = r.results("MD205")
    assert f["status"] == "fail"
    assert f["summary"].startswith(
        "the ring hostfile's address 10.25.0.1 for this node is on the Thunderbolt Bridge "
        "(bridge0, members en2, en3, en4)"
    )
    assert (
        "--backend ring" in f["remediation"]["text"]
        and "--auto-setup" in (f["remediation"]["text"])
    )


def test_a_ring_hostfile_address_on_a_thunderbolt_interface_is_not_the_bridge(fake_mac, tmp_path):
    env = fake_mac("healthy", extra={"ifconfig.txt": _ifconfig_with(BRIDGE_1903)})
    hf = _ring_hostfile(tmp_path, "169.254.37.21")  # en2's own address in the fixture
    r = run_cli("check", "--json", *TB, "--local-only", "--hostfile", str(hf), env=env)
    assert r.status("MD205") == "skip", r.out
