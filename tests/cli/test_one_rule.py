"""One rule everywhere, bad input, honest words: what a user sees when `check` and `probe` (and
the other commands) meet the same hostfile, a host name a shell would read, an IPv6 ring address,
MLX missing from meshdoctor's Python, a hostfile nested too deep or on standard input, an
unusable extra check module, and text with terminal escapes. The rest of the one-rule tests live
with what they test (README: tests/README.md)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from meshdoctor.hostfile.rules import host_name_problem
from tests.helpers import run_cli, write


def _probe_env(clean_env):
    env = dict(clean_env)
    env.pop("MESHDOCTOR_PROBE_FAULT", None)
    return env


# --- one locality rule, one hostfile validation --------------------------------------------


def test_check_and_probe_give_one_answer_on_a_hostfile_that_contradicts_itself(tmp_path, clean_env):
    me = socket.gethostname()
    hf = write(
        tmp_path / "hosts.json",
        json.dumps([{"ssh": me, "ips": ["10.1.1.1"]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]),
    )
    said = "hosts[0].ips[0]: 10.1.1.1 is not an address of this machine"
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"  # README: a failure is exit 1
    assert any(
        x["summary"].startswith(said) and x["status"] == "fail" for x in r.results("MD401")
    ), r.results("MD401")
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and said in r.err and str(hf) in r.err  # README: a hostfile it cannot use


def _ssh_localhost():
    """(works, ssh's last line) for `ssh -o BatchMode=yes localhost true` on this machine."""
    if shutil.which("ssh") is None:
        return False, "ssh not installed"
    p = subprocess.run(
        ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "localhost", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = p.stderr.strip().splitlines()
    return p.returncode == 0, (lines[-1].strip() if lines else "")


LOCALHOST_RING = {"backend": "ring", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 3}


def test_three_localhost_ranks_are_reached_with_ssh_as_mlx_launch_does(tmp_path, clean_env):
    """mlx.launch runs a rank without ssh only for the ssh name 127.0.0.1 (MLX 0.32.4
    launch.py): with three "localhost" entries check and probe are no-go naming ssh's message
    (MD402), unless an sshd answers `ssh localhost` here; 127.0.0.1 entries pass the gate."""
    works, said = _ssh_localhost()
    hf = write(tmp_path / "lo3.json", json.dumps(LOCALHOST_RING))
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    if works:
        assert r.rc == 0 and not r.results("MD402"), r.doc["results"]
        return
    assert r.rc == 1 and r.doc["verdict"] == "no-go", r.doc["results"]
    (reach,) = r.results("MD402")
    assert reach["status"] == "fail"
    assert reach["summary"].startswith(
        "mlx.launch reaches rank(s) 0, 1, 2 (localhost, this machine) with ssh, and "
        "`ssh localhost` fails: "
    )
    assert said and said in reach["summary"], (said, reach["summary"])
    assert '"ssh": "127.0.0.1"' in reach["remediation"]["text"]
    assert "sshd" in reach["remediation"]["text"]
    assert reach["remediation"]["command"] == "ssh localhost true"
    human = run_cli("check", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    assert human.rc == 1 and "NO-GO" in human.out and "`ssh localhost` fails" in human.out
    p = run_cli(
        "probe", "--json", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env)
    )
    assert p.rc == 1 and p.doc["verdict"] == "no-go"
    assert [x["status"] for x in p.results("MD402")] == ["fail"]
    # without the gate the probe starts the ranks as mlx.launch would: over ssh to localhost
    args = ("probe", "--json", "--no-check", "--hostfile", str(hf), "--size", "4096")
    p = run_cli(*args, env=_probe_env(clean_env), timeout=120)
    assert p.rc == 3 and p.doc["verdict"] == "unknown"
    (start,) = p.results("MD509")
    assert "rank 0 (localhost) exited with status 255" in start["summary"]
    assert said in start["summary"], start["summary"]
    ok = write(tmp_path / "ok3.json", json.dumps(LOCALHOST_RING).replace("localhost", "127.0.0.1"))
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(ok), env=clean_env)
    assert r.rc == 0 and not r.results("MD402"), r.doc["results"]


def test_mlx_launch_itself_ssh_es_to_localhost_and_runs_127_0_0_1_locally(tmp_path):
    """The claim the rule rests on, with the real mlx.launch: "localhost" ranks go through ssh
    (exit 255 without an sshd), "127.0.0.1" ranks run here."""
    launch = shutil.which("mlx.launch", path=os.path.dirname(sys.executable))
    if launch is None:
        pytest.skip("mlx.launch is not installed beside this interpreter")
    works, _ = _ssh_localhost()
    if works:
        pytest.skip("an sshd answers ssh localhost here")
    argv = [sys.executable, "-c", "print('ranked')"]
    lo = write(tmp_path / "lo3.json", json.dumps(LOCALHOST_RING))
    p = subprocess.run(
        [launch, "--hostfile", str(lo), "--", *argv], capture_output=True, text=True, timeout=120
    )
    assert "ranked" not in p.stdout and "exited with code 255" in p.stdout + p.stderr
    ok = write(tmp_path / "ok3.json", json.dumps(LOCALHOST_RING).replace("localhost", "127.0.0.1"))
    p = subprocess.run(
        [launch, "--hostfile", str(ok), "--", *argv], capture_output=True, text=True, timeout=120
    )
    assert p.stdout.split() == ["ranked"] * 3, (p.stdout, p.stderr)


def test_a_remote_name_with_loopback_ips_is_tried_and_its_addresses_refused(tmp_path, clean_env):
    """ghost1 with 127.0.0.1 beside this machine's entry: mlx.launch would ssh to ghost1, so the
    fleet check tries it (MD402) and MD401 says peers cannot reach a rank on its loopback;
    probe refuses the file."""
    hf = write(
        tmp_path / "g.json",
        json.dumps(
            [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}, {"ssh": "ghost1", "ips": ["127.0.0.1"]}]
        ),
    )
    env = dict(clean_env, MESHDOCTOR_SSH_CONFIG=str(write(tmp_path / "ssh_config", "")))
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=env)
    assert r.doc["fleet"]["hosts"] == ["127.0.0.1", "ghost1"]
    (reach,) = r.results("MD402")
    assert reach["host"] == "ghost1" and reach["status"] == "error"
    assert reach["summary"].startswith("cannot reach ghost1 over ssh: ")
    said = "hosts[1].ips[0]: 127.0.0.1 is a loopback address, but rank 1 runs on ghost1"
    assert any(x["summary"].startswith(said) for x in r.results("MD401")), r.results("MD401")
    assert r.rc != 0 and r.doc["verdict"] != "go"
    human = run_cli("check", "--only", "MD401", "--hostfile", str(hf), env=env)
    assert "fleet: 2 host(s)" in human.out, human.out
    p = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(env))
    assert p.rc == 2 and said in p.err


