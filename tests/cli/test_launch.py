"""meshdoctor launch with the real mlx.launch and real MLX ranks over loopback (3 local ranks,
ring backend, a hostfile of 127.0.0.1 entries).

Each run is in private network and PID namespaces (``unshare``, as root): the ring ports, the
gate's stale-rank check and the ports check see only what the test planted, never another job
on the machine. After meshdoctor ends, the namespace's first shell lists the ranks still alive
there carrying this test's tag (``MESHDOCTOR_TEST_TAG``) before the namespace is torn down: the
test asserts that list is empty. No latency is asserted; each run is bounded generously.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import List, Optional

import psutil
import pytest

from tests.helpers import validate

pytest.importorskip("mlx.core")

TAG_ENV = "MESHDOCTOR_TEST_TAG"
RUN_S = 240  # a bound a loaded 2-core box meets for gate + 3 ranks, never a latency budget
NS = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]

# The job every rank runs: a few all_sum steps; JOB_FAIL chooses how rank R fails at step 1.
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
steps = int(os.environ.get("JOB_STEPS", "3"))
if r == 0:
    sys.stdout.buffer.write(os.environ["JOB_PAYLOAD"].encode())
    sys.stdout.flush()
for step in range(steps):
    if step == 1 and fail == f"skip{r}":
        time.sleep(600)  # this rank never enters step 1's all_sum: the others wait for it
    x = mx.distributed.all_sum(mx.ones(4) * (r + 1), group=g)
    mx.eval(x)
    sys.stderr.write(f"rank {r} step {step} sum {x[0].item():g}\n")
    sys.stderr.flush()
    if step == 0:
        open(os.path.join(os.environ["JOB_DIR"], f"started-{r}"), "w").close()
    if step == 1 and fail == f"exit{r}":
        os._exit(255)
    if step == 1 and fail == f"kill{r}":
        os.kill(os.getpid(), 9)
    if step == 1 and fail == f"stop{r}":
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.2)
"""

# After meshdoctor: the ranks carrying this test's tag still alive in the namespace.
AFTER = r"""
import json, sys, psutil
from meshdoctor.ranks import find_ranks
tag = sys.argv[1]
left = []
for r in find_ranks():
    try:
        if psutil.Process(r.pid).environ().get("MESHDOCTOR_TEST_TAG") == tag:
            left.append(r.to_dict())
    except psutil.Error:
        pass
json.dump(left, sys.stdout)
"""

PAYLOAD = "job output ✓ \x1b[1mbold\x1b[0m\ttab\r\ncarriage\n  spaces  \nno newline at the end"


