"""MD404 (fleet.edges) on merged facts: the edge matrix, and edges of a host that did not answer."""

from __future__ import annotations

import json

from meshdoctor.checker.here import check_args
from tests.checks.fleet.test_fleet_checks import _facts, _run, _view
from tests.helpers import run_cli, write


def test_edges_of_an_unreached_host_are_not_assessed():
    got = _run(_view(_facts(0), _facts(1), reachable=(True, False)))
    assert got["MD404"].status == "error" and "m1 did not answer" in got["MD404"].summary


# rdma-core's `ibv_devinfo -v` reading mixed states: rdma_en2 PORT_ACTIVE, rdma_en3 PORT_INIT,
# rdma_en4 PORT_ARMED, rdma_en5 and rdma_en7 PORT_DOWN, rdma_en6 two ports (1 PORT_DOWN, 2
# PORT_ACTIVE): no summary may state a port state that this reading contradicts
MIXED = ("healthy", "mixed-port-states")


def _facts_of(fake_mac, tmp_path):
    hf = write(
        tmp_path / "j.json",
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "127.0.0.1", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en2"]},
                    {"ssh": "m1", "ips": ["10.0.0.2"], "rdma": ["rdma_en2", None]},
                ],
            }
        ),
    )
    r = run_cli(
        *check_args(timeout=10, only=["MD202"], hostfile=str(hf), ranks=[0], facts=True),
        env=fake_mac(*MIXED),
    )
    return r.doc["hosts"][0]["facts"]["rdma"]["devices"]


def test_fleet_facts_state_the_port_that_active_is_read_from(fake_mac, tmp_path):
    devices = _facts_of(fake_mac, tmp_path)
    # port 1 is down, port 2 active: the device is PORT_ACTIVE, as "active" says
    assert devices["rdma_en6"] == {
        "state": "PORT_ACTIVE",
        "active": True,
        "ports": {"1": "PORT_DOWN", "2": "PORT_ACTIVE"},
    }
    assert devices["rdma_en3"]["state"] == "PORT_INIT" and devices["rdma_en3"]["active"] is False
    for d in devices.values():  # never a state that contradicts "active"
        assert (d["state"] == "PORT_ACTIVE") == d["active"]
    # MD404 on those facts: an edge over rdma_en3 is "not active", and says PORT_INIT
    f1 = _facts(1, **{"rdma.devices": {"rdma_en2": devices["rdma_en3"]}})
    md404 = _run(_view(_facts(0), f1))["MD404"]
    assert md404.status == "fail"
    assert (
        "edge m0-m1 is not active (m0 rdma_en2 <-> m1 rdma_en2): rdma_en2 on m1 is PORT_INIT"
        in (md404.summary)
    )
