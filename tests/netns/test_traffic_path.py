"""Which path the traffic really takes, across real hosts: network namespaces with their own
sshd, each a fake Mac (tests/netns/fleet_bed.py) whose ``route -n get`` answers as route(8)
prints it. A ring on the Thunderbolt addresses is ok with each interface named; one host whose
route to its neighbour's Thunderbolt address goes over en0 warns naming it; a VPN tunnel or a
Tailscale address fails."""

from __future__ import annotations

import json
import os

import pytest

from tests import netns
from tests.helpers import run_cli
from tests.netns.fleet_bed import MacMesh

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TIMEOUT = "60"  # per-check deadline on each host: a bound on a hang, never waited out by a
# passing test (a loaded 2-core CI box has taken over 20 s for one remote check)


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(3) as tb:
        tb.mesh = MacMesh(tb)
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env["MESHDOCTOR_SSH_CONFIG"] = str(tb.ssh_config)
        yield tb


def ring_on_thunderbolt(bed, path):
    """Each rank's address is its end of the cable from its left neighbour."""
    bed.mesh.write()
    ips = bed.mesh.cable_ips  # (host index, receptacle) -> address
    left_end = {}
    for (i, _r), a in ips.items():
        left = (i - 1) % 3
        if any(
            j == left and b.rsplit(".", 1)[0] == a.rsplit(".", 1)[0] for (j, _), b in ips.items()
        ):
            left_end.setdefault(i, a)
    hosts = [{"ssh": h, "ips": [left_end[i]]} for i, h in enumerate(bed.hosts)]
    path.write_text(json.dumps({"backend": "ring", "hosts": hosts}))
    return path, [left_end[i] for i in range(3)]


def fleet(bed, hostfile):
    return run_cli(
        "check",
        "--hostfile",
        str(hostfile),
        "--python",
        bed.mesh.python,
        "--timeout",
        TIMEOUT,
        "--json",
        env=bed.env,
        timeout=180,
    )


def test_ring_on_thunderbolt_ok_then_one_route_over_ethernet_warns(bed, tmp_path):
    hf, addr = ring_on_thunderbolt(bed, tmp_path / "ring.json")
    r = fleet(bed, hf)
    got = r.results("MD413")
    assert [x["status"] for x in got] == ["ok"], got
    assert f"h0->h1 {addr[1]} via en" in got[0]["summary"]
    # h0's route to h1's Thunderbolt address now goes over the LAN port
    bed.mesh.write(routes={"h0": {addr[1]: "en0"}})
    r = fleet(bed, hf)
    warned = [x for x in r.results("MD413") if x["status"] == "warn"]
    assert [x["summary"] for x in warned] == [
        f"h0 reaches h1's Thunderbolt address {addr[1]} through en0 (Ethernet), "
        "not a Thunderbolt cable"
    ]
    assert warned[0]["evidence"]["hosts"] == ["h0", "h1"]


def test_a_vpn_tunnel_fails_and_a_tailscale_coordinator_fails(bed, tmp_path):
    hf, addr = ring_on_thunderbolt(bed, tmp_path / "ring.json")
    bed.mesh.write(routes={"h2": {addr[0]: "utun4"}})
    r = fleet(bed, hf)
    assert r.rc == 1, r.outcome()
    bad = [x for x in r.results("MD413") if x["status"] == "fail"]
    assert bad and f"h2 reaches h0's {addr[0]} through utun4, a VPN tunnel" in bad[0]["summary"]
    # JACCL's coordinator on a Tailscale address (exo #1723)
    bed.mesh.write(routes={h: {"100.101.7.3": "utun4"} for h in ("h1", "h2")})
    jaccl = bed.mesh.hostfile(tmp_path / "jaccl.json")
    doc = json.loads(jaccl.read_text())
    doc["hosts"][0]["ips"] = ["100.101.7.3"]
    jaccl.write_text(json.dumps(doc))
    r = fleet(bed, jaccl)
    bad = [x for x in r.results("MD413") if x["status"] == "fail"]
    assert {x["evidence"]["host"] for x in bad} == {"h1", "h2"}, r.results("MD413")
    assert all("100.101.7.3 through utun4, a VPN tunnel" in x["summary"] for x in bad)
