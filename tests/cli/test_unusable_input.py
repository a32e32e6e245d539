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
