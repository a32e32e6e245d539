"""MD407 (fleet.environment) on merged facts: the hostfile's envs and each host's shell."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_hostfile_envs_make_the_environment_agree_but_a_differing_shell_warns():
    f1 = _facts(1, env={})
    assert _run(_view(_facts(0), f1))["MD407"].status == "fail"
    got = _run(_view(_facts(0), _facts(1, env={}), envs=["MLX_METAL_FAST_SYNCH=1"]))
    assert "MD407" not in got
    got = _run(
        _view(
            _facts(0), _facts(1, env={"MLX_METAL_FAST_SYNCH": "0"}), envs=["MLX_METAL_FAST_SYNCH=1"]
        )
    )
    assert got["MD407"].status == "warn" and got["MD407"].host == "m1"


def test_a_metal_tuning_variable_that_differs_says_what_it_governs():
    f0 = _facts(0, env={"MLX_METAL_FAST_SYNCH": "1", "MLX_RESIDENCY_SET_MAX_PCT": "50"})
    got = _run(_view(f0, _facts(1)))
    f = got["MD407"]
    assert f.status == "warn" and f.summary.startswith("MLX_RESIDENCY_SET_MAX_PCT differs")
    assert "it sets the size of each Metal residency set" in f.summary
