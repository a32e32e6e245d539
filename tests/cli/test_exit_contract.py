"""The exit-code contract under interrupts and output failures: Ctrl-C, SIGTERM and SIGHUP during
``check`` kill every command it started and still print the verdict (exit 3); a closed or broken
stdout is not a verdict; a stream that cannot encode the symbols gets ASCII; every ``--json``
document validates against ``meshdoctor schema``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

from meshdoctor.cli import cli
from tests.helpers import VALIDATOR, run_cli

HUNG_TOOL = """#!/bin/sh
# a hung RDMA tool: its child sleeps, the tool waits for it
sleep 300 &
echo $! > "{ready}.tmp" && mv "{ready}.tmp" "{ready}"
wait
"""


def _wait_for_file(path, proc, timeout=30.0):
    """Wait for ``path`` to exist (the stub wrote it), or fail if ``proc`` ended first."""
    t_end = time.monotonic() + timeout
    while not os.path.exists(path):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < t_end, "the stub command never started"
        time.sleep(0.02)


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``within`` seconds: kill(2) returns before
    the process it sent SIGKILL to has run its exit, which a loaded box can delay (seen: the hung
    tool's child still 'sleeping' just after meshdoctor exited, with 4 CPU burners)."""
    t_end = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > t_end:
            return False
        time.sleep(0.05)


@pytest.mark.parametrize(
    "sig,as_json",
    [
        (signal.SIGTERM, False),
        (signal.SIGINT, False),
        (signal.SIGTERM, True),
        (signal.SIGHUP, True),
    ],
)
def test_an_interrupted_check_kills_what_it_started_and_prints_its_verdict(
    tmp_path, clean_env, sig, as_json
):
    ready = tmp_path / "sleep.pid"
    for tool in ("ibv_devinfo", "ibv_devices"):
        stub = tmp_path / tool
        stub.write_text(HUNG_TOOL.format(ready=ready))
        stub.chmod(0o755)
    env = dict(
        clean_env,
        PATH=f"{tmp_path}:{clean_env.get('PATH', '')}",
        MESHDOCTOR_PLATFORM="linux",
        MESHDOCTOR_SYSTEM_PYTHON="",
    )  # the stub, not pyverbs
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", "check", "--only", "MD101,MD201", "--timeout", "120"]
        + (["--json"] if as_json else []),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_file(ready, p)
        sleeper = int(ready.read_text())
        tool = psutil.Process(sleeper).ppid()
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, (out, err)
    assert "Traceback" not in err
    name = signal.Signals(sig).name
    if as_json:
        doc = json.loads(out)
        VALIDATOR.validate(doc)
        assert doc["verdict"] == "unknown" and doc["exit_code"] == 3
        got = {r["code"]: r for r in doc["results"]}
        assert got["MD101"]["status"] == "ok"  # it had finished: its result is kept
        assert got["MD201"]["status"] == "error" and name in got["MD201"]["summary"]
        assert got["MD190"]["status"] == "error"
        assert got["MD190"]["summary"].startswith(f"interrupted by {name}: 1 of 2 checks")
    else:
        assert f"MD190 check interrupted: interrupted by {name}" in out
        assert "UNKNOWN (exit 3) check" in out
    # the hung tool and its child went with their process group, not re-parented to pid 1
    assert _gone(sleeper) and _gone(tool), (sleeper, tool)