def _can_unshare() -> bool:
    try:
        p = subprocess.run(NS + ["sh", "-c", "ip link set lo up"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not _can_unshare(),
    reason="needs root with unshare and ip (private network and PID namespaces)",
)


class Bed:
    """One test's files: the job, the hostfile, the verdict and the after-list."""

    def __init__(self, tmp: Path) -> None:
        self.dir = tmp
        self.tag = f"md-launch-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.job = tmp / "job.py"
        self.job.write_text(JOB)
        self.hostfile = tmp / "hosts.json"
        entry = {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}
        self.hostfile.write_text(json.dumps({"backend": "ring", "hosts": [entry] * 3}))
        self.verdict = tmp / "verdict.json"
        self.after = tmp / "after.json"
        (tmp / "tmp").mkdir()

    def env(self, clean_env, **extra) -> dict:
        env = dict(clean_env)
        env.update(
            {
                TAG_ENV: self.tag,
                "TMPDIR": str(self.dir / "tmp"),
                "JOB_DIR": str(self.dir),
                "JOB_PAYLOAD": PAYLOAD,
            }
        )
        env.update(extra)
        return env

    def script(self, args: List[str], plant: str = "") -> str:
        py = shlex.quote(sys.executable)
        cmd = " ".join(shlex.quote(a) for a in args)
        return (
            "ip link set lo up || exit 97\n"
            f"{plant}\n"
            f"{py} -m meshdoctor launch {cmd}\n"
            "rc=$?\n"
            f"{py} -c {shlex.quote(AFTER)} {shlex.quote(self.tag)} > {shlex.quote(str(self.after))}\n"
            "exit $rc\n"
        )

    def args(self, *opts: str) -> List[str]:
        return [
            "--hostfile",
            str(self.hostfile),
            "--json",
            str(self.verdict),
            *opts,
            "--",
            sys.executable,
            str(self.job),
        ]

    def left(self) -> list:
        return json.loads(self.after.read_text())

    def doc(self) -> dict:
        d = json.loads(self.verdict.read_text())
        validate(d)
        return d


def _run(bed: Bed, env: dict, args: List[str], plant: str = ""):
    return subprocess.run(
        NS + ["sh", "-c", bed.script(args, plant)],
        env=env,
        capture_output=True,
        timeout=RUN_S,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def bed(tmp_path):
    return Bed(tmp_path)


def _err(p) -> str:
    return p.stderr.decode("utf-8", "replace")[-4000:]


def test_a_healthy_job_exits_0_with_its_output_byte_for_byte(bed, clean_env):
    log = bed.dir / "job.log"
    p = _run(bed, bed.env(clean_env), bed.args("--log", str(log)))
    assert p.returncode == 0, _err(p)
    assert p.stdout == PAYLOAD.encode()  # the job's stdout, nothing of ours in it
    err = _err(p)
    assert "meshdoctor: gate: go" in err
    for r in range(3):
        assert f"rank {r} step 2 sum 6\n" in err  # the ranks' stderr passed through
    assert PAYLOAD.encode() in log.read_bytes() and b"rank 2 step 2 sum 6\n" in log.read_bytes()
    d = bed.doc()
    assert d["command"] == "launch" and d["verdict"] == "go"
    job = d["launch"]["job"]
    assert job["exit_status"] == 0 and job["outcome"] == "finished"
    assert [r["status"] for r in job["ranks"]] == ["completed"] * 3
    assert d["launch"]["gate"]["verdict"] == "go"
    assert bed.left() == []


def test_a_rank_exiting_255_makes_launch_exit_255_naming_it(bed, clean_env):
    p = _run(bed, bed.env(clean_env, JOB_FAIL="exit1"), bed.args("--fix"))
    assert p.returncode == 255, _err(p)
    err = _err(p)
    assert "meshdoctor: rank 1 (127.0.0.1) failed first" in err
    assert "Node with rank 1 exited with code 255" in err  # mlx.launch's own line passes
    assert "meshdoctor: first cause: MD6" in err
    d = bed.doc()
    assert d["launch"]["exit_status"] == 255 and d["launch"]["job"]["first_failed_rank"] == 1
    assert d["launch"]["job"]["launcher_exit_status"] == 0  # what mlx.launch alone said
    assert d["launch"]["triage"]["first_cause"]["code"].startswith("MD6")
    assert d["verdict"] == "no-go"
    # --fix: the survivors were already stopped, so stale-ranks finds nothing to plan
    assert "meshdoctor: fix stale-ranks: no rank of this job was left behind" in err
    assert d["launch"]["cleanup"]["fix"]["applied"] is False
    assert "meshdoctor: re-run with: meshdoctor launch --hostfile" in err
    assert bed.left() == []


def test_a_rank_killed_by_sigkill_makes_launch_exit_137(bed, clean_env):
    p = _run(bed, bed.env(clean_env, JOB_FAIL="kill2"), bed.args())
    assert p.returncode == 137, _err(p)
    assert "meshdoctor: rank 2 (127.0.0.1) failed first: mlx.launch reported exit code -9" in _err(
        p
    )
    d = bed.doc()
    assert d["launch"]["job"]["ranks"][2]["exit_status"] == 137
    assert bed.left() == []


STALE_RANK = (
    "( MLX_RANK=0 {py} -c 'import time; time.sleep(300)' & )\n"
    "i=0; while [ $i -lt 100 ] && ! pgrep -f 'time.sleep\\(300\\)' >/dev/null; do "
    "sleep 0.1; i=$((i+1)); done"
)
BUSY_PORT = (
    "{py} -c 'import socket, time; s = socket.socket(); "
    's.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 32324)); '
    "s.listen(); time.sleep(300)' &\n"
    "i=0; while [ $i -lt 100 ] && ! {py} -c 'import socket; socket.create_connection("
    '("127.0.0.1", 32324), 1)\' 2>/dev/null; do sleep 0.1; i=$((i+1)); done'
)


@pytest.mark.parametrize(
    "plant, code", [(STALE_RANK, "MD301"), (BUSY_PORT, "MD408")], ids=["stale-rank", "busy-port"]
)
def test_a_gate_no_go_never_starts_the_job(bed, clean_env, plant, code):
    py = shlex.quote(sys.executable)
    p = _run(bed, bed.env(clean_env), bed.args(), plant=plant.format(py=py))
    assert p.returncode == 1, _err(p)
    err = _err(p)
    assert "meshdoctor: gate: no-go: the job was not started" in err
    assert f"fail {code}" in err
    assert not list(bed.dir.glob("started-*"))  # no rank ever ran
    d = bed.doc()
    assert d["exit_code"] == 1 and "job" not in d["launch"]
    assert any(r["code"] == code and r["status"] == "fail" for r in d["results"])


def test_a_stopped_rank_with_hang_after_gets_every_stack_then_teardown(bed, clean_env):
    p = _run(
        bed,
        bed.env(clean_env, JOB_FAIL="stop1", JOB_STEPS="4"),
        bed.args("--hang-after", "5s"),
    )
    assert p.returncode != 0, _err(p)
    err = _err(p)
    assert "rank 1 stopped (SIGSTOP)" in err
    d = bed.doc()
    stacks = {s["rank"]: s for s in d["launch"]["stacks"]}
    assert set(stacks) == {0, 1, 2}, d["launch"]["stacks"]
    for r, s in stacks.items():
        assert s["python"] and "job.py" in s["python"], s  # py-spy ([test] extras) read it
        assert f"rank {r} (pid {s['pid']}): " in err
    assert stacks[1]["state"] == "stopped" and d["launch"]["job"]["ranks"][1]["stopped"]
    assert sorted(d["launch"]["cleanup"]["survivors"]) == [0, 1, 2]
    assert d["launch"]["job"]["outcome"] == "hang"
    assert bed.left() == []


def test_a_rank_that_skips_an_all_sum_is_read_as_a_collective_order_mismatch(bed, clean_env):
    # ml-explore/mlx#1210: a rank that does not call an all_sum the others call hangs them all,
    # with no error; --hang-after's stacks name where each rank is
    p = _run(
        bed,
        bed.env(clean_env, JOB_FAIL="skip1", JOB_STEPS="4"),
        bed.args("--hang-after", "5s"),
    )
    assert p.returncode != 0, _err(p)
    err = _err(p)
    d = bed.doc()
    order = d["launch"]["order"]
    assert order["mismatch"], order
    by = {w["rank"]: w for w in order["ranks"]}
    assert by[0]["collective"] == by[2]["collective"] == "all_sum", order
    assert by[0]["site"] == by[2]["site"] and by[0]["site"].startswith(str(bed.dir)), order
    assert by[1]["collective"] is None and by[1]["site"] != by[0]["site"], order
    assert "collective-order mismatch: rank 0 on 127.0.0.1 waits in all_sum at " in err, err[-3000:]
    assert "rank 1 on 127.0.0.1 waits in no collective at " in err, err[-3000:]
    assert d["launch"]["job"]["outcome"] == "hang"
    assert bed.left() == []


def _meshdoctor_in(root: psutil.Process) -> Optional[psutil.Process]:
    for c in root.children(recursive=True):
        try:
            cmd = c.cmdline()
        except psutil.Error:
            continue
        if "meshdoctor" in cmd and "launch" in cmd:
            return c
    return None


def test_ctrl_c_is_forwarded_ranks_are_stopped_and_the_verdict_written(bed, clean_env):
    env = bed.env(clean_env, JOB_STEPS="100000")
    proc = subprocess.Popen(
        NS + ["sh", "-c", bed.script(bed.args())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        t_end = time.monotonic() + RUN_S
        while time.monotonic() < t_end and len(list(bed.dir.glob("started-*"))) < 3:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        md = _meshdoctor_in(psutil.Process(proc.pid))
        assert md is not None
        md.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=RUN_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert proc.returncode == 3, text[-4000:]
    assert "meshdoctor: SIGINT: forwarded to mlx.launch" in text
    d = bed.doc()
    assert d["launch"]["job"]["outcome"] == "interrupted" and d["launch"]["exit_status"] == 3
    assert d["exit_code"] == 3
    # the ranks ended because of the interrupt: none of them is the first failure
    job = d["launch"]["job"]
    assert job["first_failed_rank"] is None, job
    assert all(r["after_teardown"] for r in job["ranks"] if r["status"] == "exited"), job
    assert "failed first" not in text, text[-4000:]
    assert bed.left() == []


# --- the gate judges the launch that will happen -------------------------------------------------
def _gate_run(tmp_path, clean_env, *args: str, hostfile: Optional[dict] = None):
    """``launch ARGS -- python -c 'print("job ran")'`` in a private PID namespace, with
    ``hostfile`` written and passed first; returns the run and whether the job started."""
    from tests.helpers import run_cli

    pre: List[str] = []
    if hostfile is not None:
        path = tmp_path / "hosts.json"
        path.write_text(json.dumps(hostfile))
        pre = ["--hostfile", str(path)]
    r = run_cli(
        "launch",
        *pre,
        *args,
        "--",
        sys.executable,
        "-c",
        "print('job ran')",
        env=clean_env,
        timeout=RUN_S,
        private_pids=True,
    )
    return r, "job ran" in r.out


RING2 = {"backend": "ring", "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2}


@pytest.mark.parametrize(
    "backend, said",
    [
        ("jaccl", "hosts[0].rdma: missing: jaccl needs a row of 2 entries"),
        ("mpi", "backend mpi is not available in this build"),
    ],
)
def test_the_gate_checks_the_backend_of_launch_backend(tmp_path, clean_env, backend, said):
    # mlx.launch starts --backend, whatever the hostfile's "backend" says (MLX 0.32.4 launch.py)
    r, ran = _gate_run(tmp_path, clean_env, "--backend", backend, hostfile=RING2)
    assert r.rc == 1 and not ran, r.err
    assert said in r.err, r.err
    r, ran = _gate_run(tmp_path, clean_env, "--backend", "ring", hostfile=RING2)
    assert r.rc == 0 and ran, r.err


def test_the_gate_refuses_a_one_rank_ring_hostfile_as_check_and_probe_do(tmp_path, clean_env):
    # the rank would die parsing an empty MLX_HOSTFILE (MD644): not started
    one = {"backend": "ring", "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]}
    r, ran = _gate_run(tmp_path, clean_env, hostfile=one)
    assert r.rc == 1 and not ran, r.err
    assert "MD401" in r.err and "1 rank with the ring backend" in r.err, r.err
    r, ran = _gate_run(tmp_path, clean_env, "--hosts", "127.0.0.1")
    assert r.rc == 1 and not ran and "1 rank with the ring backend" in r.err, r.err


def test_the_gate_checks_the_mlx_of_the_python_the_command_runs(tmp_path, clean_env):
    # `-- python ...` runs the `python` the ranks' shell finds on PATH (mlx.launch execs the
    # command as given), not meshdoctor's interpreter: one without MLX is no-go, unstarted
    bare = Path("/usr/bin/python3")
    if not bare.exists() or subprocess.run([str(bare), "-c", "import mlx"]).returncode == 0:
        pytest.skip("needs a /usr/bin/python3 without MLX")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(bare)
    env = dict(clean_env, PATH=f"{bin_dir}{os.pathsep}{clean_env.get('PATH', '')}")
    from tests.helpers import run_cli

    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps(RING2))
    r = run_cli(
        "launch",
        "--hostfile",
        str(hf),
        "--",
        "python",
        "-c",
        "print('job ran')",
        env=env,
        timeout=RUN_S,
        private_pids=True,
    )
    assert r.rc == 1 and "job ran" not in r.out, r.err
    assert "MD102" in r.err and f"MLX is not importable from {bin_dir / 'python'}" in r.err, r.err
    r = run_cli(
        "launch",
        "--hostfile",
        str(hf),
        "--",
        sys.executable,
        "-c",
        "print('job ran')",
        env=env,
        timeout=RUN_S,
        private_pids=True,
    )
    assert r.rc == 0 and "job ran" in r.out, r.err


@pytest.mark.parametrize("bad", ["--no-chek", "--bogus", "--bogus=1"])
def test_an_unknown_option_before_the_command_is_a_usage_error(tmp_path, clean_env, bad):
    from tests.helpers import run_cli

    marker = tmp_path / "ran"
    r = run_cli("launch", bad, "--", "touch", str(marker), env=clean_env, timeout=RUN_S)
    assert r.rc == 2, r.err
    assert f"No such option '{bad.split('=')[0]}'" in r.err, r.err
    assert not marker.exists()  # nothing was launched
    # after the command's first word, every word is the command's own
    r = run_cli(
        "launch",
        "--no-check",
        "--",
        sys.executable,
        "-c",
        "print('x')",
        "--no-chek",
        env=clean_env,
        timeout=RUN_S,
    )
    assert r.rc == 0 and r.out.strip() == "x", r.err


RUNNING_RANK = (
    # a subshell (not the namespace's pid 1, which adopts orphans) waits on it: a live parent
    "( MLX_RANK=1 {py} -c 'import time; time.sleep(300)'; : ) &\n"
    "i=0; while [ $i -lt 100 ] && ! pgrep -f 'time.sleep\\(300\\)' >/dev/null; do "
    "sleep 0.1; i=$((i+1)); done"
)


def test_launch_probe_beside_a_running_job_names_a_way_launch_has(bed, clean_env):
    # the probe's own remedy (--beside-running-job) is not an option of launch
    py = shlex.quote(sys.executable)
    p = _run(bed, bed.env(clean_env), bed.args("--probe", "4096"), plant=RUNNING_RANK.format(py=py))
    assert p.returncode == 1, _err(p)
    err = _err(p)
    assert "fail MD411" in err and "--beside-running-job" not in err, err
    assert "launch without --probe" in err
    d = bed.doc()
    md411 = [r for r in d["results"] if r["code"] == "MD411" and r["status"] == "fail"]
    assert md411 and "--beside-running-job" not in json.dumps(md411)


@pytest.mark.parametrize("size", ["1", "6"])
def test_a_probe_size_the_probe_refuses_is_a_usage_error_as_probe_size_is(
    tmp_path, clean_env, size
):
    from tests.helpers import run_cli

    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps(RING2))
    probe = run_cli("probe", "--hostfile", str(hf), "--size", size, env=clean_env)
    assert probe.rc == 2 and "must be a whole number of float32 elements" in probe.err
    r = run_cli(
        "launch",
        "--hostfile",
        str(hf),
        "--probe",
        size,
        "--",
        "true",
        env=clean_env,
        timeout=RUN_S,
    )
    assert r.rc == 2, r.err
    assert "Invalid value for --probe: SIZE " + size in r.err, r.err
    assert "internal error" not in r.err and "gate:" not in r.err


def test_the_re_run_line_shows_control_characters_and_pastes_as_the_same_command(bed, clean_env):
    """A job argument holding a terminal title escape, a bell and U+202E: meshdoctor's own
    lines hold none of them raw, and the "re-run with:" line, read by real bash, gives back
    the same words."""
    word = "\x1b]0;owned\x07\u202eexe"
    args = bed.args() + [word]
    p = _run(bed, bed.env(clean_env, JOB_FAIL="exit1"), args)
    assert p.returncode == 255, _err(p)
    ours = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("meshdoctor: ")]
    assert not [ln for ln in ours if any(c in ln for c in "\x1b\x07\u202e")], ours
    (line,) = [ln for ln in ours if ln.startswith("meshdoctor: re-run with: ")]
    line = line[len("meshdoctor: re-run with: ") :]
    back = subprocess.run(
        ["bash", "-c", f'for w in {line}; do printf "%s\\0" "$w"; done'],
        capture_output=True,
        timeout=30,
    )
    words = back.stdout.decode().split("\0")[:-1]
    assert words[0] == "meshdoctor" and words[-1] == word and words[2:] == args, words
    assert bed.left() == []
