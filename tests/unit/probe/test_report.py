"""meshdoctor.probe.report: a deadline shorter than the collective blames no rank."""

from __future__ import annotations

import pytest


def test_a_deadline_shorter_than_the_collective_blames_no_rank():
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1)
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
    assert "the deadline sized for 256MiB would be 23.4 s" in res.summary
    assert "never arrived" not in res.summary + res.remediation.text
    assert "probe again without --timeout" in res.remediation.text
    assert res.host == "mesh" and res.evidence["auto_deadline_s"] == pytest.approx(23.4, 0.01)


def test_a_short_deadline_blames_no_rank_that_was_still_on_its_way():
    """Under load one rank may not have reached the step when a 0.1 s --timeout passes: it is
    late, not faulty (its heartbeat is fresh), so no rank is blamed."""
    from meshdoctor.probe.config import ProbeConfig, local_hostfile
    from meshdoctor.probe.events import RankState
    from meshdoctor.probe.outcome import LaunchOutcome
    from meshdoctor.probe.report.outcomes import _hang_result

    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=256 << 20, timeout=0.1)
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
    assert "the deadline sized for 256MiB would be 23.4 s" in res.summary
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
