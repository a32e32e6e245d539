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
