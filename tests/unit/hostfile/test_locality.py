"""The two locality questions kept apart: how mlx.launch reaches a rank (without ssh only for
127.0.0.1, MLX 0.32.4 mlx/_distributed_utils/launch.py) and which machine it lands on."""

from __future__ import annotations

import json

from meshdoctor.hostfile.load import parse
from meshdoctor.hostfile.locality import (
    is_this_machine,
    launched_here,
    local_ranks,
    locality_problems,
    machines,
    ssh_names,
    ssh_to_self,
)
from meshdoctor.mlx.launch_rules import runs_without_ssh, ssh_destination

HERE = {"m1", "10.0.0.1"}  # this machine's names in these tests


def _hf(entries):
    return parse(json.dumps(entries), names=HERE)


def test_only_127_0_0_1_runs_without_ssh_as_in_mlx_launch():
    assert runs_without_ssh("127.0.0.1") and ssh_destination("127.0.0.1") is None
    for name in ("localhost", "::1", "127.0.0.2", "m1", "10.0.0.1", " 127.0.0.1"):
        assert not runs_without_ssh(name) and ssh_destination(name) == name


def test_three_localhost_entries_land_here_but_are_reached_with_ssh():
    hf = _hf([{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 3)
    assert local_ranks(hf, HERE) == [0, 1, 2]
    assert not any(launched_here(h) for h in hf.hosts)
    assert ssh_names(hf) == ["localhost"] and ssh_to_self(hf, HERE) == ["localhost"]
    assert locality_problems(hf, HERE) == []


def test_127_0_0_1_entries_need_no_ssh():
    hf = _hf([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2)
    assert all(launched_here(h) for h in hf.hosts)
    assert ssh_names(hf) == [] and ssh_to_self(hf, HERE) == []


def test_this_machine_s_own_name_is_reached_with_ssh():
    hf = _hf([{"ssh": "m1", "ips": ["10.0.0.1"]}, {"ssh": "m2", "ips": ["10.0.0.2"]}])
    assert ssh_names(hf) == ["m1", "m2"] and ssh_to_self(hf, HERE) == ["m1"]


def test_a_remote_name_with_loopback_ips_lands_on_that_host_and_is_a_problem():
    hf = _hf([{"ssh": "m1", "ips": ["10.0.0.1"]}, {"ssh": "ghost1", "ips": ["127.0.0.1"]}])
    assert not is_this_machine(hf.hosts[1], HERE)
    assert machines(hf, HERE) == {"m1": [0], "ghost1": [1]}
    assert ssh_names(hf) == ["m1", "ghost1"]
    (p,) = locality_problems(hf, HERE)
    assert p.path == "hosts[1].ips[0]"
    assert "127.0.0.1 is a loopback address, but rank 1 runs on ghost1" in p.message


def test_an_ssh_alias_with_this_machine_s_address_lands_here():
    hf = _hf([{"ssh": "alias", "ips": ["10.0.0.1"]}, {"ssh": "m2", "ips": ["10.0.0.2"]}])
    assert is_this_machine(hf.hosts[0], HERE) and ssh_to_self(hf, HERE) == ["alias"]
