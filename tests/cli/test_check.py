"""The check engine end to end: verdicts, exit codes, deadlines, errors, the schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema

from meshdoctor.checker.model import Check, Doc, ok
from meshdoctor.facts.context import NodeContext
from meshdoctor.model import Result, Verdict
from meshdoctor.checker.runner import run_checks
from tests.helpers import run_cli, validate

ROOT = Path(__file__).resolve().parents[2]


def test_version_and_help_exit_zero():
    r = run_cli("--version")
    assert r.rc == 0 and "meshdoctor" in r.out
    r = run_cli("--help")
    assert r.rc == 0
    assert "Exit codes" in r.out and "check" in r.out


def test_python_dash_m_and_console_script_agree():
    import shutil

    exe = Path(sys.executable).with_name("meshdoctor")
    exe = str(exe) if exe.exists() else shutil.which("meshdoctor")
    assert exe, "the meshdoctor console script is not installed"
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout == run_cli("--version").out


def test_schema_command_prints_a_valid_json_schema():
    r = run_cli("schema")
    assert r.rc == 0
    schema = json.loads(r.out)
    jsonschema.Draft202012Validator.check_schema(schema)


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


def test_raising_and_overrunning_checks_give_error_and_exit_3_within_deadline(clean_env):
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
    assert elapsed < 1.5 + 1.0 + 0.5, elapsed  # deadline + 1 s, plus interpreter start


def test_fail_outranks_error(clean_env):
    env = _extra_env(clean_env)
    env["JACCL_RANK"] = "2"  # MD103 fails: JACCL_* overrides a launch
    r = run_cli("check", "--json", "--only", "MD198,MD103", env=env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"
    assert r.status("MD103") == "fail" and r.status("MD198") == "error"


def test_unknown_check_code_is_a_usage_error():
    r = run_cli("check", "--only", "MD999")
    assert r.rc == 2 and "MD999" in r.err


def test_list_checks_and_explain():
    r = run_cli("list-checks", "--json")
    rows = json.loads(r.out)
    codes = [x["code"] for x in rows]
    assert codes == sorted(codes) and "MD301" in codes
    r = run_cli("explain", "MD301")
    assert r.rc == 0 and "reboot" in r.out and "MLX_RANK" in r.out
    r = run_cli("explain", "md302")
    assert r.rc == 0 and "wired" in r.out
    r = run_cli("explain", "MD777")
    assert r.rc == 2 and "MD777" in r.err


def test_strict_turns_warnings_into_no_go(clean_env):
    env = dict(clean_env, MLX_RANK="5")  # MD103 warns
    r = run_cli("check", "--json", "--only", "MD103", env=env)
    assert r.rc == 0 and r.status("MD103") == "warn"
    r = run_cli("check", "--json", "--only", "MD103", "--strict", env=env)
    assert r.rc == 1 and r.doc["verdict"] == "no-go"


def test_runner_turns_a_wrong_return_type_into_error():
    doc = Doc(meaning="m", why="w", action="a", sources=("s",))
    bad = Check(code="MD197", name="t.bad", title="t", run=lambda ctx: ["not a finding"], doc=doc)
    good = Check(code="MD196", name="t.good", title="t", run=lambda ctx: ok("fine"), doc=doc)
    res = run_checks([bad, good], NodeContext(), timeout=2)
    assert [r.status for r in res] == ["error", "ok"]
    assert "TypeError" in res[0].summary


def test_verdict_model_exit_codes_and_schema():
    v = Verdict(command="check")
    assert (v.verdict, v.exit_code) == ("go", 0)
    v.results.append(Result("MD101", "x", "warn", "w"))
    assert v.exit_code == 0
    v.strict = True
    assert v.exit_code == 1
    v.strict = False
    v.results.append(Result("MD102", "x", "error", "e"))
    assert (v.verdict, v.exit_code) == ("unknown", 3)
    v.results.append(Result("MD103", "x", "fail", "f", needs_reboot=True, host="m2"))
    assert (v.verdict, v.exit_code) == ("no-go", 1)
    assert v.needs_reboot == ["m2"]
    validate(v.finish().to_dict())


def test_json_output_is_strict_json_even_with_nan():
    from meshdoctor.output import to_json

    text = to_json({"x": float("nan"), "y": [float("-inf"), 2.0], "z": {"w": 1}})
    assert json.loads(text) == {"x": None, "y": [None, 2.0], "z": {"w": 1}}
    assert "NaN" not in text and "Infinity" not in text


def test_environment_fast_synch_missing_from_the_hostfile_through_the_cli(clean_env, tmp_path):
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps(
            {
                "backend": "ring",
                "envs": ["MLX_RING_VERBOSE=1"],
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "m2", "ips": ["198.51.100.2"]},
                ],
            }
        )
    )
    env = dict(clean_env, MLX_METAL_FAST_SYNCH="1")
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD103", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD103") == "warn", r.out
    assert (
        "MLX_METAL_FAST_SYNCH='1' is set on this node but not in the hostfile's envs"
        in r.results("MD103")[0]["summary"]
    )
