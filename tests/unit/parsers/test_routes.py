"""``route -n get`` (macOS route(8), tests/fixtures/mac/route-formats) and ``ip route get``
(iproute2 ip-route(8)) parsed into the interface, gateway and type."""

from __future__ import annotations

from pathlib import Path

from meshdoctor.parsers.routes import parse_ip_route_get, parse_route_get

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "mac" / "route-formats"


def test_macos_direct_route_names_the_interface():
    got = parse_route_get((FIX / "route__n_get_192.168.100.2.txt").read_text())
    assert got["interface"] == "en2" and got["gateway"] is None
    assert got["destination"] == "192.168.100.2"


def test_macos_default_route_has_a_gateway():
    got = parse_route_get((FIX / "route__n_get_10.0.0.12.txt").read_text())
    assert got == {
        "interface": "en0",
        "gateway": "10.0.0.1",
        "destination": "default",
        "mask": "default",
        "flags": "<UP,GATEWAY,DONE,STATIC,PRCLONING,GLOBAL>",
    }


def test_macos_tunnel_and_no_route():
    assert (
        parse_route_get((FIX / "route__n_get_100.101.7.3.txt").read_text())["interface"] == "utun4"
    )
    assert parse_route_get((FIX / "route__n_get_172.31.9.9.txt").read_text())["interface"] is None
    assert parse_route_get("")["interface"] is None


def test_linux_ip_route_get():
    assert parse_ip_route_get("10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache \n") == {
        "interface": "eth0",
        "gateway": None,
        "src": "10.0.0.1",
        "type": "unicast",
    }
    via = parse_ip_route_get("8.8.8.8 via 192.168.1.1 dev wlan0 src 192.168.1.5 uid 1000\n")
    assert via["gateway"] == "192.168.1.1" and via["interface"] == "wlan0"
    local = parse_ip_route_get("local 10.0.0.1 dev lo src 10.0.0.1 uid 0\n    cache <local>\n")
    assert local["type"] == "local" and local["interface"] == "lo"
    assert parse_ip_route_get("")["interface"] is None
