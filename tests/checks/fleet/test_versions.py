"""MD403 (fleet.versions) on merged facts: MLX version skew and the JACCL progress guard across
hosts."""

from __future__ import annotations

import copy

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_mlx_skew_fails_for_jaccl_and_warns_for_ring():
    f1 = _facts(1, **{"mlx.version": "0.31.1"})
    assert _run(_view(_facts(0), f1))["MD403"].status == "fail"
    assert _run(_view(_facts(0), copy.deepcopy(f1), backend="ring"))["MD403"].status == "warn"
    guard = _run(_view(_facts(0), _facts(1, **{"mlx.jaccl_guard": False})))["MD403"]
    assert guard.status == "fail" and "progress guard" in guard.summary
