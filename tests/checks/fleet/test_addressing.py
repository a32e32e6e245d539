"""MD406 (fleet.addressing) on merged facts: the two ends of a cable on one subnet, each with an
address; every JACCL rank reaches the coordinator."""

from __future__ import annotations

import json

from meshdoctor.checker.here import check_args
from tests.checks.fleet.test_fleet_checks import _facts, _run, _view
from tests.helpers import run_cli, write


def test_addresses_on_different_subnets_and_a_missing_one_fail():
    far = {"en2": [{"ip": "192.168.101.2", "prefixlen": 30}]}
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": far})))
    assert got["MD406"].status == "fail" and "not on one subnet" in got["MD406"].summary
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": {}})))
    assert "no IPv4 address on m1 en2" in got["MD406"].summary


def _node_facts(tmp_path, clean_env, coordinator_ip: str) -> dict:
    """Rank 1's real facts (`check --local-only --facts`, as fleet mode runs it) for a JACCL
    hostfile whose rank 0 lists ``coordinator_ip`` first."""
    hf = write(
        tmp_path / "j.json",
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "m0", "ips": [coordinator_ip], "rdma": [None, "rdma_en2"]},
                    {"ssh": "127.0.0.1", "ips": ["127.0.0.1"], "rdma": ["rdma_en2", None]},
                ],
            }
        ),
    )
    r = run_cli(
        *check_args(timeout=5, only=["MD103"], hostfile=str(hf), ranks=[1], facts=True),
        env=clean_env,
    )
    return r.doc["hosts"][0]["facts"]


def test_every_jaccl_rank_tries_the_coordinator_and_one_it_cannot_reach_fails(tmp_path, clean_env):
    """Rank 1 connects to rank 0's first IP at the starting port, as JACCL's ranks do
    (MLX_JACCL_COORDINATOR): a refusal is reachable; 255.255.255.255, which no TCP connect
    can reach (the kernel answers "Network is unreachable"), fails MD406 naming the rank and
    the address."""
    got = _node_facts(tmp_path, clean_env, "127.0.0.1")["coordinator"]
    assert got["target"] == "127.0.0.1:32323" and got["from_rank"] == 1
    assert got["outcome"] in ("refused", "open")
    view = _view(_facts(0), _facts(1, coordinator=got))
    assert "MD406" not in _run(view)
    got = _node_facts(tmp_path, clean_env, "255.255.255.255")["coordinator"]
    assert got["outcome"] not in ("refused", "open")
    md406 = _run(_view(_facts(0), _facts(1, coordinator=got)))["MD406"]
    assert md406.status == "fail"
    assert md406.summary.startswith(
        "the JACCL coordinator 255.255.255.255:32323 (rank 0's first IP) is not reachable from rank 1"
    )


def test_an_address_md401_refuses_is_never_looked_up_nor_connected_to(tmp_path, clean_env):
    # 999.1.1.1 is no IP address: socket.create_connection would resolve it as a host name
    got = _node_facts(tmp_path, clean_env, "999.1.1.1")
    assert got.get("coordinator") is None, got.get("coordinator")
    assert "999.1.1.1" not in json.dumps(got.get("routes"))
    ring = write(
        tmp_path / "r.json",
        json.dumps(
            {
                "backend": "ring",
                "hosts": [
                    {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]},
                    {"ssh": "m1", "ips": ["999.1.1.1", "127.0.0.2"]},
                ],
            }
        ),
    )
    r = run_cli(
        *check_args(timeout=5, only=["MD401"], hostfile=str(ring), ranks=[0], facts=True),
        env=clean_env,
    )
    assert "'999.1.1.1' is not an IP address" in json.dumps(r.doc["results"])
    facts = r.doc["hosts"][0]["facts"]
    targets = facts["reach"]["targets"]
    assert list(targets) and not [t for t in targets if t.startswith("999.")], targets
    assert "999.1.1.1" not in json.dumps(facts.get("routes"))
