"""meshdoctor.probe.report: a deadline shorter than the collective blames no rank."""

from __future__ import annotations

import pytest


def test_a_deadline_shorter_than_the_collective_blames_no_rank():
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(
        hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1, cpus=8
    )
    step = {"op": "all_sum", "phase": "warmup", "iter": 0, "seq": 3}
    ranks = [RankState(r, "localhost", True) for r in range(2)]
    out = LaunchOutcome("hang", "run", ranks, {}, 0.1, None, started_at=0.0)
    out.hang = {
        "step": step,
        "not_arrived": [],
        "no_heartbeat": [],
        "waiting": [dict(step, rank=r, host="localhost", waited_s=0.12) for r in range(2)],
    }
    res = _hang_result(cfg, out)
    assert res.summary.startswith("all 2 ranks entered all_sum #0")
    assert "none left within the 0.1 s deadline (--timeout 0.1)" in res.summary
    assert "the deadline sized for 256MiB would be 23.5 s" in res.summary
    assert "never arrived" not in res.summary + res.remediation.text
    assert "probe again without --timeout" in res.remediation.text
    assert res.host == "mesh" and res.evidence["auto_deadline_s"] == pytest.approx(23.52, 0.01)


def test_a_short_deadline_blames_no_rank_that_was_still_on_its_way():
    """Under load one rank may not have reached the step when a 0.1 s --timeout passes: it is
    late, not faulty (its heartbeat is fresh), so no rank is blamed."""
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(
        hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1, cpus=8
    )
    step = {"op": "all_sum", "phase": "warmup", "iter": 0, "seq": 3}
    ranks = [RankState(r, "localhost", True) for r in range(2)]
    out = LaunchOutcome("hang", "run", ranks, {}, 0.1, None, started_at=0.0)
    out.hang = {
        "step": step,
        "not_arrived": [dict(step, rank=1, host="localhost")],
        "no_heartbeat": [],
        "waiting": [dict(step, rank=0, host="localhost", waited_s=0.12)],
    }
    res = _hang_result(cfg, out)
    assert res.host == "mesh" and "not yet arrived: rank 1" in res.summary, res.summary
    assert "the deadline sized for 256MiB would be 23.5 s" in res.summary
    assert "never arrived" not in res.summary + res.remediation.text
    assert "probe again without --timeout" in res.remediation.text


def test_a_leftover_on_a_remote_host_is_killed_with_a_remote_command():
    """Pasted on the operator's machine, `kill -9 332` would signal an unrelated local pid: a
    leftover found on h1 gets `ssh h1 'kill -9 332'`; one found here keeps the plain kill."""
    from meshdoctor.probe.report.leftovers import _survivor_result

    far = _survivor_result({"host": "h1", "local": False, "pid": 332, "status": "R"}, False)
    here = _survivor_result({"host": "localhost", "local": True, "pid": 332}, False)
    assert far.remediation.command == "ssh h1 'kill -9 332'"
    assert here.remediation.command == "kill -9 332"


def _all_inside_hang(cfg, mlx_version):
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome

    step = {"op": "all_sum", "phase": "timed", "iter": 2, "seq": 7}
    ranks = [RankState(r, "localhost", True) for r in range(cfg.world_size)]
    for st in ranks:
        st.ready = {"ev": "ready", "mlx": mlx_version}
    out = LaunchOutcome("hang", "run", ranks, {}, 12.0, None, started_at=0.0)
    out.hang = {
        "step": step,
        "not_arrived": [],
        "no_heartbeat": [],
        "waiting": [
            dict(step, rank=r, host="localhost", waited_s=12.5) for r in range(cfg.world_size)
        ],
    }
    return out


def test_a_hang_is_put_down_to_the_ring_deadlock_only_on_an_mlx_that_has_it():
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(3), ops=["all_sum"], size=4096, cpus=8)
    old = _hang_result(cfg, _all_inside_hang(cfg, "0.32.2")).remediation.text
    assert "CPU-stream all_sum deadlock" in old and "known in mlx 0.32.2 (MLX #4475" in old
    new = _hang_result(cfg, _all_inside_hang(cfg, "0.32.4")).remediation.text
    assert "deadlock" not in new and "0.32.2" not in new and "#4475" not in new, new
    assert "--soak" in new


