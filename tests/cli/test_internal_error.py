"""A crash no command handled ends the same way in every command: the verdict so far with the
internal-error result MD100 (exit 3 unless something had already failed), or, for a command
without a verdict, one line on stderr and exit 3. Each run replaces one internal function of
meshdoctor with one that raises, in a fresh interpreter, and runs the console entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _crash(clean_env, module: str, attr: str, *args: str, env=None):
    """Run ``meshdoctor ARGS`` with ``module.attr`` raising RuntimeError('boom')."""
    code = (
        "import sys, importlib\n"
        f"m = importlib.import_module({module!r})\n"
        "def boom(*a, **k):\n"
        "    raise RuntimeError('boom')\n"
        f"setattr(m, {attr!r}, boom)\n"
        "from meshdoctor.cli import main\n"
        f"sys.argv = ['meshdoctor', *{list(args)!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env=dict(clean_env, **(env or {})),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _md100(doc):
    return [r for r in doc["results"] if r["code"] == "MD100"]


@pytest.mark.parametrize(
    "module,attr,args,command",
    [
        ("meshdoctor.fixer.engine", "annotate", ["check", "--only", "MD101"], "check"),
        ("meshdoctor.triage.command", "run", ["triage", "--exit-code", "0"], "triage"),
        ("meshdoctor.fixer.plan", "run", ["fix", "bridge0"], "fix"),
    ],
)
def test_a_crash_in_a_command_is_its_verdict_with_the_internal_error(
    clean_env, module, attr, args, command
):
    p = _crash(clean_env, module, attr, *args, "--json")
    assert p.returncode == 3, p.stderr
    doc = json.loads(p.stdout)
    assert doc["command"] == command and doc["exit_code"] == 3
    (err,) = _md100(doc)
    assert err["status"] == "error" and err["summary"] == "internal error: RuntimeError: boom"
    assert "Traceback" not in p.stderr
    if command == "check":  # the results so far are kept
        assert any(r["code"] == "MD101" for r in doc["results"])


def test_the_internal_error_is_printed_for_a_person_too(clean_env):
    p = _crash(clean_env, "meshdoctor.fixer.engine", "annotate", "check", "--only", "MD101")
    assert p.returncode == 3, p.stderr
    assert "MD100" in p.stdout and "internal error: RuntimeError: boom" in p.stdout


def test_a_crash_in_a_command_without_a_verdict_is_one_line_on_stderr(clean_env):
    p = _crash(
        clean_env, "meshdoctor.checker.fleet_model", "all_fleet_checks", "list-checks", "--json"
    )
    assert p.returncode == 3
    assert p.stdout == ""
    assert p.stderr == "meshdoctor: internal error: RuntimeError: boom\n"
