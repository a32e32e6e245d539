"""MD404 (fleet.edges) on merged facts: the edge matrix, and edges of a host that did not answer."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_edges_of_an_unreached_host_are_not_assessed():
    got = _run(_view(_facts(0), _facts(1), reachable=(True, False)))
    assert got["MD404"].status == "error" and "m1 did not answer" in got["MD404"].summary
