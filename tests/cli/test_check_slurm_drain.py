"""``check --slurm-drain`` usage errors, which need no Slurm (the drain itself:
tests/slurm/test_drain.py, against the real bed)."""

from __future__ import annotations

import os
import sys

from tests.helpers import run_cli

CHECK = ("check", "--only", "MD301", "--slurm-drain")


def test_without_scontrol_a_usage_error(clean_env):
    # PATH: only the interpreter's folder (the venv's bin), where no scontrol is
    r = run_cli(*CHECK, env=dict(clean_env, PATH=os.path.dirname(sys.executable)))
    assert r.rc == 2, r.out + r.err
    assert "--slurm-drain runs scontrol, which is not on PATH" in r.err


def test_not_in_fleet_mode(clean_env):
    r = run_cli("check", "--hosts", "a,b", "--slurm-drain", env=clean_env)
    assert r.rc == 2, r.out + r.err
    assert "add --local-only" in r.err