def test_sigterm_to_any_other_command_exits_3(clean_env):
    # list-checks receives SIGTERM while it runs (it sends it to itself: no race with a timer)
    code = (
        "import os, signal\n"
        "import meshdoctor.cli as c, meshdoctor.commands.list_checks as m\n"
        "m.list_checks.callback = lambda **kw: os.kill(os.getpid(), signal.SIGTERM)\n"
        "import sys; sys.argv = ['meshdoctor', 'list-checks']\n"
        "c.main()\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], env=clean_env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 3, p.stderr
    assert "meshdoctor: interrupted" in p.stderr and "Traceback" not in p.stderr


def _closed_reader_pipe():
    """A pipe whose reading end is already closed: every write to it fails with EPIPE."""
    r, w = os.pipe()
    os.close(r)
    return w


@pytest.mark.parametrize(
    "args,code",
    [
        (["list-checks", "--all"], 0),
        (["list-checks", "--json"], 0),
        (["explain", "MD301"], 0),
        (["schema"], 0),
        (["check", "--only", "MD101"], 0),
        (["check", "--json", "--only", "MD101"], 0),
        (["check", "--json", "--only", "MD101,MD103"], 1),  # --strict below makes MD103's warn fail
    ],
)
def test_a_reader_that_went_away_is_not_a_verdict(clean_env, args, code):
    env = dict(clean_env)
    if code == 1:
        env["MLX_RANK"] = "3"
        args = args + ["--strict"]
    w = _closed_reader_pipe()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "meshdoctor", *args],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        os.close(w)
    assert p.returncode == code, p.stderr
    assert p.stderr == "", p.stderr  # quiet: no traceback, no "Broken pipe" message


@pytest.mark.parametrize(
    "args",
    [
        ["list-checks", "--all"],
        ["list-checks", "--json"],
        ["explain", "MD301"],
        ["schema"],
        ["--help"],
        ["--version"],
        ["check", "--help"],
        ["fix", "--list"],
        ["check", "--only", "MD101"],
        ["check", "--json", "--only", "MD101"],
        ["triage", "-"],
        ["launch", "--no-check", "--", sys.executable, "-c", "print('job output')"],
    ],
)
def test_a_stdout_that_cannot_be_written_is_said_as_such(clean_env, args):
    """``> /dev/full`` (ENOSPC on every write, full(4)): one line naming standard output, never
    "internal error"; exit 3 (the verdict never reached its reader), except launch, whose exit
    status is the job's."""
    if args[0] == "launch":
        pytest.importorskip("mlx.core")
    with open("/dev/full", "w") as full:  # written to, never replaced
        p = subprocess.run(
            [sys.executable, "-m", "meshdoctor", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            input="RuntimeError: [jaccl] Recv failed with errno=104\n" * (args[0] == "triage"),
            text=True,
            env=clean_env,
            timeout=120,
        )
    said = "meshdoctor: cannot write standard output: No space left on device"
    assert said in p.stderr, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.count("cannot write standard output") == 1, p.stderr
    assert p.returncode == (0 if args[0] == "launch" else 3), p.stderr


def test_head_reads_one_line_of_the_listing_and_the_pipeline_succeeds(clean_env):
    p = subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            f"{sys.executable} -m meshdoctor list-checks --all | head -1",
        ],
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("MD100") and p.stdout.count("\n") == 1
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "args,code",
    [
        (["check", "--json", "--only", "MD101"], 0),
        (["check", "--only", "MD101"], 0),
        (["list-checks", "--json"], 0),
    ],
)
def test_a_closed_stdout_does_not_crash(clean_env, args, code):
    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    assert p.returncode == code, p.stderr
    assert p.stderr == "", p.stderr


def test_an_ascii_terminal_gets_ascii_symbols(clean_env):
    env = dict(clean_env, PYTHONIOENCODING="ascii", MLX_RANK="2")
    r = run_cli("check", "--only", "MD101,MD103", env=env)
    assert r.rc == 0, r.err
    assert "Traceback" not in r.err and r.err == ""
    r.out.encode("ascii")
    lines = r.out.splitlines()
    assert any(ln.startswith("+ MD101 ") for ln in lines), r.out
    assert any(ln.startswith("! MD103 ") for ln in lines), r.out
    assert any(ln.startswith("    -> ") for ln in lines), r.out  # the remediation arrow
    r = run_cli("explain", "MD301", env=env)
    assert r.rc == 0 and "Traceback" not in r.err


def _json_commands(group=cli, prefix=()):
    """Every command (path of names) that has a --json option, subcommands included."""
    for name in group.list_commands(None):  # the group loads each command when asked for it
        cmd = group.get_command(None, name)
        if hasattr(cmd, "commands"):
            yield from _json_commands(cmd, prefix + (name,))
        elif any("--json" in getattr(o, "opts", ()) for o in cmd.params):
            yield prefix + (name,)


