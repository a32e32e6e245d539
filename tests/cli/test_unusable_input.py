"""Input with no end, options that contradict or name nothing, environment variables with a value
meshdoctor cannot mean, an unusable state directory: each ends as a message that says what and
where (exit 2, or for ``fix`` the MD700 result), never a silent default or an exhausted memory."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from meshdoctor.hostfile.load import MAX_BYTES
from tests.helpers import run_cli, write

CAP = f"larger than {MAX_BYTES // (1024 * 1024)} MiB"


def _meshdoctor(args, **kw):
    return subprocess.run(
        ["timeout", "60", sys.executable, "-m", "meshdoctor", *args],
        capture_output=True,
        text=True,
        timeout=90,
        **kw,
    )


@pytest.mark.parametrize("command", ["check", "probe", "fix", "triage"])
def test_a_hostfile_with_no_end_is_a_usage_error_naming_it_and_the_cap(command, clean_env):
    p = _meshdoctor([command, "--hostfile", "/dev/zero"], env=clean_env, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "/dev/zero" in p.stderr and CAP in p.stderr
    assert "Traceback" not in p.stderr and "MemoryError" not in p.stderr


@pytest.mark.parametrize("source", ["yes", "cat /dev/urandom"])
def test_an_endless_pipe_on_standard_input_is_a_usage_error(source, clean_env):
    p = subprocess.run(
        ["bash", "-c", f"{source} | timeout 60 {sys.executable} -m meshdoctor check --hostfile -"],
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=90,
    )
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "<stdin>" in p.stderr and CAP in p.stderr


def test_a_hostfile_just_under_the_cap_is_read_and_one_over_is_refused(tmp_path, clean_env):
    body = '[{"ssh": "localhost"}]'
    under = write(tmp_path / "under.json", body + " " * (MAX_BYTES - len(body)))
    over = write(tmp_path / "over.json", body + " " * (MAX_BYTES - len(body) + 1))
    r = run_cli("check", "--hostfile", str(under), "--local-only", "--only", "MD101", env=clean_env)
    assert r.rc == 0, (r.out, r.err)
    r = run_cli("check", "--hostfile", str(over), "--local-only", env=clean_env)
    assert r.rc == 2 and str(over) in r.err and CAP in r.err, r.err


@pytest.mark.parametrize("command", ["check", "probe"])
def test_hosts_and_a_hostfile_together_are_one_usage_error(command, tmp_path, clean_env):
    hf = write(tmp_path / "ring2.json", '[{"ssh": "a", "ips": ["10.0.0.1"]}]')
    r = run_cli(command, "--hosts", "a", "--hostfile", str(hf), env=clean_env)
    assert r.rc == 2, (r.out, r.err)
    assert "--hostfile and --hosts both name the hosts; pass only one" in r.err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--only", ""], "--only names no check"),
        (["--only", ",,"], "--only names no check"),
        (["--skip", " , "], "--skip names no check"),
        (["--only", "MD101", "--skip", ""], "--skip names no check"),
    ],
)
def test_a_check_list_that_names_nothing_is_a_usage_error(args, message, clean_env):
    r = run_cli("check", *args, env=clean_env)
    assert r.rc == 2, (r.out, r.err)
    assert message in r.err


@pytest.mark.parametrize(
    "command", [["check", "--only", "MD101"], ["fix", "bridge0"], ["probe", "-n", "2"]]
)
@pytest.mark.parametrize(
    "var,value,allowed",
    [
        ("MESHDOCTOR_PLATFORM", "windows", "darwin, macos, mac, linux"),
        ("MESHDOCTOR_ATTRIBUTE_PIDS", "abc", "pids separated by commas"),
        ("MESHDOCTOR_ATTRIBUTE_PIDS", ",", "pids separated by commas"),
        ("MESHDOCTOR_MLX_CACHE", "banana", "0, no, off, false (off)"),
    ],
)
def test_an_environment_value_meshdoctor_cannot_mean_is_a_usage_error(
    command, var, value, allowed, clean_env
):
    r = run_cli(*command, env=dict(clean_env, **{var: value}))
    assert r.rc == 2, (r.out, r.err)
    assert f"{var}={value!r}" in r.err and allowed in r.err


def test_known_environment_values_still_work(clean_env):
    env = dict(
        clean_env,
        MESHDOCTOR_PLATFORM="Linux",
        MESHDOCTOR_ATTRIBUTE_PIDS=f"{os.getpid()}",
        MESHDOCTOR_MLX_CACHE="Off",
    )
    r = run_cli("check", "--json", "--only", "MD101", env=env)
    assert r.rc == 0, (r.out, r.err)


@pytest.mark.parametrize("under", ["", "sub"])  # the file itself, or a directory under it
def test_a_file_as_state_directory_ends_fix_as_md700_saying_what_to_do(tmp_path, clean_env, under):
    not_a_dir = write(tmp_path / "state", "x")
    if under:
        not_a_dir = not_a_dir / under
    r = run_cli(
        "fix",
        "bridge0",
        "--yes",
        "--json",
        env=dict(clean_env, MESHDOCTOR_STATE_DIR=str(not_a_dir)),
    )
    assert r.rc == 3, (r.out, r.err)
    [res] = r.doc["results"]
    assert res["code"] == "MD700" and res["status"] == "error"
    assert str(not_a_dir) in res["summary"]
    assert "set MESHDOCTOR_STATE_DIR to a writable directory" in res["summary"]
    assert "internal error" not in r.out + r.err


def test_a_refused_state_directory_is_said_by_plain_check_not_skipped_silently(tmp_path, clean_env):
    from tests.helpers import require_cpu_mlx

    require_cpu_mlx()  # the cache keeps only CPU-build answers
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o777)  # others can write it
    env = dict(clean_env, MESHDOCTOR_STATE_DIR=str(state), MESHDOCTOR_PLATFORM="linux")
    r = run_cli("check", "--json", "--only", "MD102", env=env)
    said = [x for x in r.results("MD102") if "MLX build cache was not used" in x["summary"]]
    assert said and said[0]["status"] == "warn", r.outcome()
    assert str(state) in said[0]["summary"] and "others can write it" in said[0]["summary"]
    assert not list(state.iterdir())  # nothing written there


# --- a hostfile that waits: a FIFO with no writer, a pipe that is slow


def _start(args, env, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _waiting_on(p) -> None:
    """Wait until one of ``p``'s threads is blocked opening a FIFO or reading a pipe (its
    ``wchan`` in /proc); bounded generously."""
    import glob
    import time

    t_end, seen = time.monotonic() + 60, set()
    while time.monotonic() < t_end and p.poll() is None:
        for wchan in glob.glob(f"/proc/{p.pid}/task/*/wchan"):
            try:
                with open(wchan) as f:
                    seen.add(f.read())
            except OSError:
                pass
        if any(w in s for s in seen for w in ("wait_for_partner", "fifo_open", "pipe_read")):
            return
        time.sleep(0.05)
    raise AssertionError(f"never seen waiting on the hostfile: {p.poll()} {seen}")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("command", ["check", "probe"])
def test_a_fifo_hostfile_with_no_writer_ends_on_a_signal_with_the_verdict(
    command, sig, tmp_path, clean_env
):
    import json
    import signal

    from tests.helpers import validate

    fifo = tmp_path / "hosts.fifo"
    os.mkfifo(fifo)
    p = _start([command, "--hostfile", str(fifo), "--json"], clean_env, stdin=subprocess.DEVNULL)
    try:
        _waiting_on(p)
        p.send_signal(getattr(signal, sig))
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, (out, err)
    doc = json.loads(out)  # one verdict document
    validate(doc)
    last = doc["results"][-1]
    assert last["code"] == ("MD190" if command == "check" else "MD510"), doc
    assert f"interrupted by {sig}" in last["summary"], last


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
@pytest.mark.parametrize("command", ["fix", "triage"])
def test_a_fifo_hostfile_with_no_writer_ends_on_a_signal_for_every_command(
    command, tmp_path, clean_env
):
    import signal

    fifo = tmp_path / "hosts.fifo"
    os.mkfifo(fifo)
    args = [command, "--hostfile", str(fifo)] + (["stale-ranks"] if command == "fix" else [])
    p = _start(args, clean_env, stdin=subprocess.DEVNULL)
    try:
        _waiting_on(p)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, (out, err)
    assert "interrupted" in err and "Traceback" not in err, err


def test_a_slow_pipe_on_standard_input_ends_at_the_stated_deadline(clean_env):
    from meshdoctor.commands.options import HOSTFILE_READ_S

    # a writer that holds the pipe open past the deadline and never writes; stopped once
    # meshdoctor has ended (a shell pipeline would wait for it to the end)
    writer = subprocess.Popen(["sleep", f"{HOSTFILE_READ_S + 60:g}"], stdout=subprocess.PIPE)
    try:
        p = subprocess.run(
            [sys.executable, "-m", "meshdoctor", "check", "--hostfile", "-", "--json"],
            stdin=writer.stdout,
            capture_output=True,
            text=True,
            env=clean_env,
            timeout=HOSTFILE_READ_S + 90,
        )
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"no complete hostfile within {HOSTFILE_READ_S:g} s" in p.stderr, p.stderr
    assert "Fatal Python error" not in p.stderr and "Traceback" not in p.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
def test_a_slow_pipe_on_standard_input_ends_on_a_signal_with_the_verdict(clean_env):
    import json
    import signal

    writer = subprocess.Popen(["sleep", "300"], stdout=subprocess.PIPE)
    try:
        p = _start(["check", "--hostfile", "-", "--json"], clean_env, stdin=writer.stdout)
        try:
            _waiting_on(p)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    finally:
        writer.kill()
        writer.wait()
    assert p.returncode == 3, (out, err)
    doc = json.loads(out)
    assert doc["results"][-1]["code"] == "MD190", doc
    assert "interrupted by SIGINT" in doc["results"][-1]["summary"]


# --- a hostfile nested past any real one


@pytest.mark.parametrize(
    "body",
    [
        '{"hosts": [{"ssh": "h0", "ips": ' + "[" * 500_000 + "]" * 500_000 + "}]}",
        '{"hosts": [{"ssh": "h0", "ips": ' + "[" * 900 + "]" * 900 + "}]}",
        "[" + "[" * 993 + "]" * 993 + "]",  # parses, then a message about it recursed (MD100)
        '{"hosts": [{"ssh": "h0", "rdma": ' + "[" * 60 + "]" * 60 + "}]}",
    ],
    ids=["ips-500000", "ips-900", "entry-993", "rdma-60"],
)
@pytest.mark.parametrize("command", ["check", "probe", "triage"])
def test_a_hostfile_nested_too_deeply_is_a_usage_error_naming_it(
    command, body, tmp_path, clean_env
):
    path = write(tmp_path / "deep.json", body)
    p = _meshdoctor([command, "--hostfile", str(path)], env=clean_env, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, (p.stdout[-2000:], p.stderr[-2000:])
    assert str(path) in p.stderr and "nested too deeply to be a hostfile" in p.stderr
    assert "RecursionError" not in p.stdout + p.stderr and "MD100" not in p.stdout


# --- a host name or an env key with a trailing newline (fullmatch)


def test_a_host_name_with_a_trailing_newline_or_junk_is_refused_and_never_reached(
    tmp_path, clean_env
):
    path = write(
        tmp_path / "h.json",
        '[{"ssh": "127.0.0.1\\n", "ips": ["127.0.0.1"]}, {"ssh": "h1\\n;x", "ips": ["10.0.0.2"]}]',
    )
    r = run_cli("check", "--hostfile", str(path), "--json", env=clean_env)
    assert r.rc == 1, r.outcome()
    md401 = " | ".join(x["summary"] for x in r.results("MD401") if x["status"] == "fail")
    assert "'127.0.0.1\\n' cannot be an ssh destination" in md401, md401
    assert "'h1\\n;x' cannot be an ssh destination" in md401, md401
    refused = [x for x in r.results("MD402") if "host name is refused" in x["summary"]]
    assert len(refused) == 2, r.outcome()  # neither was run over ssh nor as this machine


def test_an_env_key_with_a_trailing_newline_is_refused(tmp_path, clean_env):
    path = write(
        tmp_path / "h.json",
        '{"envs": ["MLX_METAL_FAST_SYNCH\\n=1"], "hosts": [{"ssh": "127.0.0.1"}]}',
    )
    r = run_cli("check", "--hostfile", str(path), "--local-only", "--json", env=clean_env)
    assert r.rc == 1, r.outcome()
    md401 = " | ".join(x["summary"] for x in r.results("MD401") if x["status"] == "fail")
    assert "MLX_METAL_FAST_SYNCH" in md401, md401
