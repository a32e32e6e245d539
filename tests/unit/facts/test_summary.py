"""meshdoctor.facts.summary: the ports a host needs (mlx.launch's ring ports) and which are busy."""

from __future__ import annotations

import json


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
    from meshdoctor.hostfile.load import parse

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