# How to run each command so that it is quick here; a new command with --json belongs here.
JSON_RUNS = {
    ("check",): [["--only", "MD101,MD103"], ["--only", "MD101", "--strict"]],
    ("list-checks",): [[], ["--all"]],
    ("probe",): [["-n", "2", "--size", "4KiB", "--iters", "1", "--warmup", "0", "--op", "all_sum"]],
    ("fix",): [["bridge0"], ["--list"]],  # plan only (no --yes, no terminal): changes nothing
    ("triage",): [["--exit-code", "0"], ["-"]],
    # this machine only, into a folder of this test run
    ("bundle",): [["-o", os.path.join(tempfile.mkdtemp(prefix="md-bundle-"), "b.tar.gz")]],
}
# Commands whose --json takes a FILE (their stdout is a job's): the document written there.
JSON_FILE_RUNS = {
    ("launch",): [["--no-check", "--", sys.executable, "-c", "pass"]],
}


def test_every_json_output_of_every_command_validates_against_the_schema(clean_env, tmp_path):
    schema = json.loads(run_cli("schema").out)
    commands = list(_json_commands())
    assert ("check",) in commands and ("list-checks",) in commands
    missing = [c for c in commands if c not in JSON_RUNS and c not in JSON_FILE_RUNS]
    assert not missing, f"add a quick run of {missing} to JSON_RUNS"
    for path in [c for c in commands if c in JSON_FILE_RUNS]:
        for extra in JSON_FILE_RUNS[path]:
            out = tmp_path / "verdict.json"
            r = run_cli(*path, "--json", str(out), *extra, env=clean_env, timeout=120)
            assert r.rc == 0, (path, extra, r.err)
            doc = json.loads(out.read_text())
            import jsonschema

            jsonschema.Draft202012Validator(schema).validate(doc)
            assert doc["command"] == path[0]
    for path in [c for c in commands if c in JSON_RUNS]:
        for extra in JSON_RUNS[path]:
            r = run_cli(*path, "--json", *extra, env=clean_env, timeout=120)
            assert r.rc in (0, 1, 3), (path, extra, r.err)
            doc = json.loads(r.out)
            import jsonschema

            jsonschema.Draft202012Validator(schema).validate(doc)
            if isinstance(doc, dict):
                assert doc["exit_code"] == r.rc and doc["command"] == path[0]


def test_every_command_is_marked_and_a_probe_rank_is_not(clean_env):
    from meshdoctor import execute

    res = execute.run(
        [sys.executable, "-c", f"import os; print(os.environ.get('{execute.PARENT_MARKER_ENV}'))"],
        env=clean_env,
        timeout=30,
    )
    assert res.stdout.strip() == str(os.getpid())
    p = execute.spawn(
        [sys.executable, "-c", f"import os; print(os.environ.get('{execute.PARENT_MARKER_ENV}'))"],
        env=dict(clean_env, MESHDOCTOR_PROBE_ID="run-1", **{execute.PARENT_MARKER_ENV: "12345"}),
    )
    out, _ = p.communicate(timeout=30)
    assert out.decode().strip() == "None"  # a probe rank is a rank: found by its own marker


def test_stop_all_kills_every_group_still_running(tmp_path):
    from meshdoctor import execute

    ready = tmp_path / "sleep.pid"
    p = execute.spawn(
        ["sh", "-c", f"sleep 300 & echo $! > {ready}.tmp && mv {ready}.tmp {ready}; wait"]
    )
    try:
        _wait_for_file(ready, p)
        sleeper = int(ready.read_text())
        assert execute.stop_all() >= 1
        p.wait(timeout=10)
        assert p.returncode == -signal.SIGKILL
        assert _gone(sleeper)  # the kill is sent; the kernel delivers it
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_an_interrupt_before_any_check_ran_still_gives_the_verdict(clean_env):
    from tests.cli.test_check import ROOT

    env = dict(
        clean_env,
        PYTHONPATH=str(ROOT) + os.pathsep + clean_env.get("PYTHONPATH", ""),
        MESHDOCTOR_EXTRA_CHECKS="tests.extra_checks.terminated",
    )
    r = run_cli("check", "--json", "--only", "MD101", env=env)
    assert r.rc == 3, (r.out, r.err)
    assert [x["code"] for x in r.doc["results"]] == ["MD190"]
    assert r.doc["results"][0]["summary"].startswith(
        "interrupted by SIGTERM: before the checks ran"
    )
    # the re-run it asks for keeps the options that produced it
    assert r.doc["results"][0]["remediation"]["command"] == "meshdoctor check --json --only MD101"


