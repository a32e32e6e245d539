"""The soak policy (meshdoctor/probe/soak.py): when a hang is counted, where a relaunch goes on,
when the soak stops, and its figures; on launch outcomes written as the launcher records them.
The real soak over MLX ranks: tests/cli/test_probe.py::test_soak_counts_a_hang_and_goes_on."""

from __future__ import annotations

from meshdoctor.probe import soak
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.events import RankState
from meshdoctor.probe.launcher import base_plan
from meshdoctor.probe.outcome import LaunchOutcome


def _cfg(soak_n=8, ops=("all_sum", "all_gather")):
    return ProbeConfig(hostfile=local_hostfile(2), ops=list(ops), size=4096, soak=soak_n)


def _hung(step, kind="hang", unkillable=()):
    out = LaunchOutcome(kind, "md-probe-s", [RankState(0, "localhost")], {}, 2.0)
    out.hang = {"step": step}
    out.unkillable = list(unkillable)
    return out


def test_only_a_hang_inside_a_soak_repetition_counts():
    cfg = _cfg()
    step = {"op": "all_sum", "phase": "soak", "iter": 3, "seq": 12}
    assert soak.soak_hang(cfg, _hung(step)) == step
    assert soak.soak_hang(_cfg(soak_n=0), _hung(step)) is None  # no soak
    assert soak.soak_hang(cfg, _hung(dict(step, phase="warmup"))) is None
    assert soak.soak_hang(cfg, _hung(step, kind="dead")) is None
    assert soak.soak_hang(cfg, _hung(step, unkillable=[{"pid": 5}])) is None  # would meet it


def test_the_relaunch_goes_on_from_the_next_repetition():
    cfg = _cfg()
    plan = dict(base_plan(cfg), pairs=[[0, 1]])
    nxt = soak.next_plan(cfg, plan, {"op": "all_sum", "phase": "soak", "iter": 3}, 1)
    assert nxt["ops"] == ["all_sum", "all_gather"] and nxt["start"] == {"all_sum": 4}
    assert nxt["pairs"] == [] and nxt["size"] == plan["size"]
    # a hang in the barrier before all_gather #5: all_sum is done, all_gather goes on at 6
    barrier = {"op": "barrier", "before": "all_gather", "phase": "soak", "iter": 5}
    assert soak.next_plan(cfg, nxt, barrier, 2)["ops"] == ["all_gather"]
    assert soak.next_plan(cfg, nxt, barrier, 2)["start"] == {"all_gather": 6}


def test_a_hang_in_the_last_repetition_moves_to_the_next_op_or_stops():
    cfg = _cfg()
    plan = base_plan(cfg)
    last = {"op": "all_sum", "phase": "soak", "iter": 7}
    nxt = soak.next_plan(cfg, plan, last, 1)
    assert nxt["ops"] == ["all_gather"] and nxt["start"] == {}
    assert soak.next_plan(cfg, nxt, dict(last, op="all_gather"), 2) is None


def test_the_soak_stops_after_max_hangs():
    cfg = _cfg()
    step = {"op": "all_sum", "phase": "soak", "iter": 0}
    assert soak.next_plan(cfg, base_plan(cfg), step, soak.MAX_SOAK_HANGS - 1) is not None
    assert soak.next_plan(cfg, base_plan(cfg), step, soak.MAX_SOAK_HANGS) is None


def test_figures_count_calls_every_rank_completed_over_all_launches():
    cfg = _cfg(soak_n=8, ops=["all_sum"])

    def launch(done0, done1):
        ranks = [RankState(0, "localhost"), RankState(1, "localhost")]
        ranks[0].completed = {"all_sum/soak": done0, "barrier/soak": 9}
        ranks[1].completed = {"all_sum/soak": done1}
        return LaunchOutcome("ok", "md-probe-s", ranks, {}, 2.0)

    hangs = [{"op": "barrier", "before": "all_sum", "phase": "soak", "iter": 3, "launch": 0}]
    f = soak.figures(cfg, [launch(3, 4), launch(4, 4)], hangs)
    assert f == {
        "repetitions": 8,
        "calls": 8,  # 3 + 4 completed by every rank, plus the hang
        "completed": 7,
        "hangs": 1,
        "hang_rate": 0.125,
        "hang_steps": hangs,
        "relaunches": 1,
    }
    assert soak.figures(cfg, [launch(0, 0)], [])["hang_rate"] == 0.0
