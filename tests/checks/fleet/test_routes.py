"""MD413 (fleet.routes) on merged facts: the interface each host routes a peer address through."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view

NAMES = {"en0": "Ethernet", "en2": "Thunderbolt 1", "bridge0": "Thunderbolt Bridge"}


def routes(**peers):
    return {
        "peers": {ip: {"host": host, "interface": iface} for ip, (host, iface) in peers.items()},
        "names": NAMES,
    }


def md413(view):
    return {r.code: r for r in _run(view)["all"]}["MD413"]


def test_thunderbolt_addresses_over_their_cable_are_ok_and_named():
    f0 = _facts(0, routes=routes(**{"192.168.100.2": ("m1", "en2")}))
    f1 = _facts(1, routes=routes(**{"192.168.100.1": ("m0", "en2")}))
    got = md413(_view(f0, f1))
    assert got.status == "ok" and "m0->m1 192.168.100.2 via en2" in got.summary


def test_a_thunderbolt_address_over_ethernet_warns_naming_the_interface():
    f0 = _facts(0, routes=routes(**{"192.168.100.2": ("m1", "en0")}))
    f1 = _facts(1, routes=routes(**{"192.168.100.1": ("m0", "en2")}))
    got = md413(_view(f0, f1))
    assert got.status == "warn"
    assert got.summary == (
        "m0 reaches m1's Thunderbolt address 192.168.100.2 through en0 (Ethernet), "
        "not a Thunderbolt cable"
    )


def test_a_ring_on_the_lan_between_cabled_macs_warns():
    f0 = _facts(0, routes=routes(**{"10.0.0.2": ("m1", "en0")}))
    f1 = _facts(1, routes=routes(**{"10.0.0.1": ("m0", "en0")}))
    got = [r for r in _run(_view(f0, f1, backend="ring"))["all"] if r.code == "MD413"]
    assert [r.status for r in got] == ["warn", "warn"]
    assert "m1's ring address 10.0.0.2 (Thunderbolt cables connect these Macs)" in got[0].summary
    # the same LAN addresses as JACCL's side channel only: nothing the hostfile means a cable for
    assert md413(_view(f0, f1)).status == "ok"


def test_a_vpn_tunnel_or_tailscale_address_fails():
    f0 = _facts(0, routes=routes(**{"10.0.0.2": ("m1", "utun4")}))
    f1 = _facts(1, routes=routes(**{"100.101.7.3": ("m0", "en0")}))
    got = [r for r in _run(_view(f0, f1))["all"] if r.code == "MD413"]
    assert [r.status for r in got] == ["fail", "fail"]
    assert "m0 reaches m1's 10.0.0.2 through utun4, a VPN tunnel" in got[0].summary
    assert "inside Tailscale's range 100.64.0.0/10" in got[1].summary


def test_no_routes_reported_says_so():
    assert md413(_view(_facts(0), _facts(1))).summary == "no host reported its routes to the peers"
