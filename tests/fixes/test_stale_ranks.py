"""`meshdoctor fix stale-ranks` with real processes (and its verify step on a rank stuck in
uninterruptible sleep, without one).

Every process a test starts carries MESHDOCTOR_FIX_SCOPE=<a token of its own>, and meshdoctor
runs with the same token, so the fix touches only this test's processes even while other MLX
jobs run on the machine.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psutil
import pytest

from tests.helpers import run_cli

SPIN_IGNORING_TERM = (
    "import signal, sys\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\nwhile True:\n    pass\n"
)
SLEEP = "import time; time.sleep(300)"


def ignores_term(status: str) -> bool:
    """Whether /proc/PID/status text shows SIGTERM ignored (SigIgn bit 15)."""
    for line in status.splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def _ignores_term(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return ignores_term(f.read())
    except OSError:
        return False


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for(cond, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Procs:
    """Processes of one test, all carrying its scope token; killed at the end."""

    def __init__(self, env) -> None:
        self.token = f"t-{uuid.uuid4().hex[:10]}"
        self.env = dict(
            env,
            MESHDOCTOR_FIX_SCOPE=self.token,
            MESHDOCTOR_STATE_DIR=tempfile.mkdtemp(prefix="md-state-"),
        )
        self.pids = []
        self.popens = []

    def orphan(self, code: str, **extra: str) -> int:
        """A python process whose launcher is gone (re-parented to init), like a leftover."""
        assign = " ".join(shlex.quote(f"{k}={v}") for k, v in extra.items())
        cmd = (
            f"{assign} setsid {shlex.quote(sys.executable)} -c {shlex.quote(code)} "
            ">/dev/null 2>&1 & echo $!"
        )
        out = subprocess.run(
            ["bash", "-c", cmd], env=self.env, capture_output=True, text=True, timeout=30
        ).stdout
        pid = int(out.strip())
        self.pids.append(pid)
        wait_for(lambda: self._ready(pid, extra), f"pid {pid} to start")
        if code == SPIN_IGNORING_TERM or "SIG_IGN" in code:
            wait_for(lambda: _ignores_term(pid), f"pid {pid} to ignore SIGTERM")
        if psutil.Process(pid).ppid() != 1:
            pytest.skip("a subreaper adopts orphaned processes here: none is orphaned")
        return pid

    def child(self, code: str, **extra: str) -> int:
        """A rank whose launcher (this test) is still alive: a job in progress."""
        p = subprocess.Popen(
            [sys.executable, "-c", code], env=dict(self.env, **extra), start_new_session=True
        )
        self.popens.append(p)
        self.pids.append(p.pid)
        wait_for(lambda: self._ready(p.pid, extra), f"pid {p.pid} to start")
        return p.pid

    def _ready(self, pid: int, extra) -> bool:
        try:
            env = psutil.Process(pid).environ()
        except psutil.Error:
            return False
        return env.get("MESHDOCTOR_FIX_SCOPE") == self.token and all(
            env.get(k) == v for k, v in extra.items()
        )

    def close(self) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in self.popens:
            p.wait(timeout=10)


@pytest.fixture
def procs(clean_env):
    p = Procs(clean_env)
    yield p
    p.close()


def _by_pid(doc):
    return {a["detail"]["pid"]: a for a in doc["actions"] if a.get("detail", {}).get("pid")}


def test_plan_kill_and_second_run(procs):
    stubborn = procs.orphan(SPIN_IGNORING_TERM, MLX_RANK="1")
    polite = procs.orphan(SLEEP, MLX_RANK="0")
    lookalike = procs.orphan(
        SPIN_IGNORING_TERM.replace("pass", "pass  # MLX_RANK=1"), NOT_MLX_RANK="1"
    )
    running = procs.child(SLEEP, MLX_RANK="2")
    pids = [stubborn, polite, lookalike, running]

    plan = run_cli("fix", "stale-ranks", "--json", env=procs.env)
    assert plan.rc == 1 and plan.doc["verdict"] == "no-go"
    assert all(alive(p) for p in pids), "a plan-only run changed something"
    acts = _by_pid(plan.doc)
    assert acts[stubborn]["outcome"] == "planned" and acts[polite]["outcome"] == "planned"
    assert acts[stubborn]["argv"] == ["kill", "-TERM", str(stubborn)]
    assert acts[running]["outcome"].startswith("skipped: rank of a running job")
    assert lookalike not in acts
    assert not any(a["changed"] for a in plan.doc["actions"])
    res = plan.results("MD701")
    assert res[0]["status"] == "fail" and "planned, not applied" in res[0]["summary"]

    done = run_cli("fix", "stale-ranks", "--yes", "--json", env=procs.env)
    assert done.rc == 0, done.out
    assert not alive(stubborn) and not alive(polite)
    assert alive(lookalike) and alive(running)
    acts = _by_pid(done.doc)
    assert acts[stubborn]["outcome"] == "done: killed by SIGKILL" and acts[stubborn]["changed"]
    assert acts[polite]["outcome"] == "done: exited after SIGTERM"
    assert not acts[running]["changed"]
    ok = done.results("MD701")[0]
    assert ok["status"] == "ok" and ok["summary"].startswith("verified")
    assert "1 rank(s) of running jobs left alone" in ok["summary"]

    again = run_cli("fix", "stale-ranks", "--yes", "--json", env=procs.env)
    assert again.rc == 0
    assert not any(a["changed"] for a in again.doc["actions"])
    assert again.results("MD701")[0]["evidence"]["changed"] is False
    assert alive(lookalike) and alive(running)


def test_include_running_stops_the_running_job_too(procs):
    running = procs.child(SLEEP, MLX_RANK="3")
    r = run_cli("fix", "stale-ranks", "--yes", "--include-running", "--json", env=procs.env)
    assert r.rc == 0, r.out
    wait_for(lambda: procs.popens[0].poll() is not None, "the running rank to exit")
    assert procs.popens[0].returncode == -signal.SIGTERM
    assert _by_pid(r.doc)[running]["changed"] is True


def test_never_its_own_parent_even_when_it_looks_like_a_rank(procs):
    env = dict(procs.env, MLX_RANK="7")  # the shell that runs meshdoctor looks like a rank
    cmd = f"{shlex.quote(sys.executable)} -m meshdoctor fix stale-ranks --yes --json; echo rc=$?"
    p = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=60)
    assert p.stdout.rstrip().endswith("rc=0"), p.stdout + p.stderr
    assert '"changed": true' not in p.stdout


def test_human_output_shows_each_step_and_explain_names_the_fix(procs):
    pid = procs.orphan(SLEEP, MLX_RANK="4")
    r = run_cli("fix", "stale-ranks", env=procs.env)
    assert r.rc == 1
    assert f"kill -TERM {pid}" in r.out and "(planned)" in r.out
    assert alive(pid)
    chk = run_cli("check", "--only", "MD301", "--json", env=procs.env)
    mine = [x for x in chk.results("MD301") if x["evidence"].get("pid") == pid]
    assert mine and mine[0]["remediation"]["fix"] == "MD701"
    ex = run_cli("explain", "MD301")
    assert "Fixed by: MD701 stale-ranks" in ex.out
    assert "MD701" in run_cli("list-checks", "--all").out
    assert "Resolves: MD301" in run_cli("explain", "stale-ranks").out
    lst = run_cli("fix", "--list")
    assert "MD701" in lst.out and "stale-ranks" in lst.out and "MD301" in lst.out


def test_a_second_fix_run_is_refused_while_one_applies(procs, monkeypatch):
    from meshdoctor.receipts import FixLock

    pid = procs.orphan(SLEEP, MLX_RANK="5")
    monkeypatch.setenv("MESHDOCTOR_STATE_DIR", procs.env["MESHDOCTOR_STATE_DIR"])
    with FixLock("another-run"):
        r = run_cli("fix", "stale-ranks", "--yes", "--json", env=procs.env)
    assert r.rc == 3
    busy = r.results("MD700")
    assert busy and "another `meshdoctor fix` is applying changes" in busy[0]["summary"]
    assert alive(pid)
    assert (
        oct(os.stat(os.path.join(procs.env["MESHDOCTOR_STATE_DIR"], "fix.lock")).st_mode & 0o777)
        == "0o600"
    )


def _on_terminal(env, answer: str, timeout: float = 60.0):
    """Run `meshdoctor fix stale-ranks` on a pseudo-terminal, answer the one question; returns
    (exit status, everything it printed)."""
    import pty
    import select

    master, slave = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", "fix", "stale-ranks"],
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen, asked = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
                if not asked and b"Apply this plan?" in seen:
                    os.write(master, answer.encode() + b"\n")
                    asked = True
            elif p.poll() is not None:
                break
        return p.wait(timeout=30), seen.decode(errors="replace"), asked
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)


def test_on_a_terminal_it_shows_the_plan_and_asks_once(procs):
    pid = procs.orphan(SLEEP, MLX_RANK="6")
    rc, out, asked = _on_terminal(procs.env, "n")
    assert asked and f"kill -TERM {pid}" in out and out.count("Apply this plan?") == 1
    assert rc == 1 and alive(pid)
    rc, out, asked = _on_terminal(procs.env, "y")
    assert asked and rc == 0, out
    assert not alive(pid)


def test_a_rank_in_uninterruptible_sleep_puts_its_host_in_needs_reboot(monkeypatch):
    import time as _time

    from meshdoctor.fixer.model import FixContext
    from meshdoctor.fixer.engine import fix_result
    from meshdoctor.ranks import RankProcess
    from meshdoctor.fixes import stale_ranks

    stuck = RankProcess(
        pid=4242,
        name="python",
        cmdline=["python"],
        status="disk-sleep",
        create_time=_time.time(),
        rank="1",
        ppid=1,
    )
    monkeypatch.setattr(stale_ranks, "_targets", lambda ctx: ([stuck], []))
    ctx = FixContext(hosts=None, apply=True, options={"host": "m2"})
    ver = stale_ranks.verify(ctx)
    assert not ver.ok and "m2" in ver.needs_reboot and "pid 4242" in ver.needs_reboot["m2"]
    [res] = fix_result(stale_ranks.FIX, "m2", [], ver)
    assert res.status == "fail" and res.needs_reboot


def test_the_plan_you_approve_is_the_plan_that_runs(procs):
    """Interactive fix (a terminal): the plan shown stops rank A; rank B appears while the
    operator reads it; after 'y' only A is stopped, B is reported and left for the next run."""
    import json
    import pty

    a = procs.orphan(SLEEP, MLX_RANK="0")
    master, slave = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", "fix", "stale-ranks", "--json"],
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
        env=procs.env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while b"Apply this plan?" not in seen:
            assert time.monotonic() < deadline, seen[-2000:]
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
        assert f"pid {a}".encode() in seen
        b = procs.orphan(SLEEP, MLX_RANK="1")  # found only at apply time
        os.write(master, b"y\n")
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    doc = json.loads(out)
    wait_for(lambda: not alive(a), f"pid {a} to be stopped")
    assert alive(b), json.dumps(doc["actions"], indent=1)
    by_pid = {x["detail"]["pid"]: x for x in doc["actions"] if x.get("detail", {}).get("pid")}
    assert by_pid[a]["changed"] is True
    assert (
        by_pid[b]["outcome"] == "skipped: found after the plan you approved; left for the next run"
    )
    assert by_pid[b]["changed"] is False
    [res] = [r for r in doc["results"] if r["code"] == "MD701"]
    assert (
        "the approved plan is done; 1 rank(s) found after the plan you approved" in res["summary"]
    )
    assert f"pid {b}" in res["summary"]
    assert doc["needs_reboot"] == []


BLOCKING_TERM = (  # SIGTERM blocked, not ignored: the fix sends it, then waits its grace
    "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
    "time.sleep(300)\n"
)


def test_an_interrupted_fix_yes_reports_the_actions_it_had_taken(procs):
    import json

    from tests.helpers import validate

    slow = procs.orphan(BLOCKING_TERM, MLX_RANK="1")
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", "fix", "stale-ranks", "--yes", "--json"],
        env=procs.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # SIGTERM reached it (pending, blocked): the fix now waits out its grace period
        def term_pending() -> bool:
            with open(f"/proc/{slow}/status") as f:
                for line in f:
                    if line.startswith(("ShdPnd:", "SigPnd:")):
                        if int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
                            return True
            return False

        wait_for(term_pending, "SIGTERM to reach the rank", timeout=60)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, (out[-2000:], err[-2000:])
    doc = json.loads(out)  # one verdict document, not "nothing was assessed"
    validate(doc)
    (stop,) = [x for x in doc["results"] if x["code"] == "MD790"]
    assert "interrupted by SIGINT while applying the plan: 1 step(s) taken" in stop["summary"]
    (taken,) = [a for a in doc["actions"] if a.get("detail", {}).get("pid") == slow]
    assert taken["outcome"] == "done: SIGTERM sent; its end not yet confirmed", taken
    assert taken["argv"] == ["kill", "-TERM", str(slow)]


# An orphaned rank wrapper that ignores SIGTERM and starts a child every 50 ms (its children
# inherit the ignored SIGTERM and MLX_RANK): some are born during the fix's grace period.
SPAWNING_IGNORING_TERM = (
    "import signal, subprocess, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "while True:\n"
    "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "    time.sleep(0.05)\n"
)


def _scoped(token: str) -> list:
    out = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("MESHDOCTOR_FIX_SCOPE") == token:
                out.append(p)
        except psutil.Error:
            continue
    return out


def test_a_spawning_wrapper_that_ignores_sigterm_is_stopped_with_its_newborns(procs):
    """The children a TERM-ignoring wrapper starts during the grace period are stopped with
    it: nothing of it is left, and its host is not sent to needs_reboot."""
    wrapper = procs.orphan(SPAWNING_IGNORING_TERM, MLX_RANK="1")
    try:
        wait_for(lambda: len(psutil.Process(wrapper).children()) >= 3, "the wrapper's children")
        done = run_cli("fix", "stale-ranks", "--yes", "--json", env=procs.env, timeout=120)
        assert done.rc == 0, done.out
        assert done.doc["needs_reboot"] == [], done.results("MD701")
        assert done.results("MD701")[0]["status"] == "ok"
        wait_for(lambda: not _scoped(procs.token), "every process of the wrapper to end")
        act = _by_pid(done.doc)[wrapper]
        assert act["outcome"] == "done: killed by SIGKILL"
        assert act["detail"]["started_during_grace"], act  # born after the plan, stopped too
    finally:
        for p in _scoped(procs.token):
            p.kill()


# Runs as pid 1 of a private PID namespace (unshare, as root): an orphaned rank is planted, the
# fix shows its plan on a terminal, the rank exits and a plain process is made to take its pid
# (the namespace's ns_last_pid, pid_namespaces(7)) while the operator reads, then "y". Prints
# the verdict's JSON after a line "VERDICT".
REUSE = r"""
import json, os, pty, select, signal, subprocess, sys, time
env = dict(os.environ)
rank = int(subprocess.run(
    ["bash", "-c", "MLX_RANK=0 setsid sleep 300 >/dev/null 2>&1 & echo $!"],
    capture_output=True, text=True, env=env).stdout)
