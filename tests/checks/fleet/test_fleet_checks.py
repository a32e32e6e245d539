"""Fleet mode without the network-namespace bed: the fan-out's error paths, the cross-node checks
on merged facts as the hosts report them, the CLI around them. (tests/netns/test_fleet.py runs
the whole thing across real sshd hosts.)"""

from __future__ import annotations

import copy
import json
import time

from meshdoctor.fanout import run_meshdoctor
from meshdoctor.checker.fleet_model import FleetView, HostView, all_fleet_checks, run_fleet_checks
from meshdoctor.hostfile import parse
from tests.helpers import run_cli


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


def test_mlx_skew_fails_for_jaccl_and_warns_for_ring():
    f1 = _facts(1, **{"mlx.version": "0.31.1"})
    assert _run(_view(_facts(0), f1))["MD403"].status == "fail"
    assert _run(_view(_facts(0), copy.deepcopy(f1), backend="ring"))["MD403"].status == "warn"
    guard = _run(_view(_facts(0), _facts(1, **{"mlx.jaccl_guard": False})))["MD403"]
    assert guard.status == "fail" and "progress guard" in guard.summary


def test_hostfile_envs_make_the_environment_agree_but_a_differing_shell_warns():
    f1 = _facts(1, env={})
    assert _run(_view(_facts(0), f1))["MD407"].status == "fail"
    got = _run(_view(_facts(0), _facts(1, env={}), envs=["MLX_METAL_FAST_SYNCH=1"]))
    assert "MD407" not in got
    got = _run(
        _view(
            _facts(0), _facts(1, env={"MLX_METAL_FAST_SYNCH": "0"}), envs=["MLX_METAL_FAST_SYNCH=1"]
        )
    )
    assert got["MD407"].status == "warn" and got["MD407"].host == "m1"


def test_edges_of_an_unreached_host_are_not_assessed():
    got = _run(_view(_facts(0), _facts(1), reachable=(True, False)))
    assert got["MD404"].status == "error" and "m1 did not answer" in got["MD404"].summary


def test_addresses_on_different_subnets_and_a_missing_one_fail():
    far = {"en2": [{"ip": "192.168.101.2", "prefixlen": 30}]}
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": far})))
    assert got["MD406"].status == "fail" and "not on one subnet" in got["MD406"].summary
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": {}})))
    assert "no IPv4 address on m1 en2" in got["MD406"].summary


def test_a_cable_to_a_mac_outside_the_hostfile_and_a_busy_coordinator_port_fail():
    f0 = _facts(0)
    f0["thunderbolt"]["ports"][0]["peers"] = ["SOMEONE-ELSE"]
    f0["ports"]["busy"] = {"32323": "python3 (pid 42)"}
    got = _run(_view(f0, _facts(1)))
    assert got["MD405"].status == "fail" and "not in the hostfile" in got["MD405"].summary
    assert got["MD408"].status == "fail" and got["MD408"].host == "m0"
    assert "python3 (pid 42)" in got["MD408"].summary


def test_stale_ranks_on_a_host_block_the_launch_named_by_host():
    view = _view(_facts(0), _facts(1))
    view.hosts["m1"].results = [
        {
            "code": "MD301",
            "status": "fail",
            "summary": "2 stale ranks",
            "remediation": {"text": "kill them"},
        }
    ]
    got = _run(view)
    assert got["MD409"].status == "fail" and got["MD409"].host == "m1"


def test_a_fleet_check_that_raises_is_an_error_not_a_crash():
    view = _view(_facts(0), _facts(1))
    view.hosts["m0"].facts["mlx"] = "garbage"
    got = _run(view)
    assert got["MD403"].status == "error" and "raised" in got["MD403"].summary


def test_fan_out_reports_each_host_and_never_raises():
    t0 = time.monotonic()
    got = run_meshdoctor(
        ["here", "-oProxyCommand=x", "nosuch.invalid"],
        ["check", "--local-only", "--json", "--only", "MD103"],
        timeout=20,
        local=lambda h: h == "here",
    )
    assert time.monotonic() - t0 < 22
    assert got["here"].doc and got["here"].doc["command"] == "check"
    assert got["here"].via == "local"
    assert (
        got["-oProxyCommand=x"].doc is None and "ssh destination" in got["-oProxyCommand=x"].error
    )
    assert not got["nosuch.invalid"].reachable and got["nosuch.invalid"].error


