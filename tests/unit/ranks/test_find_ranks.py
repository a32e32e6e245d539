"""meshdoctor.ranks with real processes: what is a rank, and never meshdoctor itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from meshdoctor.ranks import find_ranks, protected_pids


def test_a_command_meshdoctor_runs_is_never_a_rank_whatever_its_parentage(clean_env):
    # a marked process re-parented away from meshdoctor (setsid + the shell exits) carries
    # MLX_RANK; it is left out while the marking process lives, listed once that has died
    from meshdoctor import execute
    from meshdoctor.ranks import find_ranks

    env = dict(clean_env, MLX_RANK="5")
    res = execute.run(
        ["bash", "-c", "setsid sleep 60 >/dev/null 2>&1 < /dev/null & echo $!"], env=env, timeout=10
    )
    pid = int(res.stdout.strip())
    try:
        import psutil

        proc = psutil.Process(pid)
        for _ in range(500):  # `$!` may name it before setsid has exec'd sleep: wait for that
            if proc.cmdline()[:1] == ["sleep"]:
                break
            time.sleep(0.01)
        assert proc.environ()[execute.PARENT_MARKER_ENV] == str(os.getpid())
        assert proc.ppid() != os.getpid()
        assert pid not in {r.pid for r in find_ranks()}
        # marked by a meshdoctor that is gone (a pid above any pid_max): a rank like any other
        p = subprocess.Popen(
            ["sleep", "60"],
            env=dict(clean_env, MLX_RANK="6", **{execute.PARENT_MARKER_ENV: "999999999"}),
        )
        try:  # Popen returns once sleep has exec'd: its environment is readable now
            assert p.pid in {r.pid for r in find_ranks()}
        finally:
            p.kill()
            p.wait()
    finally:
        os.kill(pid, signal.SIGKILL)


def _launch_script(local: bool) -> str:
    """The script mlx.launch 0.32.4 writes for rank 2 (RemoteProcess.make_launch_script)."""
    from mlx._distributed_utils.launch import RemoteProcess

    return RemoteProcess.make_launch_script(
        2, sys.executable, None, {"MLX_HOSTFILE": '{"a": 1}'}, ["A=b c"], ["t.py", "x"], local
    )


def test_jaccl_rank_and_probe_marker_and_launch_script_are_identified(stray):
    a = stray({"JACCL_RANK": "0"})
    b = stray({"MESHDOCTOR_PROBE_ID": "run-xyz"})
    # the ssh client mlx.launch runs for a remote rank (argv as ssh's; a sleeping python)
    ssh_argv = ["ssh", "-tt", "-o", "LogLevel=QUIET", "h1", _launch_script(False)]
    c = stray(
        {},
        ["bash", "-c", f'exec -a ssh {sys.executable} -c "import time; time.sleep(120)" "$@"', "-"]
        + ssh_argv[1:],
    )
    # words are not a rank: a shell that only names the text (its child carries MLX_RANK)
    d = stray({}, ["bash", "-c", "export MLX_RANK=2; sleep 120; true"])
    for _ in range(100):
        found = {r.pid: r for r in find_ranks()}
        if c.pid in found and any(r.ppid == d.pid for r in found.values()):
            break
        time.sleep(0.05)
    assert a.pid in found and found[a.pid].rank == "0"
    assert b.pid in found and found[b.pid].marker == "run-xyz"
    assert c.pid in found and found[c.pid].reason == "mlx.launch's wrapper of rank 2"
    assert d.pid not in found
    [child] = [r for r in found.values() if r.ppid == d.pid]
    assert child.reason == "environment has MLX_RANK=2"
    assert [r.pid for r in find_ranks(marker="run-xyz")] == [b.pid]


def test_the_launcher_shape_is_the_whole_script_never_words_in_an_argument():
    from meshdoctor.ranks import launcher_rank

    for local in (True, False):
        script = _launch_script(local)
        assert launcher_rank(["/bin/bash", "-c", script]) == "2"
        assert launcher_rank(["ssh", "-tt", "-o", "LogLevel=QUIET", "h", script]) == "2"
        for reader in (["tail", "-f"], ["grep", "-r"], ["less"], ["vim"], ["bash", "-c"]):
            assert launcher_rank(reader + [script + " "]) is None
            assert launcher_rank(reader + ["export MLX_RANK=0", "f"]) is None
        assert launcher_rank(["bash", "-c", "echo x; " + script]) is None


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
