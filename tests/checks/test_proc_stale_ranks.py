"""MD301 with real processes: a stray rank turns the verdict to no-go; gone, it is go again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from meshdoctor.ranks import find_ranks
from tests.helpers import run_cli


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
        # the escalation in the prose is a command to paste, with the real pid
        assert f"`kill -KILL {plain}`" in got[plain]["remediation"]["text"]
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


def test_an_exported_mlx_rank_does_not_make_the_doctor_its_own_stale_rank(clean_env, tmp_path):
    # a slow tool a check runs (ibv_devinfo, and the sleep it forks) inherits MLX_RANK=0 from
    # the shell while MD301 walks the process table; any of them listed is a false finding
    # (other ranks on the machine may be listed: they are not this test's business)
    stub = tmp_path / "ibv_devinfo"
    stub.write_text("#!/bin/sh\nsleep 0.317\necho 'No IB devices found'\n")
    stub.chmod(0o755)
    env = dict(
        clean_env,
        MLX_RANK="0",
        PATH=f"{tmp_path}:{clean_env.get('PATH', '')}",
        MESHDOCTOR_PLATFORM="linux",
        MESHDOCTOR_SYSTEM_PYTHON="",
    )  # the stub, not pyverbs
    false_findings = []
    for _ in range(50):
        r = run_cli("check", "--json", "--only", "MD201,MD301", env=env)
        false_findings += [
            x["summary"]
            for x in r.results("MD301")
            if str(tmp_path) in x["evidence"].get("cmdline", "")
            or x["evidence"].get("cmdline") == "sleep 0.317"
            or "-m meshdoctor check --json --only MD201,MD301" in x["evidence"].get("cmdline", "")
        ]
        assert "No IB devices found" in r.results("MD201")[0]["summary"]  # the tool did run
    assert not false_findings, false_findings
