"""What an operator gets for bad input: usage errors (exit 2) that say what and where."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import pytest

from meshdoctor.probe.config import ProbeConfig, local_hostfile
from tests.helpers import run_cli, write


@pytest.mark.parametrize(
    "args,where",
    [
        (["check", "--timeout", "nan"], "--timeout"),
        (["check", "--timeout", "inf"], "--timeout"),
        (["probe", "--timeout", "nan"], "--timeout"),
        (["check", "--only", "MD101", "--skip", "MD101"], "no check to run"),
        (["probe", "--port", "65535", "-n", "3"], "would pass 65535"),
        (["probe", "--backend", "jaccl", "-n", "2"], "needs a hostfile"),
        (["probe", "--size", "abc"], "--size"),
        (["probe", "-n", "1"], "-n"),
    ],
)
def test_usage_errors_exit_2_and_say_what(args, where):
    r = run_cli(*args)
    assert r.rc == 2, (r.out, r.err)
    assert where in r.err and "Traceback" not in r.err


@pytest.mark.parametrize(
    "content,expected",
    [
        ("42", "$: must be a list of hosts"),
        ('{"hosts": "x"}', "hosts: must be a list"),
        ("[]", "hosts: is empty"),
    ],
)
def test_probe_reports_the_hostfile_problem_not_a_rank_count(tmp_path, content, expected):
    hf = write(tmp_path / "h.json", content)
    r = run_cli("probe", "--hostfile", str(hf))
    assert r.rc == 2 and expected in r.err, r.err


@pytest.mark.parametrize("name", ["-oProxyCommand=touch /tmp/md-pwned", "a b", "x\ny"])
def test_unusable_ssh_names_are_refused_everywhere(tmp_path, name, clean_env):
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            [{"ssh": name, "ips": ["198.51.100.7"]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]
        ),
    )
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096")
    assert r.rc == 2 and "cannot be an ssh destination" in r.err, (r.out, r.err)
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1
    assert any("hosts[0].ssh" in x["summary"] for x in r.results("MD401"))


def test_explain_accepts_a_signature_name_and_lists_every_code():
    r = run_cli("explain", "ring.connect-failed")
    assert r.rc == 0 and r.out.startswith("MD621")
    r = run_cli("list-checks", "--all", "--json")
    codes = [x["code"] for x in json.loads(r.out)]
    assert {"MD101", "MD503", "MD510", "MD601"} <= set(codes)


def test_probe_ranks_use_meshdoctor_python(monkeypatch):
    monkeypatch.setenv("MESHDOCTOR_PYTHON", "/opt/ranks/bin/python3")
    cfg = ProbeConfig(
        hostfile=local_hostfile(2),
        backend="ring",
        ops=["all_sum"],
        size=4096,
        iters=1,
        warmup=0,
        dtype="float32",
        timeout=None,
        soak=0,
        pairs=False,
        port=None,
    )
    assert cfg.python == "/opt/ranks/bin/python3"


def test_mac_without_its_tools_is_not_assessed_rather_than_failed(fake_mac, tmp_path):
    env = fake_mac("healthy")
    for tool in ("sw_vers", "vm_stat"):
        (tmp_path / "bin" / tool).unlink()
    r = run_cli("check", "--json", "--only", "MD101,MD302", env=env)
    assert r.rc == 3, r.out
    assert r.status("MD101") == "error" and r.status("MD302") == "error"
    assert "not found" in r.results("MD302")[0]["summary"]


def test_size_must_be_whole_elements_at_least_one_per_rank():
    r = run_cli("probe", "--size", "7")
    assert r.rc == 2 and "whole number of float32 elements" in r.err
    r = run_cli("probe", "--size", "6", "--dtype", "float16", "-n", "4")
    assert r.rc == 2 and "8 bytes for 4 ranks" in r.err


def test_hostfile_encodings(tmp_path, clean_env):
    bom = tmp_path / "bom.json"
    bom.write_bytes(
        b"\xef\xbb\xbf" + json.dumps([{"ssh": "localhost", "ips": ["127.0.0.1"]}]).encode()
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(bom), env=clean_env
    )
    assert r.rc == 0
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"ssh": "h\xf6st"}]')
    r = run_cli("check", "--local-only", "--hostfile", str(latin))
    assert r.rc == 2 and "not UTF-8 text (byte 0xf6 at offset 11)" in r.err


def test_overlong_ssh_name_is_a_hostfile_problem(tmp_path, clean_env):
    hf = write(tmp_path / "h.json", json.dumps([{"ssh": "a" * 300, "ips": ["127.0.0.1"]}]))
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1 and "longer than any host name" in r.results("MD401")[0]["summary"]


def test_two_local_ranks_of_a_jaccl_hostfile_warn(tmp_path, clean_env):
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "m1", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en2"]},
                    {"ssh": "m2", "ips": ["127.0.0.2"], "rdma": ["rdma_en2", None]},
                ],
            }
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 0 and r.status("MD401") == "warn"
    assert "one rank per Mac" in r.results("MD401")[0]["summary"]


def test_extra_check_module_without_a_check_is_not_silently_ignored(clean_env):
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="os")
    r = run_cli("check", "--json", env=env)
    assert r.rc == 2 and "'os', which defines no CHECK" in r.err and r.out == ""


def test_strict_quiet_shows_the_warning_that_fails_it(clean_env):
    env = dict(clean_env, MLX_RANK="4")
    r = run_cli("check", "--quiet", "--strict", "--only", "MD103", env=env)
    assert r.rc == 1 and "MLX_RANK" in r.out


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
