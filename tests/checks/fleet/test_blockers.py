"""MD409 (fleet.blockers) on merged facts: what a host reports that blocks the launch is named by
host."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_stale_ranks_on_a_host_block_the_launch_named_by_host():
    view = _view(_facts(0), _facts(1))
    view.hosts["m1"].results = [
        {
            "code": "MD301",
            "status": "fail",
            "summary": "2 stale ranks",
            "remediation": {"text": "kill them"},
        }
    ]
    got = _run(view)
    assert got["MD409"].status == "fail" and got["MD409"].host == "m1"
