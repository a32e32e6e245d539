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


def test_m5_and_m4_macs_on_mlx_0_32_4_jaccl_warn_of_lost_completions():
    # MLX issue #4403 (open): NAX (M5) and non-NAX ranks in one group lose JACCL completions
    over = {"mlx.version": "0.32.4"}
    f0 = _facts(0, **over, **{"platform.chip": "Apple M5 Max"})
    f1 = _facts(1, **over, **{"platform.chip": "Apple M4 Pro"})
    got = _run(_view(f0, f1))["MD403"]
    assert got.status == "warn"
    assert got.summary.startswith(
        "Apple GPU generations differ across hosts (m0: Apple M5 Max, m1: Apple M4 Pro)"
    )
    assert "MLX issue #4403" in got.summary and got.evidence["generations"] == {"m0": 5, "m1": 4}
    # one generation, an MLX before 0.32.2, or the ring backend: nothing to say
    same = _facts(1, **over, **{"platform.chip": "Apple M5 Pro"})
    assert "MD403" not in _run(_view(copy.deepcopy(f0), same))
    old = {"mlx.version": "0.32.1"}
    o0 = _facts(0, **old, **{"platform.chip": "Apple M5 Max"})
    o1 = _facts(1, **old, **{"platform.chip": "Apple M4 Pro"})
    assert "MD403" not in _run(_view(o0, o1))
    assert "MD403" not in _run(_view(copy.deepcopy(f0), copy.deepcopy(f1), backend="ring"))