time.sleep(0.3)
master, slave = pty.openpty()
fix = subprocess.Popen([sys.executable, "-m", "meshdoctor", "fix", "stale-ranks", "--json"],
                       stdin=slave, stderr=slave, stdout=subprocess.PIPE, env=env,
                       start_new_session=True)
os.close(slave)
seen = b""
while b"Apply this plan?" not in seen:
    if select.select([master], [], [], 60)[0]:
        seen += os.read(master, 4096)
    else:
        sys.exit("no plan shown: " + seen.decode(errors="replace")[-2000:])
assert f"kill -TERM {rank}".encode() in seen, seen
os.kill(rank, signal.SIGKILL)
os.waitpid(rank, 0)  # this process is the namespace's init: the orphan's parent
other = None
for _ in range(5):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(rank - 1))
    other = subprocess.Popen(["sleep", "300"])  # no MLX_RANK: not a rank
    if other.pid == rank:
        break
    other.kill(); other.wait()
if other.pid != rank:
    sys.exit(f"SKIP: pid {rank} could not be reused")
os.write(master, b"y\n")
out, _ = fix.communicate(timeout=120)
alive = other.poll() is None
other.kill()
print("VERDICT")
print(json.dumps({"doc": json.loads(out), "pid": rank, "other_alive": alive}))
"""


def test_a_pid_reused_after_the_plan_is_left_alone_and_said(procs):
    """The planned rank exits while the operator reads the plan and a plain process gets its
    pid; after "y" that process is left alone, and the result says the planned rank was gone
    and its pid reused instead of only "no stale ranks"."""
    import json

    if os.geteuid() != 0:
        pytest.skip("needs root: a private PID namespace whose ns_last_pid this test sets")
    p = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", sys.executable, "-c", REUSE],
        env=procs.env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    if "SKIP: " in p.stderr:
        pytest.skip(p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0 and "VERDICT" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    got = json.loads(p.stdout.split("VERDICT", 1)[1])
    pid, doc = got["pid"], got["doc"]
    assert got["other_alive"], doc["actions"]  # the process that took the pid was not signalled
    [act] = [a for a in doc["actions"] if a.get("detail", {}).get("pid") == pid]
    assert act["outcome"] == (
        f"skipped: pid {pid} had exited before it was signalled and its number is now another "
        "process's, left alone"
    )
    assert not act["changed"]
    [res] = [r for r in doc["results"] if r["code"] == "MD701"]
    assert (
        f"pid {pid} had exited before it was signalled and its number is now another process's"
        in res["summary"]
    ), res["summary"]
