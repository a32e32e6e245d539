"""meshdoctor triage --running: the stacks of the ranks of a job started with plain mlx.launch
(not through meshdoctor launch), 3 ring ranks over loopback, one of them stopped (SIGSTOP).

The job and meshdoctor run in private network and PID namespaces (``unshare``, as root): the
ranks found are this test's only, and the namespace's end stops every one of them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from tests.helpers import validate

pytest.importorskip("mlx.core")

NS = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
JOB = r"""
import os, signal, time
import mlx.core as mx
g = mx.distributed.init()
r = g.rank()
for step in range(100000):
    mx.eval(mx.distributed.all_sum(mx.ones(4), group=g))
    if step == 0:
        open(os.path.join(os.environ["JOB_DIR"], f"started-{r}"), "w").close()
    if step == 1 and r == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.1)
"""


def _can_unshare() -> bool:
    try:
        p = subprocess.run(NS + ["sh", "-c", "ip link set lo up"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0


@pytest.mark.skipif(
    os.geteuid() != 0 or not _can_unshare(),
    reason="needs root with unshare and ip (private network and PID namespaces)",
)
def test_running_shows_every_ranks_stack_and_names_the_stopped_one(tmp_path, clean_env):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    hosts = tmp_path / "hosts.json"
    entry = {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}
    hosts.write_text(json.dumps({"backend": "ring", "hosts": [entry] * 3}))
    out = tmp_path / "out.json"
    py = shlex.quote(sys.executable)
    launcher = shlex.quote(os.path.join(os.path.dirname(sys.executable), "mlx.launch"))
    d = shlex.quote(str(tmp_path))
    script = (
        "ip link set lo up || exit 97\n"
        f"{launcher} --hostfile {shlex.quote(str(hosts))} -- {py} {shlex.quote(str(job))} &\n"
        f"i=0; while [ $i -lt 1200 ] && [ $(ls {d} | grep -c started-) -lt 3 ]; do "
        "sleep 0.1; i=$((i+1)); done\n"
        "sleep 1\n"
        f"{py} -m meshdoctor triage --running --hostfile {shlex.quote(str(hosts))} --json "
        f"> {shlex.quote(str(out))}\n"
        "rc=$?\n"
        "exit $rc\n"
    )
    env = dict(clean_env, JOB_DIR=str(tmp_path))
    p = subprocess.run(
        NS + ["sh", "-c", script],
        env=env,
        capture_output=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[-3000:]
    doc = json.loads(out.read_text())
    validate(doc)
    by_rank = {r["evidence"]["rank"]: r for r in doc["results"]}
    assert set(by_rank) == {0, 1, 2}, doc["results"]
    assert by_rank[1]["status"] == "warn" and "stopped" in by_rank[1]["summary"]
    for r in (0, 2):
        assert by_rank[r]["status"] == "ok"
        assert "job.py" in (by_rank[r]["evidence"]["python"] or ""), by_rank[r]
    running = doc["triage"]["running"]
    assert sum(len(v) for v in running.values()) == 3
    # the ranks' stacks read together (the reading launch --hang-after gives too): the stopped
    # rank is why the others wait, not an order of the program
    order = doc["triage"]["order"]
    assert not order["mismatch"] and order["summary"].startswith("rank 1 on "), order
    assert "stopped (SIGSTOP or SIGTSTP)" in order["summary"]
    assert not [r for r in doc["results"] if r["code"] == "MD891"]
