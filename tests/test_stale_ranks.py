"""MD301 with real processes: a stray rank turns the verdict to no-go; gone, it is go again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from meshdoctor.ranks import find_ranks, protected_pids
from tests.conftest import run_cli


def _spawn(env_extra, args=None):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen(args or [sys.executable, "-c", "import time; time.sleep(120)"],
                         env=env, start_new_session=True)
    for _ in range(50):  # wait until its environment is visible
        if any(r.pid == p.pid for r in find_ranks()):
            break
        time.sleep(0.05)
    return p


@pytest.fixture
def stray():
    procs = []

    def make(env_extra, args=None):
        p = _spawn(env_extra, args)
        procs.append(p)
        return p

    yield make
    for p in procs:  # the whole session: a shell's children (sleep) must not outlive it
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=10)


def _ours(run, pid):
    return [r for r in run.results("MD301") if r["evidence"].get("pid") == pid]


def test_stray_rank_is_found_by_pid_and_fails(stray, clean_env):
    p = stray({"MLX_RANK": "1"})
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"
    mine = _ours(r, p.pid)
    assert mine and mine[0]["status"] == "fail"
    ev = mine[0]["evidence"]
    assert ev["rank"] == "1" and ev["status"] in ("sleeping", "running")
    assert "MLX_RANK=1" in ev["reason"]
    assert mine[0]["remediation"]["command"] == f"kill {p.pid}"
    p.kill()
    p.wait(timeout=10)
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
    assert not _ours(r, p.pid)


def test_jaccl_rank_and_probe_marker_and_launch_script_are_identified(stray):
    a = stray({"JACCL_RANK": "0"})
    b = stray({"MESHDOCTOR_PROBE_ID": "run-xyz"})
    c = stray({}, ["bash", "-c", "export MLX_RANK=2; sleep 120; true"])
    found = {r.pid: r for r in find_ranks()}
    assert a.pid in found and found[a.pid].rank == "0"
    assert b.pid in found and found[b.pid].marker == "run-xyz"
    assert c.pid in found and "rank script" in found[c.pid].reason
    assert [r.pid for r in find_ranks(marker="run-xyz")] == [b.pid]


def test_unrelated_process_is_not_a_rank(stray):
    p = stray({"NOT_A_RANK": "1"})
    assert p.pid not in {r.pid for r in find_ranks()}


def test_doctor_never_lists_itself_or_its_parents(clean_env):
    env = dict(clean_env, MLX_RANK="0")  # the shell that runs the doctor looks like a rank
    code = ("import json, os; from meshdoctor.ranks import find_ranks; "
            "print(json.dumps([r.pid for r in find_ranks()] + [-os.getpid(), -os.getppid()]))")
    p = subprocess.run(["bash", "-c", f'{sys.executable} -c "{code}"'], env=env,
                       capture_output=True, text=True, timeout=30)
    import json

    pids = json.loads(p.stdout)
    me, parent = -pids[-2], -pids[-1]
    assert me not in pids[:-2] and parent not in pids[:-2]
    assert 1 in protected_pids() and os.getpid() in protected_pids()


def test_stopped_rank_is_reported_with_its_state(stray, clean_env):
    p = stray({"MLX_RANK": "3"})
    os.kill(p.pid, signal.SIGSTOP)
    try:
        r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
        mine = _ours(r, p.pid)
        assert mine and mine[0]["evidence"]["status"] == "stopped"
        assert not mine[0].get("needs_reboot")  # SIGKILL still works on a stopped process
    finally:
        os.kill(p.pid, signal.SIGCONT)


def test_orphaned_rank_and_rank_of_a_running_job_are_told_apart(stray, clean_env):
    live = stray({"MLX_RANK": "0"})  # its parent (this test) is alive: a job in progress
    out = subprocess.run(["bash", "-c", "MLX_RANK=1 setsid sleep 120 >/dev/null 2>&1 & echo $!"],
                         capture_output=True, text=True, timeout=30).stdout
    orphan = int(out.strip())
    try:
        time.sleep(0.3)
        r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
        got = {x["evidence"]["pid"]: x for x in r.results("MD301")
               if x["evidence"].get("pid") in (live.pid, orphan)}
        assert got[live.pid]["summary"].startswith("rank of a job still running")
        assert got[live.pid]["evidence"]["orphaned"] is False
        if got[orphan]["evidence"]["ppid"] == 1:  # no subreaper between us and init
            assert got[orphan]["summary"].startswith("stale rank (orphaned")
    finally:
        os.kill(orphan, signal.SIGKILL)
