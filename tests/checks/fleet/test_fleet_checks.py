"""The cross-node checks together, on merged facts as the hosts report them, without the
network-namespace bed: a healthy pair, a cable to a Mac outside the hostfile with a busy
coordinator port, a check that raises, escape sequences. Each check's own tests are in
tests/checks/fleet/test_<check>.py (which import the helpers here); tests/netns/test_fleet.py
runs the whole thing across real sshd hosts."""

from __future__ import annotations

import json

from meshdoctor.checker.fleet_model import FleetView, HostView, all_fleet_checks, run_fleet_checks
from meshdoctor.hostfile.load import parse


def _facts(i: int, **over) -> dict:
    f = {
        "meshdoctor": "0.1.0",
        "env": {"MLX_METAL_FAST_SYNCH": "1"},
        "platform": {
            "os": "darwin",
            "os_version": "26.3.1",
            "build": "25D2128",
            "python": "3.12.3",
        },
        "mlx": {"installed": True, "version": "0.32.1", "jaccl_guard": True},
        "rdma": {"state": "ok", "devices": {"rdma_en2": {"state": "PORT_ACTIVE", "active": True}}},
        "thunderbolt": {
            "readable": True,
            "ports": [
                {
                    "receptacle": 1,
                    "domain_uuid": f"U{i}",
                    "interface": "en2",
                    "device": "rdma_en2",
                    "connected": True,
                    "peers": [f"U{1 - i}"],
                }
            ],
            "interfaces": {"en2": [{"ip": f"192.168.100.{i + 1}", "prefixlen": 30}]},
        },
        "ports": {"needed": [32323] if i == 0 else [], "busy": {}},
        "power": {"sleep": 0, "disksleep": 0, "powernap": 0},
    }
    for path, value in over.items():
        node = f
        keys = path.split(".")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return f


def _view(
    f0: dict,
    f1: dict,
    backend: str = "jaccl",
    envs=(),
    reachable=(True, True),
    device01: str = "rdma_en2",
):
    hf = parse(
        json.dumps(
            {
                "backend": backend,
                "envs": list(envs),
                "hosts": [
                    {"ssh": "m0", "ips": ["10.0.0.1"], "rdma": [None, device01]},
                    {"ssh": "m1", "ips": ["10.0.0.2"], "rdma": ["rdma_en2", None]},
                ],
            }
        )
    )
    return FleetView(
        hf,
        {
            "m0": HostView("m0", [0], reachable[0], f0 if reachable[0] else {}),
            "m1": HostView("m1", [1], reachable[1], f1 if reachable[1] else {}),
        },
    )


def _run(view):
    return {
        r.code: r for _, r in run_fleet_checks(all_fleet_checks(), view) if r.status != "ok"
    } | {"all": [r for _, r in run_fleet_checks(all_fleet_checks(), view)]}


def test_a_healthy_pair_is_all_ok_with_one_edge():
    got = run_fleet_checks(all_fleet_checks(), _view(_facts(0), _facts(1)))
    assert {r.status for _, r in got} == {"ok"}, [(r.code, r.summary) for _, r in got]
    edges = [r for _, r in got if r.code == "MD404"][0]
    assert edges.summary == "1/1 edges active" and edges.evidence["edge_matrix"]["total"] == 1


def test_a_cable_to_a_mac_outside_the_hostfile_and_a_busy_coordinator_port_fail():
    f0 = _facts(0)
    f0["thunderbolt"]["ports"][0]["peers"] = ["SOMEONE-ELSE"]
    f0["ports"]["busy"] = {"32323": "python3 (pid 42)"}
    got = _run(_view(f0, _facts(1)))
    assert got["MD405"].status == "fail" and "not in the hostfile" in got["MD405"].summary
    assert got["MD408"].status == "fail" and got["MD408"].host == "m0"
    assert "python3 (pid 42)" in got["MD408"].summary


def test_a_fleet_check_that_raises_is_an_error_not_a_crash():
    view = _view(_facts(0), _facts(1))
    view.hosts["m0"].facts["mlx"] = "garbage"
    got = _run(view)
    assert got["MD403"].status == "error" and "raised" in got["MD403"].summary


def test_escape_sequences_from_a_hostfile_never_reach_the_terminal():
    view = _view(_facts(0), _facts(1), device01="rdma_en2\x1b[2J")
    got = run_fleet_checks(all_fleet_checks(), view)
    assert all("\x1b" not in r.summary for _, r in got)
    assert any("rdma_en2\\x1b[2J" in r.summary for _, r in got)  # shown, not obeyed