@pytest.mark.parametrize("name", ["a;touch${IFS}x", "$(reboot)", "`id`", "h|x", "h&", "a'b"])
def test_host_names_a_shell_would_read_are_refused_by_check_and_probe(tmp_path, clean_env, name):
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            [{"ssh": name, "ips": ["198.51.100.7"]}, {"ssh": "localhost", "ips": ["127.0.0.1"]}]
        ),
    )
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and "cannot be an ssh destination" in r.err, (r.out, r.err)
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1
    assert any(x["summary"].startswith("hosts[0].ssh: ") for x in r.results("MD401"))
    assert host_name_problem(name)


def test_mlx_missing_from_meshdoctor_python_is_one_answer_from_check_and_probe(tmp_path, clean_env):
    for python in (str(tmp_path / "no-such-python"), sys.executable + "-missing"):
        env = dict(_probe_env(clean_env), MESHDOCTOR_PYTHON=python)
        c = run_cli("check", "--json", "--only", "MD102", env=env)
        p = run_cli("probe", "-n", "2", "--size", "4096", "--json", env=env, private_pids=True)
        assert c.rc == p.rc == 1, (c.out, p.out)
        assert "no such executable file" in c.results("MD102")[0]["summary"]
        assert "no such executable file" in p.results("MD509")[0]["summary"]
        assert "not found on PATH" not in c.out + p.out  # an absolute path is not looked up
    bare = tmp_path / "bin" / "python3"  # an interpreter without mlx
    bare.parent.mkdir()
    bare.write_text(f'#!/bin/sh\nexec {sys.base_prefix}/bin/python3 -S "$@"\n')
    bare.chmod(0o755)
    env = dict(_probe_env(clean_env), MESHDOCTOR_PYTHON=str(bare))
    c = run_cli("check", "--json", "--only", "MD102", env=env)
    p = run_cli("probe", "-n", "2", "--size", "4096", "--json", env=env, private_pids=True)
    assert c.rc == p.rc == 1, (c.out, p.out, p.err)
    for said in (c.results("MD102")[0]["summary"], p.results("MD509")[0]["summary"]):
        assert said.startswith("MLX is not importable from ") and "No module named 'mlx'" in said


