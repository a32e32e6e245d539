"""The one hostfile rule set (meshdoctor.hostfile) without the CLI: locality, host names, IPv6
where MLX reads ip:port, entries reported once, ranks in words."""

from __future__ import annotations

import json

from meshdoctor.hostfile.rules import host_name_problem

from meshdoctor.hostfile.locality import locality_problems

from meshdoctor.hostfile.phrases import n_ranks, ranks_phrase

from meshdoctor.hostfile.load import parse


def test_the_locality_rule_names_the_address_and_a_remote_host_s_loopback():
    names = {"vm", "192.168.7.2"}
    hf = parse(
        json.dumps(
            [
                {"ssh": "vm", "ips": ["10.1.1.1", "192.168.7.2"]},
                {"ssh": "other", "ips": ["127.0.0.2"]},
                {"ssh": "far", "ips": ["10.1.1.3"]},
            ]
        )
    )
    got = dict(locality_problems(hf, names))
    assert list(got) == ["hosts[0].ips[0]", "hosts[1].ips[0]"]
    assert "its ssh name 'vm' is this machine" in got["hosts[0].ips[0]"]
    # mlx.launch reaches "other" with ssh: its rank listens on other's own loopback
    assert "127.0.0.2 is a loopback address, but rank 1 runs on other" in got["hosts[1].ips[0]"]
    assert "ssh name 127.0.0.1" in got["hosts[1].ips[0]"]


def test_ordinary_host_names_pass_the_one_rule():
    for name in ("m1", "mac-studio.local", "user@m2", "10.0.0.1", "fe80::1%en0", "h_1"):
        assert host_name_problem(name) is None, name


def test_rank_counts_and_lists_read_as_english():
    assert n_ranks(1) == "1 rank" and n_ranks(3) == "3 ranks"
    assert ranks_phrase([0]) == "rank 0" and ranks_phrase([0, 1]) == "ranks 0 and 1"
    assert ranks_phrase([0, 1, 2]) == "ranks 0, 1 and 2"
    assert ranks_phrase([0, 1, 2, 3, 4, 7, 9]) == "ranks 0-4, 7 and 9"
    assert ranks_phrase(range(8000)) == "ranks 0-7999"


def test_a_non_object_host_entry_is_reported_once():
    got = list(
        parse(
            json.dumps([5, {"ssh": "localhost", "ips": ["127.0.0.1"]}]), names={"localhost"}
        ).problems
    )
    assert got == [("hosts[0]", '5 must be an object with "ssh", "ips", "rdma"')]


def test_ipv6_is_refused_only_where_mlx_reads_ip_port():
    """The JACCL coordinator (rank 0's first IP) is read the same way; an IPv6 address that MLX
    never parses (a later JACCL IP, a one-rank ring) is left alone."""
    rows = [[None, "rdma_en2"], ["rdma_en2", None]]
    jaccl = parse(
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "a", "ips": ["fe80::1"], "rdma": rows[0]},
                    {"ssh": "b", "ips": ["10.0.0.2", "fe80::2"], "rdma": rows[1]},
                ],
            }
        ),
        names={"c"},
    )
    assert [p.path for p in jaccl.problems] == ["hosts[0].ips[0]"]
    assert "JACCL's coordinator (MLX_JACCL_COORDINATOR)" in jaccl.problems[0].message
    one = parse(
        json.dumps({"backend": "ring", "hosts": [{"ssh": "a", "ips": ["fe80::1"]}]}), names={"c"}
    )
    assert [p.path for p in one.problems] == ["hosts"]  # one ring rank: its own rule, no IPv6
    assert "1 rank with the ring backend" in one.problems[0].message


def _jaccl_ring(order):
    """A jaccl-ring hostfile of Macs cabled in the ring m1-m2-m3-m4-m1 (each Mac's rdma_en2 to
    the next, rdma_en3 to the one before), its hosts listed in ``order``."""
    from meshdoctor.hostfile.load import parse

    phys = ["m1", "m2", "m3", "m4"]
    dev = {}
    for k, h in enumerate(phys):
        dev[(h, phys[(k + 1) % 4])] = "rdma_en2"
        dev[(h, phys[(k - 1) % 4])] = "rdma_en3"
    hosts = [
        {"ssh": h, "ips": [f"10.0.0.{i + 1}"], "rdma": [dev.get((h, o)) for o in order]}
        for i, h in enumerate(order)
    ]
    return parse(json.dumps({"backend": "jaccl-ring", "hosts": hosts}))


def test_a_jaccl_ring_out_of_cable_order_offers_the_order_of_the_cables():
    # ml-explore/mlx#4283 (fixed by MLX PR #4284): two hosts permuted, rows and columns
    # together, so ring neighbours have no cable between them and every rank ends alone
    probs = _jaccl_ring(["m1", "m3", "m2", "m4"]).problems
    (p,) = probs
    assert p.path == "hosts", probs
    assert "jaccl-ring's ring is the order of the hosts" in p.message
    assert "rank 0 (m1) and rank 1 (m3); rank 2 (m2) and rank 3 (m4)" in p.message
    assert "form a ring in the order m1, m2, m3, m4" in p.message
    assert not any(".rdma[" in q.path for q in probs)  # no "edit hosts[0].rdma[1]"


def test_a_jaccl_ring_in_cable_order_has_no_problem():
    assert _jaccl_ring(["m1", "m2", "m3", "m4"]).problems == ()


def test_a_jaccl_ring_whose_cables_form_no_ring_names_each_missing_neighbour():
    from meshdoctor.hostfile.load import parse

    hosts = [
        {"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [None, "rdma_en2", None]},
        {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en3", None, "rdma_en2"]},
        {"ssh": "m3", "ips": ["10.0.0.3"], "rdma": [None, "rdma_en3", None]},
    ]
    probs = parse(json.dumps({"backend": "jaccl-ring", "hosts": hosts})).problems
    paths = sorted(p.path for p in probs)
    assert paths == ["hosts[0].rdma[2]", "hosts[2].rdma[0]"], probs
    assert all("form no ring through every host" in p.message for p in probs)
