"""What an operator gets for bad input: usage errors (exit 2) that say what and where."""

from __future__ import annotations

import json

import pytest

from meshdoctor.probe.config import ProbeConfig, local_hostfile
from tests.conftest import run_cli, write


@pytest.mark.parametrize("args,where", [
    (["check", "--timeout", "nan"], "--timeout"),
    (["check", "--timeout", "inf"], "--timeout"),
    (["probe", "--timeout", "nan"], "--timeout"),
    (["check", "--only", "MD101", "--skip", "MD101"], "no check to run"),
    (["probe", "--port", "65535", "-n", "3"], "would pass 65535"),
    (["probe", "--backend", "jaccl", "-n", "2"], "needs a hostfile"),
    (["probe", "--size", "abc"], "--size"),
    (["probe", "-n", "1"], "-n"),
])
def test_usage_errors_exit_2_and_say_what(args, where):
    r = run_cli(*args)
    assert r.rc == 2, (r.out, r.err)
    assert where in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("content,expected", [
    ("42", "$: must be a list of hosts"),
    ('{"hosts": "x"}', "hosts: must be a list"),
    ("[]", "hosts: is empty"),
])
def test_probe_reports_the_hostfile_problem_not_a_rank_count(tmp_path, content, expected):
    hf = write(tmp_path / "h.json", content)
    r = run_cli("probe", "--hostfile", str(hf))
    assert r.rc == 2 and expected in r.err, r.err


@pytest.mark.parametrize("name", ["-oProxyCommand=touch /tmp/md-pwned", "a b", "x\ny"])
def test_unusable_ssh_names_are_refused_everywhere(tmp_path, name, clean_env):
    hf = write(tmp_path / "h.json", json.dumps([{"ssh": name, "ips": ["198.51.100.7"]},
                                                {"ssh": "localhost", "ips": ["127.0.0.1"]}]))
    r = run_cli("probe", "--hostfile", str(hf), "--size", "4096")
    assert r.rc == 2 and "cannot be an ssh destination" in r.err, (r.out, r.err)
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(hf), env=clean_env)
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
    cfg = ProbeConfig(hostfile=local_hostfile(2), backend="ring", ops=["all_sum"], size=4096,
                      iters=1, warmup=0, dtype="float32", timeout=None, soak=0, pairs=False,
                      port=None)
    assert cfg.python == "/opt/ranks/bin/python3"


def test_mac_without_its_tools_is_not_assessed_rather_than_failed(fake_mac, tmp_path):
    env = fake_mac("healthy")
    for tool in ("sw_vers", "vm_stat"):
        (tmp_path / "bin" / tool).unlink()
    r = run_cli("check", "--json", "--only", "MD101,MD302", env=env)
    assert r.rc == 3, r.out
    assert r.status("MD101") == "error" and r.status("MD302") == "error"
    assert "not found" in r.results("MD302")[0]["summary"]
