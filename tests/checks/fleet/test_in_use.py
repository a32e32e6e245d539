"""MD411 (fleet.in_use) on merged facts: a running job's ranks on any host, in one line."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def _running(pid, rank, launcher_pid):
    return {
        "code": "MD301",
        "status": "warn",
        "summary": "rank of a running job",
        "evidence": {
            "pid": pid,
            "rank": rank,
            "running_job": {"launcher_pid": launcher_pid, "launcher": "mlx.launch"},
        },
    }


def test_a_running_job_on_two_hosts_is_one_line_naming_them():
    view = _view(_facts(0), _facts(1))
    view.hosts["m0"].results = [_running(100, 0, 90)]
    view.hosts["m1"].results = [_running(300, 1, 290)]
    got = _run(view)["MD411"]
    assert got.status == "warn" and "\n" not in got.summary
    assert got.summary.startswith("the mesh is in use: a running job has 2 rank(s) on 2 host(s)")
    assert "m0 (rank 0 pid 100, launched by pid 90 mlx.launch)" in got.summary
    assert "m1 (rank 1 pid 300" in got.summary and got.evidence["hosts"] == ["m0", "m1"]


def test_a_stale_rank_is_not_a_running_job():
    view = _view(_facts(0), _facts(1))
    view.hosts["m1"].results = [{"code": "MD301", "status": "fail", "summary": "stale"}]
    got = {r.code: r for r in _run(view)["all"]}["MD411"]
    assert got.status == "ok" and got.summary == "no running job on 2 host(s)"
