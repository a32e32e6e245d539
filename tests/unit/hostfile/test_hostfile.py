"""The mlx.launch hostfile: parsing and the consistency rules (MD401 through the CLI:
tests/checks/test_fleet_hostfile.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshdoctor.hostfile.load import HostfileError, from_list, parse
from meshdoctor.hostfile.locality import local_names, local_ranks, machines


def mesh(n=3, backend="jaccl"):
    hosts = []
    for i in range(n):
        rdma = [None if j == i else f"rdma_en{j + 2}" for j in range(n)]
        hosts.append({"ssh": f"m{i + 1}", "ips": [f"10.0.0.{i + 1}"], "rdma": rdma})
    return {"backend": backend, "envs": ["MLX_METAL_FAST_SYNCH=1"], "hosts": hosts}


def probs(data):
    return list(parse(json.dumps(data)).problems)


def test_consistent_mesh_and_ring_have_no_problems():
    assert probs(mesh(4)) == []
    assert probs([{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "b", "ips": ["10.0.0.2"]}]) == []


def test_diagonal_must_be_null():
    d = mesh(3)
    d["hosts"][2]["rdma"][2] = "rdma_en9"
    assert ("hosts[2].rdma[2]", "must be null (a rank has no device to itself)") in probs(d)


def test_missing_peer_device_fails_for_mesh_but_not_for_ring_non_neighbour():
    d = mesh(4)
    d["hosts"][0]["rdma"][2] = None
    assert any(p == "hosts[0].rdma[2]" for p, _ in probs(d))
    d["backend"] = "jaccl-ring"  # 0 and 2 are not neighbours in a ring of 4
    assert not any(p == "hosts[0].rdma[2]" for p, _ in probs(d))
    d["hosts"][0]["rdma"][1] = None
    assert any(p == "hosts[0].rdma[1]" for p, _ in probs(d))


def test_row_length_and_cell_types():
    d = mesh(3)
    d["hosts"][1]["rdma"] = [None, None]
    d["hosts"][2]["rdma"][0] = 5
    d["hosts"][0]["rdma"][1] = ["rdma_en3", "rdma_en4"]  # two cables: fine
    got = dict(probs(d))
    assert "has 2 entries, needs 3" in got["hosts[1].rdma"]
    assert "not a device name" in got["hosts[2].rdma[0]"]
    assert "hosts[0].rdma[1]" not in got


def test_ring_needs_ips_and_valid_ips():
    got = dict(
        probs([{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "b"}, {"ssh": "c", "ips": ["300.1.1.1"]}])
    )
    assert "needs at least one IP" in got["hosts[1].ips"]
    assert "not an IP address" in got["hosts[2].ips[0]"]


def test_duplicates_backend_envs_coordinator_and_mesh_size():
    d = mesh(3)
    d["hosts"][2]["ssh"] = "m1"
    d["backend"] = "jacl"
    d["envs"] = ["NOEQUALS"]
    got = dict(probs(d))
    assert "unknown backend" in got["backend"]
    assert "not KEY=VALUE" in got["envs[0]"]
    d = mesh(3)
    d["hosts"][2]["ssh"] = "m1"
    assert "duplicate host 'm1'" in dict(probs(d))["hosts[2].ssh"]
    d = mesh(3)
    d["hosts"][0]["ips"] = []
    assert "coordinator" in dict(probs(d))["hosts[0].ips"]
    assert "at most 8" in dict(probs(mesh(9)))["hosts"]


def test_effective_backend_and_devices():
    hf = parse(json.dumps({"hosts": mesh(3)["hosts"]}))
    assert hf.effective_backend == "jaccl"
    assert hf.hosts[0].devices() == ["rdma_en3", "rdma_en4"]
    assert hf.hosts[0].devices_to(1) == ["rdma_en3"]
    assert from_list("127.0.0.1,127.0.0.1").hosts[1].ips == ("127.0.0.1",)
    with pytest.raises(HostfileError):
        from_list("a,,b")


def test_local_ranks_by_name_and_ip():
    hf = parse(json.dumps(mesh(3)))
    assert local_ranks(hf, {"m2"}) == [1]
    assert local_ranks(hf, {"10.0.0.3"}) == [2]
    assert local_ranks(hf, {"elsewhere"}) == []


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda c: (
            st.lists(c, max_size=4)
            | st.dictionaries(
                st.sampled_from(["ssh", "ips", "rdma", "hosts", "backend", "envs", "x"]),
                c,
                max_size=5,
            )
        ),
        max_leaves=30,
    )
)
def test_problems_never_raise_on_any_json(data):
    hf = parse(json.dumps(data))
    assert isinstance(hf.problems, tuple)
    local_ranks(hf, {"x"})


def test_a_wrongly_written_entry_is_reported_once_in_words_that_fit():
    """ "ssh": 123 is not a string (not "missing"); "ips": "1.2.3.4" is not a list, and the
    ring rule does not add that the entry "needs at least one IP"."""
    got = probs([{"ssh": 123, "ips": ["10.0.0.1"]}, {"ssh": "b", "ips": "1.2.3.4"}])
    assert got == [
        ("hosts[0].ssh", "must be a string (the host name to ssh into), not 123"),
        ("hosts[1].ips", "must be a list of IP addresses"),
    ]


def test_machines_groups_the_entries_that_are_this_machine_under_one_host():
    data = [
        {"ssh": "m1", "ips": ["10.0.0.1"]},
        {"ssh": "localhost", "ips": ["127.0.0.1"]},
        {"ssh": "m2", "ips": ["10.0.0.2"]},
        {"ssh": "m1", "ips": ["10.0.0.1"]},
    ]
    hf = parse(json.dumps(data), names={"m1"})
    assert machines(hf, {"m1"}) == {"m1": [0, 1, 3], "m2": [2]}
    assert machines(hf, {"elsewhere"}) == {"m1": [0, 3], "localhost": [1], "m2": [2]}


def test_this_machine_s_names_are_read_once_per_process(monkeypatch):
    import socket

    calls = []
    real = socket.getfqdn
    monkeypatch.setattr(socket, "getfqdn", lambda *a: calls.append(a) or real(*a))
    local_names.cache_clear()
    for _ in range(3):
        parse(json.dumps([{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "b", "ips": ["10.0.0.2"]}]))
        from_list("a,b")
    assert local_ranks(from_list("localhost,b")) == [0]
    assert len(calls) == 1
