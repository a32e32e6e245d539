"""What an operator gets for bad input: usage errors (exit 2) that say what and where."""

from __future__ import annotations

import json

import pytest

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


def test_size_must_be_whole_elements_at_least_one_per_rank():
    r = run_cli("probe", "--size", "7")
    assert r.rc == 2 and "whole number of float32 elements" in r.err
    r = run_cli("probe", "--size", "6", "--dtype", "float16", "-n", "4")
    assert r.rc == 2 and "8 bytes for 4 ranks" in r.err


def test_hostfile_encodings(tmp_path, clean_env):
    bom = tmp_path / "bom.json"
    bom.write_bytes(
        b"\xef\xbb\xbf" + json.dumps([{"ssh": "localhost", "ips": ["127.0.0.1"]}] * 2).encode()
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(bom), env=clean_env
    )
    assert r.rc == 0
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"ssh": "h\xf6st"}]')
    r = run_cli("check", "--local-only", "--hostfile", str(latin))
    assert r.rc == 2 and "not UTF-8 text (byte 0xf6 at offset 11)" in r.err


def test_extra_check_module_without_a_check_is_not_silently_ignored(clean_env):
    env = dict(clean_env, MESHDOCTOR_EXTRA_CHECKS="os")
    r = run_cli("check", "--json", env=env)
    assert r.rc == 2 and "'os', which defines no CHECK" in r.err and r.out == ""


def test_cli_unparsable_hostfile_is_usage_error_naming_file_and_position(tmp_path):
    bad = write(tmp_path / "hosts.json", '{"hosts": [\n  {"ssh": "a",}\n]}')
    r = run_cli("check", "--local-only", "--hostfile", str(bad))
    assert r.rc == 2
    assert "hosts.json" in r.err and "line 2" in r.err
    r = run_cli("check", "--local-only", "--hostfile", str(tmp_path / "missing.json"))
    assert r.rc == 2 and "missing.json" in r.err
