"""``probe --launcher env``: three real ranks over loopback started by the test the way another
launcher would (MLX_RANK, MLX_HOSTFILE with the ring's "ip:port" per rank, MLX_WORLD_SIZE); rank 0
prints the verdict, every other rank its part, and a dead or stopped rank is named by rank 0.
The srun launcher against a real Slurm: tests/slurm/test_probe_srun.py."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from typing import Dict, List

import pytest

from tests.helpers import run_cli, validate

BOUND_S = 240  # a verdict at all within this; never a latency budget


def free_run(n: int) -> int:
    """A first port P with P..P+n all free on 127.0.0.1 (outside Linux's ephemeral range, where
    the OS hands out the ports other tests bind to port 0)."""
    for _ in range(200):
        base = random.randrange(20000, 32000 - n)
        socks = []
        try:
            for p in range(base, base + n + 1):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no run of free ports")


def start_ranks(env: Dict[str, str], args: List[str], n: int, tmp_path, **per_rank):
    """``n`` meshdoctor processes, each one rank as the env launcher's contract says."""
    base = free_run(n + 1)
    hostfile = tmp_path / "ring.json"
    hostfile.write_text(json.dumps([[f"127.0.0.1:{base + r}"] for r in range(n)]))
    procs = []
    for r in range(n):
        e = dict(env, MLX_RANK=str(r), MLX_WORLD_SIZE=str(n), MLX_HOSTFILE=str(hostfile))
        e.update(per_rank.get(f"rank{r}", {}))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "meshdoctor", "probe", "--launcher", "env", *args],
                env=e,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        )
    out = []
    try:
        for p in procs:
            o, e = p.communicate(timeout=BOUND_S)
            out.append((p.returncode, o, e))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait(timeout=10)
    return out


def test_three_ranks_go(clean_env, tmp_path):
    got = start_ranks(clean_env, ["--size", "1MiB", "--op", "all_sum", "--json"], 3, tmp_path)
    rc, out, err = got[0]
    assert rc == 0, err
    doc = json.loads(out)
    validate(doc)
    assert doc["verdict"] == "go"
    assert doc["probe"]["world_size"] == 3, doc["probe"]
    for r in (1, 2):
        rc, out, err = got[r]
        assert rc == 0, err
        assert out == ""  # with --json only rank 0 writes stdout: one document
        assert f"meshdoctor probe: rank {r} of 3 (127.0.0.1): done" in err


def test_quiet_ranks_say_nothing_when_done(clean_env, tmp_path):
    got = start_ranks(clean_env, ["--size", "64KiB", "--op", "all_sum", "--quiet"], 3, tmp_path)
    assert got[0][0] == 0, got[0][2]
    assert [(rc, out) for rc, out, _ in got[1:]] == [(0, ""), (0, "")]


def test_dead_rank_named(clean_env, tmp_path):
    got = start_ranks(
        dict(clean_env, MESHDOCTOR_PROBE_FAULT="kill:1:5"),
        ["--size", "1MiB", "--op", "all_sum"],
        3,
        tmp_path,
    )
    rc, out, err = got[0]
    assert rc == 1, out + err
    assert "MD502" in out and "rank 1 (127.0.0.1" in out and "SIGKILL" in out, out
    assert "rank 1 of 3 (127.0.0.1): ended by signal 9" in got[1][1]


def test_stopped_rank_named(clean_env, tmp_path):
    got = start_ranks(
        dict(clean_env, MESHDOCTOR_PROBE_FAULT="stop:2:5"),
        ["--size", "1MiB", "--op", "all_sum", "--timeout", "3"],
        3,
        tmp_path,
    )
    rc, out, err = got[0]
    assert rc == 1, out + err
    assert "MD503" in out and "never arrived: rank 2 (process stopped" in out, out
    assert "rank 2 of 3 (127.0.0.1):" in got[2][1]


@pytest.mark.parametrize(
    "env,words",
    [
        ({}, "MLX_RANK is not set"),
        ({"MLX_RANK": "0"}, "MLX_HOSTFILE is not set"),
        ({"MLX_RANK": "x"}, "MLX_RANK='x' is not a whole number"),
    ],
)
def test_launcher_env_missing(clean_env, env, words):
    r = run_cli("probe", "--launcher", "env", env=dict(clean_env, **env))
    assert r.rc == 2, r.out + r.err
    assert words in r.err


def test_world_size_disagrees(clean_env, tmp_path):
    hf = tmp_path / "ring.json"
    hf.write_text(json.dumps([["127.0.0.1:1"], ["127.0.0.1:2"]]))
    env = dict(clean_env, MLX_RANK="0", MLX_WORLD_SIZE="3", MLX_HOSTFILE=str(hf))
    r = run_cli("probe", "--launcher", "env", env=env)
    assert r.rc == 2, r.out + r.err
    assert "MLX_WORLD_SIZE=3 but MLX_HOSTFILE" in r.err


def test_launcher_and_hosts_both(clean_env):
    r = run_cli("probe", "--launcher", "srun", "-n", "2", env=clean_env)
    assert r.rc == 2
    assert "-n and --launcher both name the hosts" in r.err
