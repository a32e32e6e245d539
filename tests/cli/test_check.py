"""`meshdoctor check` end to end: verdicts, exit codes, deadlines, errors, --strict and --quiet,
and fleet mode (an unreachable host, a refused host name, the fleet table)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli, write
from tests.unit.render.test_escaping import _rendered

ROOT = Path(__file__).resolve().parents[2]


# MD301 is left out of the "this machine is go" runs: other tests' ranks may be alive meanwhile
# (it has its own tests with real processes in tests/checks/test_proc_stale_ranks.py).


def test_check_on_this_machine_is_go(clean_env):
    r = run_cli("check", "--json", "--skip", "MD301", env=clean_env)
    bad = [x for x in r.doc["results"] if x["status"] in ("fail", "error")]
    assert r.rc == 0, bad
    assert r.doc["verdict"] == "go" and r.doc["command"] == "check"
    codes = {x["code"] for x in r.doc["results"]}
    assert {"MD101", "MD102", "MD103", "MD302", "MD401"} <= codes
    assert r.status("MD401") == "skip"


def test_human_output_has_a_line_per_check_and_a_verdict(clean_env):
    r = run_cli("check", "--skip", "MD301", env=clean_env)
    assert r.rc == 0
    assert "MD101" in r.out and "MD302" in r.out
    assert r.out.strip().splitlines()[-1].startswith("GO (exit 0)")


def test_quiet_go_prints_nothing(clean_env):
    r = run_cli("check", "--quiet", "--skip", "MD301", env=clean_env)
    assert r.rc == 0 and r.out.strip() == ""


def test_json_path_does_not_import_rich(clean_env):
    code = (
        "import sys, runpy; sys.argv=['meshdoctor','check','--json','--only','MD101'];\n"
        "try:\n runpy.run_module('meshdoctor', run_name='__main__')\n"
        "except SystemExit: pass\n"
        "sys.stderr.write('RICH=%s' % any(m == 'rich' or m.startswith('rich.') "
        "for m in sys.modules))"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env, timeout=30
    )
    assert "RICH=False" in p.stderr, p.stderr


def _extra_env(clean_env):
    env = dict(clean_env)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["MESHDOCTOR_EXTRA_CHECKS"] = "tests.extra_checks.broken,tests.extra_checks.sleepy"
    return env


def test_raising_and_overrunning_checks_give_error_and_exit_3_not_a_hang(clean_env):
    t0 = time.monotonic()
    r = run_cli(
        "check",
        "--json",
        "--only",
        "MD198,MD199,MD101",
        "--timeout",
        "1.5",
        env=_extra_env(clean_env),
    )
    elapsed = time.monotonic() - t0
    assert r.rc == 3, r.out
    assert r.doc["verdict"] == "unknown"
    raised = r.results("MD198")[0]
    assert raised["status"] == "error" and "RuntimeError: boom" in raised["summary"]
    slept = r.results("MD199")[0]
    assert slept["status"] == "error" and "1.5 s deadline" in slept["summary"]
    assert r.status("MD101") == "ok"
    assert elapsed < 60, (
        elapsed
    )  # bounded: a verdict at all, not the 600 s sleep (the figure: benchmarks/check_speed.py)


def test_fail_outranks_error(clean_env):
    env = _extra_env(clean_env)
    env["JACCL_RANK"] = "2"  # MD103 fails: JACCL_* overrides a launch
    r = run_cli("check", "--json", "--only", "MD198,MD103", env=env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"
    assert r.status("MD103") == "fail" and r.status("MD198") == "error"


def test_unknown_check_code_is_a_usage_error():
    r = run_cli("check", "--only", "MD999")
    assert r.rc == 2 and "MD999" in r.err


def test_strict_turns_warnings_into_no_go(clean_env):
    env = dict(clean_env, MLX_RANK="5")  # MD103 warns
    r = run_cli("check", "--json", "--only", "MD103", env=env)
    assert r.rc == 0 and r.status("MD103") == "warn"
    r = run_cli("check", "--json", "--only", "MD103", "--strict", env=env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"


def test_strict_quiet_shows_the_warning_that_fails_it(clean_env):
    env = dict(clean_env, MLX_RANK="4")
    r = run_cli("check", "--quiet", "--strict", "--only", "MD103", env=env)
    assert r.rc == 1 and "MLX_RANK" in r.out


def test_check_hosts_with_an_unreachable_host_is_exit_3_with_ssh_message(clean_env):
    r = run_cli(
        "check",
        "--hosts",
        "nosuch.invalid",
        "--skip",
        "MD401",  # one ring rank is MD401's (a fail); this is about the host
        "--json",
        "--timeout",
        "3",
        env=clean_env,
        timeout=60,
    )
    assert r.rc == 3
    err = r.results("MD402")[0]
    assert err["status"] == "error" and "nosuch.invalid" in err["summary"]
    assert "-m pip install mlx" in err["remediation"]["command"]  # meshdoctor is sent over ssh
    assert "pip install meshdoctor" not in json.dumps(err)
    assert "Nothing of meshdoctor needs installing there" in err["remediation"]["text"]
    assert r.doc["hosts"][0]["reachable"] is False


def test_only_cross_node_checks_and_the_hostfile_rules_once(tmp_path, clean_env):
    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps([{"ssh": "127.0.0.1"}, {"ssh": "127.0.0.1"}]))  # ring without IPs
    r = run_cli(
        "check", "--hostfile", str(hf), "--json", "--only", "MD403,fleet.environment", env=clean_env
    )
    assert r.rc == 0 and {x["code"] for x in r.doc["results"]} == {"MD403", "MD407"}
    r = run_cli("check", "--hostfile", str(hf), "--json", "--only", "MD401", env=clean_env)
    assert r.rc == 1
    assert all(
        str(hf) in x["remediation"]["text"] for x in r.results("MD401") if x["status"] == "fail"
    )
    r = run_cli("check", "--hostfile", str(hf), "--only", "MD999", env=clean_env)
    assert r.rc == 2 and "unknown check MD999" in r.err


def test_a_run_where_every_check_skipped_is_not_go(clean_env):
    env = dict(clean_env, MESHDOCTOR_PLATFORM="linux")
    r = run_cli("check", "--only", "MD205", "--strict", env=env)
    assert r.rc == 3 and "nothing applied here" in r.out and "GO (exit 0)" not in r.out
    r = run_cli("check", "--json", "--only", "MD205", env=env)
    assert r.rc == 3 and r.doc["verdict"] == "unknown"
    assert [x["status"] for x in r.doc["results"]] == ["skip"]


REFUSED_HOSTS = (
    "a;rm -rf /",
    "-oProxyCommand=touch {mark}",
    "host\nFAKE \u2714 MD999 all fine\u202e",
)


@pytest.mark.parametrize("name", REFUSED_HOSTS)
def test_a_refused_host_name_gets_no_command_and_forges_no_line(tmp_path, clean_env, name):
    """Fleet mode with a host the hostfile rule refuses: never reached (no ssh runs), its MD402
    says the name is refused and to fix the hostfile's "ssh" entry, and offers no command;
    nothing of the name forges a line or reorders one. The shell's MLX_METAL_FAST_SYNCH with a
    newline (MD103) is shown on one line too."""
    mark = tmp_path / "X"
    name = name.format(mark=mark)
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}, {"ssh": name, "ips": ["192.0.2.7"]}]
        ),
    )
    env = dict(clean_env, MLX_METAL_FAST_SYNCH="1\nFAKE \u2714 MD998 fine\u202e")
    args = ("check", "--hostfile", str(hf), "--skip", "MD406", "--timeout", "5")
    r = run_cli(*args, "--json", env=env)
    (reach,) = r.results("MD402")
    assert reach["host"] == name and reach["status"] == "error" and r.rc == 1
    assert reach["summary"].startswith("not checked: the host name is refused: ")
    assert f'Fix this host\'s "ssh" entry in {hf} (MD401' in reach["remediation"]["text"]
    assert "command" not in reach["remediation"] or not reach["remediation"]["command"]
    (md103,) = r.results("MD103")
    assert 'add "MLX_METAL_FAST_SYNCH=1\\nFAKE' in md103["remediation"]["text"]  # JSON, escaped
    human = run_cli(*args, env=env)
    assert human.rc == 1
    lines = human.out.splitlines()
    assert not [ln for ln in lines if ln.lstrip().startswith("FAKE")], human.out
    assert "\u202e" not in human.out and "$ ssh" not in human.out and "pip install" not in human.out
    assert not [ln for ln in lines if "ssh a;rm" in ln or "ssh -oProxy" in ln], human.out
    (line,) = [ln for ln in lines if ln.startswith("? MD402")]
    assert "host name is refused" in line
    assert not mark.exists()
    # the hostfile's envs value with a newline, on the node's own ok line
    hf2 = write(
        tmp_path / "e.json",
        json.dumps({"envs": ["MLX_METAL_FAST_SYNCH=\nFAKE ok"], "hosts": [{"ssh": "localhost"}]}),
    )
    r = run_cli("check", "--local-only", "--hostfile", str(hf2), "--only", "MD103", env=clean_env)
    assert "MLX_METAL_FAST_SYNCH='\\nFAKE ok'" in r.out
    assert not [ln for ln in r.out.splitlines() if ln.startswith("FAKE")], r.out


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_the_fleet_table_uses_the_ascii_symbols_where_the_output_cannot_encode_them(
    tmp_path, clean_env, encoding
):
    hf = write(
        tmp_path / "lo2.json",
        json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2),
    )
    env = dict(clean_env, PYTHONIOENCODING=encoding)
    r = run_cli("check", "--hostfile", str(hf), "--only", "MD401", env=env)
    assert r.rc == 0, (r.out, r.err)
    (row,) = [ln for ln in r.out.splitlines() if "127.0.0.1" in ln and "|" in ln]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:2] == ["127.0.0.1", "0-1"] and cells[2:] and set(cells[2:]) == {"+"}, row
    assert (
        "?" not in r.out
        and "\u2714" not in r.out
        and r.out.rstrip().splitlines()[-1].startswith("GO (exit 0)")
    )
    # an unencodable fleet table cell, a result line and the edge matrix share the table
    from meshdoctor.model import Result, Verdict

    v = Verdict(
        command="check",
        results=[Result("MD402", "fleet.reach", "error", "no answer", host="m2")],
        fleet={
            "hosts": ["m1", "m2"],
            "backend": "jaccl",
            "areas": {
                "reach": {
                    "m1": {"status": "ok", "code": "MD402"},
                    "m2": {"status": "error", "code": "MD402"},
                },
                "node": {"m1": {"status": "warn", "code": "MD103"}},
            },
            "edges": {
                "hosts": ["m1", "m2"],
                "summary": "1 of 2 down",
                "cells": [
                    [None, {"devices": ["rdma_en3"], "states": ["PORT_ACTIVE"]}],
                    [{"devices": ["rdma_en4"], "states": ["PORT_DOWN"]}, None],
                ],
            },
        },
    )
    out = _rendered(v, encoding)
    table, edges = out.split("edges:")
    rows = {
        ln.split("|")[1].strip(): ln.split("|")[3:5] for ln in table.splitlines() if "| m" in ln
    }
    assert rows["m1"] == ["   +   ", "   !   "] and rows["m2"] == ["   ?   ", "   .   "], out
    assert "rdma_en3 +" in edges and "rdma_en4 x PORT_DOWN" in edges, out
    assert out.splitlines()[-2].startswith("? MD402")  # ? means error, in the table and below


def test_fleet_output_a_person_reads(tmp_path, clean_env):
    # reported: a 5000-character host name gave 92 KB and a table 5000 columns wide; the table
    # said `rank 0` for a host running ranks 0-2; MD401 about an entry was printed under the
    # host that read it; `[]` drew an empty table
    long_name = tmp_path / "long.json"
    long_name.write_text(json.dumps([{"ssh": "a" * 5000, "ips": ["10.0.0.1"]}]))
    r = run_cli("check", "--hostfile", str(long_name), "--timeout", "3", env=clean_env)
    assert r.rc in (1, 3) and len(r.out) < 5000, len(r.out)
    assert "(5000 characters)" in r.out and max(len(ln) for ln in r.out.splitlines()) < 300
    j = run_cli("check", "--hostfile", str(long_name), "--timeout", "3", "--json", env=clean_env)
    assert j.doc["fleet"]["hosts"] == ["a" * 5000]  # the JSON keeps it whole

    three = tmp_path / "three.json"
    local = {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}
    three.write_text(json.dumps([local, local, local, {"ips": ["10.0.0.9"]}]))
    r = run_cli("check", "--hostfile", str(three), "--timeout", "5", env=clean_env)
    row = next(ln for ln in r.out.splitlines() if "127.0.0.1" in ln and "│" in ln)
    assert re.search(r"│\s+0-\d\s+│", row), r.out
    assert re.search(r"MD401 mesh Hostfile: hosts\[3\]\.ssh", r.out), r.out
    assert "  Hostfile" not in r.out
    j = run_cli("check", "--hostfile", str(three), "--timeout", "5", "--json", env=clean_env)
    assert j.doc["hosts"][0]["node"]["ranks"][:3] == [0, 1, 2]

    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    r = run_cli("check", "--hostfile", str(empty), "--timeout", "3", env=clean_env)
    assert r.rc == 1 and "┏" not in r.out and "hosts: is empty" in r.out


def test_the_readmes_hosts_example_can_pass_and_host_names_cannot(clean_env):
    # README, Fleet mode: `check --hosts 10.0.0.1,10.0.0.2,10.0.0.3 --quiet` (ring: IPs). With
    # host names instead the default ring backend has no address to connect to: MD401 fails.
    only = ("--local-only", "--only", "MD401", "--json")
    names = run_cli("check", "--hosts", "m1,m2,m3", *only, env=clean_env)
    fails = [r["summary"] for r in names.doc["results"] if r["status"] == "fail"]
    assert names.rc == 1 and len(fails) == 3, names.outcome()
    assert all("the ring backend needs at least one IP per host" in s for s in fails), fails
    ips = run_cli(
        "check",
        "--hosts",
        "10.0.0.1,10.0.0.2,10.0.0.3",
        "--local-only",
        "--only",
        "MD401",
        "--json",
    )
    assert ips.rc == 0 and not [r for r in ips.doc["results"] if r["status"] == "fail"], (
        ips.outcome()
    )