def test_check_hosts_with_an_unreachable_host_is_exit_3_with_ssh_message(clean_env):
    r = run_cli(
        "check", "--hosts", "nosuch.invalid", "--json", "--timeout", "3", env=clean_env, timeout=60
    )
    assert r.rc == 3
    err = r.results("MD402")[0]
    assert err["status"] == "error" and "nosuch.invalid" in err["summary"]
    assert "pip install meshdoctor" in err["remediation"]["command"]
    assert r.doc["hosts"][0]["reachable"] is False


def test_fleet_codes_are_listed_and_explained():
    r = run_cli("list-checks")
    assert all(c in r.out for c in ("MD403", "MD404", "MD405", "MD406", "MD407", "MD408", "MD409"))
    r = run_cli("explain", "MD404")
    assert r.rc == 0 and "edges active" in r.out
    r = run_cli("explain", "MD402")
    assert r.rc == 0 and "ssh" in r.out


def test_only_cross_node_checks_and_the_hostfile_rules_once(tmp_path, clean_env):
    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps([{"ssh": "127.0.0.1"}, {"ssh": "127.0.0.2"}]))  # ring without IPs
    r = run_cli(
        "check", "--hostfile", str(hf), "--json", "--only", "MD403,fleet.environment", env=clean_env
    )
    assert r.rc == 0 and {x["code"] for x in r.doc["results"]} == {"MD403", "MD407"}
    r = run_cli("check", "--hostfile", str(hf), "--json", "--only", "MD401", env=clean_env)
    assert r.rc == 1
    assert all(
        str(hf) in x["remediation"]["text"] for x in r.results("MD401") if x["status"] == "fail"
    )
    r = run_cli("check", "--hostfile", str(hf), "--only", "MD999", env=clean_env)
    assert r.rc == 2 and "unknown check MD999" in r.err


def test_escape_sequences_from_a_hostfile_never_reach_the_terminal():
    view = _view(_facts(0), _facts(1), device01="rdma_en2\x1b[2J")
    got = run_fleet_checks(all_fleet_checks(), view)
    assert all("\x1b" not in r.summary for _, r in got)
    assert any("rdma_en2\\x1b[2J" in r.summary for _, r in got)  # shown, not obeyed


def test_a_listening_port_is_busy_by_the_socket_table_and_by_the_bind_fallback():
    import socket

    from meshdoctor.facts.summary import _bind_test, _busy_ports

    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        port = s.getsockname()[1]
        assert str(port) in _bind_test([port])
        assert str(port) in _busy_ports([port])
    assert _bind_test([port]) == {}


def test_needed_ports_are_mlx_launch_ring_ports_of_every_rank_of_the_host():
    """mlx.launch (launch.py, mlx 0.32.4) counts ring ports up from --starting-port over every IP
    of every rank in order; a host with several ranks needs all of theirs, found in one pass."""
    from meshdoctor.facts.summary import needed_ports, ring_ports
    from meshdoctor.hostfile import parse

    hf = parse(
        json.dumps(
            [
                {"ssh": "a", "ips": ["10.0.0.1", "10.0.1.1"]},
                {"ssh": "b", "ips": ["10.0.0.2"]},
                {"ssh": "a", "ips": ["10.0.0.3", "10.0.1.3", "10.0.2.3"]},
                {"ssh": "c", "ips": ["10.0.0.4"]},
            ]
        )
    )
    assert [ring_ports(hf, r) for r in range(4)] == [
        [32323, 32324],
        [32325],
        [32326, 32327, 32328],
        [32329],
    ]
    assert needed_ports(hf, [0, 2]) == [32323, 32324, 32326, 32327, 32328]
    assert needed_ports(hf, [3], start=40000) == [40006]
    jaccl = parse(json.dumps({"backend": "jaccl", "hosts": [{"ssh": "a"}, {"ssh": "b"}]}))
    assert needed_ports(jaccl, [0]) == [32323] and needed_ports(jaccl, [1]) == []
