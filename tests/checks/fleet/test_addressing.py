"""MD406 (fleet.addressing) on merged facts: the two ends of a cable on one subnet, each with an
address."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_addresses_on_different_subnets_and_a_missing_one_fail():
    far = {"en2": [{"ip": "192.168.101.2", "prefixlen": 30}]}
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": far})))
    assert got["MD406"].status == "fail" and "not on one subnet" in got["MD406"].summary
    got = _run(_view(_facts(0), _facts(1, **{"thunderbolt.interfaces": {}})))
    assert "no IPv4 address on m1 en2" in got["MD406"].summary
