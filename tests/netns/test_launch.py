"""meshdoctor launch across real hosts: network namespaces, each with its own sshd (tests/netns/),
the job started by the real mlx.launch over ``ssh -tt`` exactly as on a cluster.

mlx.launch runs plain ``ssh`` from PATH: an ``ssh`` first on PATH adds the bed's config
(``-F``, ``BatchMode``) and runs the real client. The gate is skipped (``--no-check``): the hosts
share this machine's processes, so the gate's stale-rank check would see every other job on it
(the gate itself is tested on loopback, tests/cli/test_launch.py).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests import netns
from tests.helpers import validate

pytest.importorskip("mlx.core")
why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

JOB = r"""
import os, signal, sys, time
sys.stderr.write("rank starting\n")  # output before the (silent) group formation
sys.stderr.flush()
import mlx.core as mx
g = mx.distributed.init()
r = g.rank()
sys.stderr.write(f"rank {r} joined\n")
sys.stderr.flush()
fail = os.environ.get("JOB_FAIL", "")
for step in range(4):
    mx.eval(mx.distributed.all_sum(mx.ones(4), group=g))
    sys.stderr.write(f"rank {r} step {step}\n")
    sys.stderr.flush()
    if step == 1 and r == 1 and fail == "exit7":
        os._exit(7)
    if step == 1 and r == 1 and fail == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.2)
"""


@pytest.fixture
def bed():
    with netns.TestBed(3) as tb:
        tb.job = tb.dir / f"launch-job-{tb.tag}.py"
        tb.job.write_text(JOB)
        bin_dir = tb.dir / "bin"
        bin_dir.mkdir()
        ssh = shutil.which("ssh")
        (bin_dir / "ssh").write_text(
            f'#!/bin/sh\nexec {ssh} -F {shlex.quote(str(tb.ssh_config))} -o BatchMode=yes "$@"\n'
        )
        (bin_dir / "ssh").chmod(0o755)
        hf = tb.dir / "hosts.json"
        hf.write_text(
            json.dumps(
                {"backend": "ring", "hosts": [{"ssh": h, "ips": [tb.ips[h]]} for h in tb.hosts]}
            )
        )
        tb.hostfile = hf
        tb.env = dict(
            os.environ,
            PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config),
            MESHDOCTOR_REMOTE_PYTHON=sys.executable,
        )
        yield tb
        for h in tb.hosts:  # no rank of the job is left on any host
            ps = tb.ssh(h, "ps -eo args=").stdout
            assert str(tb.job) not in ps, ps


def _launch(bed, *opts, fail=""):
    """``launch`` with JOB_FAIL=``fail`` on every rank (through the hostfile's ``envs``: ssh
    passes no environment); its process and its schema-checked verdict."""
    hf = json.loads(bed.hostfile.read_text())
    hf["envs"] = [f"JOB_FAIL={fail}"]
    bed.hostfile.write_text(json.dumps(hf))
    verdict = bed.dir / "verdict.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "meshdoctor",
            "launch",
            "--no-check",
            "--hostfile",
            str(bed.hostfile),
            "--json",
            str(verdict),
            *opts,
            "--",
            sys.executable,
            str(bed.job),
        ],
        env=bed.env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    doc = json.loads(verdict.read_text())
    validate(doc)
    return p, doc


def test_a_remote_rank_exiting_7_makes_launch_exit_7_naming_its_host(bed):
    p, doc = _launch(bed, fail="exit7")
    assert p.returncode == 7, p.stderr[-3000:]
    assert "meshdoctor: rank 1 (h1) failed first: mlx.launch reported exit code 7" in p.stderr
    assert doc["launch"]["job"]["first_failed_rank"] == 1


def test_a_stopped_remote_rank_with_hang_after_gets_every_stack_over_ssh(bed):
    p, doc = _launch(bed, "--hang-after", "5s", fail="stop")
    assert p.returncode != 0, p.stderr[-3000:]
    stacks = {s["rank"]: s for s in doc["launch"]["stacks"]}
    assert set(stacks) == {0, 1, 2}, (doc["launch"]["stacks"], p.stderr[-3000:])
    assert [stacks[r]["host"] for r in (0, 1, 2)] == ["h0", "h1", "h2"]
    assert stacks[1]["state"] == "stopped"
    assert "rank 1 stopped (SIGSTOP)" in p.stderr
    for s in stacks.values():
        assert s["python"] and bed.job.name in s["python"], s