def test_an_oversubscribed_hang_names_the_oversubscription_not_a_defect():
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(6), ops=["all_sum"], size=4096, cpus=2)
    text = _hang_result(cfg, _all_inside_hang(cfg, "0.32.4")).remediation.text
    assert "6 ranks share this host's 2 CPUs (oversubscribed)" in text, text
    assert "deadlock" not in text and "0.32.2" not in text


def test_known_hang_defects_by_version():
    from meshdoctor.mlx.defects import RING_ALL_SUM_HANG as D, hang_defects, hang_note

    assert D.has("0.32.2") and D.has("0.32.2.dev20260901")
    assert not D.has("0.32.1") and not D.has("0.32.4") and not D.has("") and not D.has("x")
    assert hang_defects("ring", ["0.32.4", "0.32.2"]) == [(D, ["0.32.2"])]
    assert hang_defects("jaccl", ["0.32.2"]) == [] and hang_note("ring", ["0.32.4"]) == ""


def test_a_stopped_rank_in_init_outranks_a_peer_that_only_lost_it():
    """CI under two CPU burners: rank 1 was stopped in init, rank 2 failed first with the ring's
    'connection to a peer was lost' (an echo); the group result names rank 1 from the hang
    report, not rank 2."""
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.culprits import culprits
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _group_failed
    from meshdoctor.probe.report.view import LaunchView

    cfg = ProbeConfig(hostfile=local_hostfile(3), ops=["all_sum"], size=64 << 10, cpus=8)
    ranks = [RankState(r, "127.0.0.1", True) for r in range(3)]
    ranks[2].errors.append(
        {"type": "RuntimeError", "message": "[ring] connection to a peer was lost"}
    )
    out = LaunchOutcome("init", "run", ranks, {}, 1.0, None, started_at=0.0)
    out.failure = {"rank": 2, "type": "RuntimeError"}
    out.early_exits = {2: 1}
    step = {"op": "init", "phase": "init", "iter": 0, "seq": 1}
    out.hang = {
        "step": step,
        "not_arrived": [dict(step, rank=1, host="127.0.0.1")],
        "no_heartbeat": [{"rank": 1, "silent_s": 3.0, "state": "stopped"}],
        "waiting": [],
    }
    lead = culprits(out)
    assert [s.rank for s in lead] == [2]  # the tracker's first failure, an echo
    view = LaunchView(
        cfg=cfg, out=out, formed=False, lead=lead, first_host="127.0.0.1", detect_s=1.0
    )
    res = _group_failed(view)
    assert res.summary.startswith("group formation (ring, 3 ranks) did not finish"), res.summary
    assert "rank 1 (process stopped" in res.summary and res.evidence["ranks"] == [1]


def test_a_stopped_rank_outranks_a_neighbour_that_could_not_connect_to_it():
    """Rank 2 was stopped before it listened; rank 1 failed after the ring's connect retries
    with "Couldn't connect" (MD621). The stopped process is a fact: the group result names
    rank 2, not the neighbour that waited for it."""
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.culprits import culprits
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _group_failed
    from meshdoctor.probe.report.view import LaunchView

    cfg = ProbeConfig(hostfile=local_hostfile(3), ops=["all_sum"], size=64 << 10, cpus=8)
    ranks = [RankState(r, "127.0.0.1", True) for r in range(3)]
    ranks[1].errors.append(
        {"type": "RuntimeError", "message": "[ring] Couldn't connect (error: 111)"}
    )
    out = LaunchOutcome("init", "run", ranks, {}, 1.0, None, started_at=0.0)
    out.failure = {"rank": 1, "type": "RuntimeError"}
    out.early_exits = {1: 1}
    out.hang = {
        "step": {"op": "init", "phase": "init", "iter": 0, "seq": 1},
        "not_arrived": [{"rank": r, "host": "127.0.0.1"} for r in (0, 2)],
        "no_heartbeat": [
            {"rank": 0, "silent_s": 31.0, "state": "sleeping"},
            {"rank": 2, "silent_s": 31.0, "state": "stopped"},
        ],
        "waiting": [],
    }
    view = LaunchView(
        cfg=cfg, out=out, formed=False, lead=culprits(out), first_host="127.0.0.1", detect_s=1.0
    )
    res = _group_failed(view)
    assert "never arrived: rank 2 (process stopped" in res.summary, res.summary
    assert res.evidence["ranks"] == [2] and "Couldn't connect" not in res.summary, res.summary