# --- bad input ---------------------------------------------------------------------------


def test_a_hostfile_nested_too_deep_is_a_usage_error_naming_the_file(tmp_path, clean_env):
    hf = write(tmp_path / "deep.json", "[" * 100000 + "]" * 100000)
    for args in (("check", "--only", "MD401"), ("probe", "--size", "4096")):
        r = run_cli(*args, "--hostfile", str(hf), env=_probe_env(clean_env))
        assert r.rc == 2 and "deep.json" in r.err and "nested too deeply" in r.err, r.err
        assert "Traceback" not in r.err


def test_an_extra_check_module_that_does_not_import_is_a_usage_error(clean_env):
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="nope.mod")
    for args in (("list-checks",), ("check", "--json"), ("explain", "MD101")):
        r = run_cli(*args, env=env)
        assert r.rc == 2, (args, r.out, r.err)
        assert "'nope.mod', which could not be imported: ModuleNotFoundError" in r.err
        assert "internal error" not in r.err + r.out


def test_text_from_outside_is_escaped_before_it_reaches_the_terminal(clean_env, tmp_path):
    pkg = tmp_path / "site_checks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "noisy.py").write_text(
        "from meshdoctor.checker.model import Check, Doc, warn\n"
        "def run(ctx):\n"
        "    return warn('tool said \\x1b[2J\\x1b[31mred\\x00 [red]markup[/red] \\x9b done',\n"
        "                remediation='run [bold]this[/bold]\\x07')\n"
        "CHECK = Check(code='MD197', name='test.noisy', title='Noisy \\x1b]0;title\\x07',\n"
        "              run=run, doc=Doc(meaning='prints what a tool printed', why='a test',\n"
        "                               action='nothing', sources=('tests',)))\n"
    )
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="site_checks.noisy", PYTHONPATH=str(tmp_path))
    r = run_cli("check", "--only", "MD197", env=env)
    assert "\x1b" not in r.out and "\x00" not in r.out and "\x07" not in r.out
    assert "\x9b" not in r.out
    assert "\\x1b[31mred\\x00 [red]markup[/red]" in r.out  # shown, not obeyed
    assert "run [bold]this[/bold]\\x07" in r.out
    r = run_cli("list-checks", env=env)
    assert "\x1b" not in r.out and "Noisy \\x1b]0;title\\x07" in r.out


# --- --hostfile - ------------------------------------------------------------------------


def test_hostfile_dash_reads_standard_input(clean_env):
    text = json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2)
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", "-", env=clean_env, input=text)
    assert r.rc == 0 and r.results("MD401")[0]["evidence"]["hostfile"] == "<stdin>"
    r = run_cli(
        "probe",
        "--hostfile",
        "-",
        "--size",
        "4096",
        env=_probe_env(clean_env),
        input='[{"ssh": "a;b"}, {"ssh": "localhost"}]',
    )
    assert r.rc == 2 and "<stdin>: hosts[0].ssh" in r.err
    r = run_cli("check", "--only", "MD401", "--hostfile", "-", env=clean_env, input="[1,")
    assert r.rc == 2 and "<stdin>: not valid JSON" in r.err


def test_an_ipv6_ring_hostfile_is_refused_by_check_and_probe(tmp_path, clean_env):
    """MLX's ring parses "ip:port" at the first colon (mlx 0.32.4): "::1" cannot launch, so
    check fails MD401 on it and probe refuses the file (exit 2) with the same words."""
    hf = write(
        tmp_path / "v6.json",
        json.dumps(
            {
                "backend": "ring",
                "hosts": [
                    {"ssh": "localhost", "ips": ["::1"]},
                    {"ssh": "localhost", "ips": ["::1"]},
                ],
            }
        ),
    )
    said = "hosts[0].ips[0]: ::1 is an IPv6 address: the ring backend connects to IPv4"
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
    assert r.rc == 1, r.out
    assert any(x["summary"].startswith(said) and x["status"] == "fail" for x in r.results("MD401"))
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096", env=_probe_env(clean_env))
    assert r.rc == 2 and said in r.err and "Can't parse address" in r.err, (r.out, r.err)
