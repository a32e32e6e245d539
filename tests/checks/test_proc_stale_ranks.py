"""MD301 with real processes: a stray rank turns the verdict to no-go; gone, it is go again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from meshdoctor.ranks import find_ranks, protected_pids
from tests.helpers import run_cli


def _spawn(env_extra, args=None):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen(
        args or [sys.executable, "-c", "import time; time.sleep(120)"],
        env=env,
        start_new_session=True,
    )
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


def test_rank_of_a_running_job_warns_and_suggests_no_kill(stray, clean_env):
    p = stray({"MLX_RANK": "1"})  # its parent (this test) is alive: a job in progress
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
    mine = _ours(r, p.pid)
    assert mine and mine[0]["status"] == "warn", mine
    assert mine[0]["summary"].startswith("rank of a running job")
    assert "kill" not in mine[0]["remediation"].get("command", "")
    ev = mine[0]["evidence"]
    assert ev["rank"] == "1" and ev["status"] in ("sleeping", "running")
    assert "MLX_RANK=1" in ev["reason"]
    p.kill()
    p.wait(timeout=10)
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
    assert not _ours(r, p.pid)


def _orphan(shell_cmd):
    """Start ``shell_cmd`` in its own session from a shell that exits at once (its parent
    becomes pid 1); returns the pid."""
    out = subprocess.run(
        ["bash", "-c", f"{shell_cmd} >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    pid = int(out.strip())
    for _ in range(100):  # wait until its environment is visible
        if any(x.pid == pid for x in find_ranks()):
            break
        time.sleep(0.05)
    return pid


def _kill_session(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_orphan_fails_and_one_that_ignores_sigterm_gets_kill_minus_kill(clean_env):
    plain = _orphan("MLX_RANK=1 setsid sleep 120")
    deaf = _orphan(
        f"MLX_RANK=2 setsid {sys.executable} -c 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)'"
    )
    try:
        r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
        got = {
            x["evidence"]["pid"]: x
            for x in r.results("MD301")
            if x["evidence"].get("pid") in (plain, deaf)
        }
        if got[deaf]["evidence"]["ppid"] != 1:
            pytest.skip("a subreaper adopts orphans here: they read as a running job")
        assert r.rc == 1
        assert got[plain]["status"] == "fail" and got[deaf]["status"] == "fail"
        assert got[plain]["summary"].startswith("stale rank (orphaned")
        assert got[plain]["remediation"]["command"] == f"kill {plain}"
        assert got[deaf]["evidence"]["sigterm"] == "ignored"
        assert got[deaf]["remediation"]["command"] == f"kill -KILL {deaf}"
        assert "does not act on SIGTERM" in got[deaf]["remediation"]["text"]
    finally:
        _kill_session(plain)
        _kill_session(deaf)


def test_a_wrapper_carrying_mlx_rank_is_grouped_with_the_rank_it_runs(clean_env):
    wrapper = _orphan("MLX_RANK=3 setsid timeout 120 sleep 120")
    try:
        for _ in range(100):  # wait for timeout's child
            inner = [x for x in find_ranks() if x.ppid == wrapper]
            if inner:
                break
            time.sleep(0.05)
        rank = inner[0].pid
        r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
        mine = [x for x in r.results("MD301") if x["evidence"].get("pid") in (wrapper, rank)]
        assert len(mine) == 1, mine  # one rank, not two
        assert mine[0]["evidence"]["pid"] == rank
        assert [w["pid"] for w in mine[0]["evidence"]["wrappers"]] == [wrapper]
        assert f"run by pid {wrapper} (timeout)" in mine[0]["summary"]
        if mine[0]["status"] == "fail":  # orphaned: both pids in the one command
            assert mine[0]["remediation"]["command"] == f"kill {rank} {wrapper}"
    finally:
        _kill_session(wrapper)


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
    code = (
        "import json, os; from meshdoctor.ranks import find_ranks; "
        "print(json.dumps([r.pid for r in find_ranks()] + [-os.getpid(), -os.getppid()]))"
    )
    p = subprocess.run(
        ["bash", "-c", f'{sys.executable} -c "{code}"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
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
    out = subprocess.run(
        ["bash", "-c", "MLX_RANK=1 setsid sleep 120 >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    orphan = int(out.strip())
    try:
        time.sleep(0.3)
        r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
        got = {
            x["evidence"]["pid"]: x
            for x in r.results("MD301")
            if x["evidence"].get("pid") in (live.pid, orphan)
        }
        assert got[live.pid]["summary"].startswith("rank of a running job")
        assert got[live.pid]["status"] == "warn"
        assert got[live.pid]["evidence"]["orphaned"] is False
        if got[orphan]["evidence"]["ppid"] == 1:  # no subreaper between us and init
            assert got[orphan]["summary"].startswith("stale rank (orphaned")
    finally:
        os.kill(orphan, signal.SIGKILL)
