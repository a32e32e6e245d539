"""``check --slurm-drain`` against the real Slurm bed: a planted stale rank drains the node with
a ``meshdoctor:`` reason, the node is resumed once the rank is gone, and an operator's own drain
is never undone nor overwritten."""

from __future__ import annotations

import pytest

from tests.fixes.test_stale_ranks import SLEEP, Procs
from tests.helpers import run_cli

CHECK = ("check", "--only", "MD301", "--slurm-drain")


@pytest.fixture
def procs(clean_env, bed):
    p = Procs(dict(clean_env, SLURM_CONF=bed.env["SLURM_CONF"]))
    yield p
    p.close()


@pytest.fixture(autouse=True)
def idle_node(bed):
    """Every test starts and ends with the node idle, whoever drained it."""
    bed.resume()
    yield
    bed.resume()


def test_stale_rank_drains_then_fix_resumes(bed, procs):
    procs.orphan(SLEEP, MLX_RANK="1")
    r = run_cli(*CHECK, env=procs.env)
    assert r.rc == 1, r.out + r.err
    info = bed.node_info()
    assert "DRAIN" in info["State"], (info, r.err)
    assert info["Reason"].startswith("meshdoctor: MD301 proc.stale_ranks "), info
    assert f"drained node {bed.node} in Slurm: meshdoctor: MD301" in r.err

    fixed = run_cli("fix", "stale-ranks", "--yes", env=procs.env)
    assert fixed.rc == 0, fixed.out + fixed.err
    # in a private PID namespace: only this test's (now gone) rank could have counted
    r = run_cli(*CHECK, env=procs.env, private_pids=True)
    assert r.rc == 0, r.out + r.err
    assert "DRAIN" not in bed.node_info()["State"], r.err
    assert f"resumed node {bed.node} in Slurm" in r.err


def test_operator_drain_untouched(bed, procs):
    bed.drain("ops: replacing the TB5 cable")
    r = run_cli(*CHECK, env=procs.env, private_pids=True)
    assert r.rc == 0, r.out + r.err
    info = bed.node_info()
    assert "DRAIN" in info["State"] and info["Reason"].startswith("ops: replacing"), info
    assert "is not meshdoctor's to undo" in r.err

    procs.orphan(SLEEP, MLX_RANK="0")
    r = run_cli(*CHECK, env=procs.env)
    assert r.rc == 1, r.out + r.err
    assert bed.node_info()["Reason"].startswith("ops: replacing"), r.err
    assert "already drained by someone else" in r.err