@pytest.mark.parametrize(
    "args,code",
    [
        (["explain", "nonsense"], 2),
        (["check", "--only", "MD999"], 2),
        (["check", "--only", ""], 2),
        (["explain", "MD301"], 0),
        (["check", "--json", "--only", "MD101"], 0),
    ],
)
def test_a_stderr_reader_that_went_away_does_not_change_the_exit_code(clean_env, args, code):
    # `meshdoctor ... 2>&1 | head -1`: stderr (and stdout) is a pipe nobody reads any more; the
    # reading end is closed before the child starts, so every write fails, every run
    for both in (False, True) * 3:
        w = _closed_reader_pipe()
        try:
            p = subprocess.run(
                [sys.executable, "-m", "meshdoctor", *args],
                stdout=w if both else subprocess.DEVNULL,
                stderr=w,
                stdin=subprocess.DEVNULL,
                env=clean_env,
                timeout=60,
            )
        finally:
            os.close(w)
        assert p.returncode == code, (args, both, p.returncode)


def _catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (the SigCgt mask in /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return False


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
@pytest.mark.parametrize(
    "args",
    [
        ["check", "--json", "--only", "MD101"],
        ["check", "--only", "MD101"],
        ["probe", "--json", "-n", "2", "--size", "4KiB", "--iters", "1"],
        ["list-checks"],
        ["explain", "MD301"],
        ["check", "--help"],
    ],
)
def test_an_interrupt_from_the_first_moment_meshdoctor_runs_ends_as_exit_3(clean_env, args):
    # The signal goes out the moment the process catches SIGTERM or SIGHUP, whichever handler
    # went in first: meshdoctor's first act. Only the interpreter's own start comes before it
    # (there a signal has Python's default effect). A signal that arrives while the other
    # handlers are still going in must wait for them, not kill the process (a CI run on a loaded
    # machine once saw SIGHUP end it as -1). From there click, the command and its checks are
    # still being imported (tens of ms).
    sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    for i in range(12):
        sig = sigs[i % 3]
        p = subprocess.Popen(
            [sys.executable, "-m", "meshdoctor", *args],
            env=clean_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            t_end = time.monotonic() + 60
            while not (_catches(p.pid, signal.SIGTERM) or _catches(p.pid, signal.SIGHUP)):
                assert p.poll() is None and time.monotonic() < t_end, p.communicate()
                time.sleep(0.0005)
            p.send_signal(sig)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 3, (args, sig.name, out, err)
        assert "Traceback" not in err, err
        if "--json" in args:
            doc = json.loads(out)  # one verdict document, whenever the signal came
            VALIDATOR.validate(doc)
            code = "MD510" if args[0] == "probe" else "MD190"  # probe: MD510, also before a rank
            assert doc["exit_code"] == 3 and doc["results"][-1]["code"] == code, doc
            assert f"interrupted by {sig.name}" in doc["results"][-1]["summary"]
        else:
            assert "interrupted" in out + err, (out, err)


def test_closed_stdout_keeps_the_verdict_exit_code(clean_env):
    import subprocess

    p = subprocess.run(
        f"{sys.executable} -m meshdoctor check --json --only MD101 | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=60,
        executable="/bin/bash",
    )
    assert p.stdout == "{"
    p = subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            f"{sys.executable} -m meshdoctor check --only MD101 | true",
        ],
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=60,
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
