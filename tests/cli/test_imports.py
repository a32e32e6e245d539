"""The CLI loads a command's module only when that command runs: what each invocation imports,
seen in ``sys.modules`` of a fresh interpreter that ran it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meshdoctor.cli import COMMANDS, cli


def _imported(clean_env, *args: str):
    """Run ``meshdoctor ARGS`` through the click group in a fresh interpreter; returns its exit
    code, its stdout and the meshdoctor modules (and whether rich) it imported."""
    code = (
        "import json, sys\n"
        "from meshdoctor.cli import cli\n"
        "try:\n"
        f"    cli({list(args)!r}, prog_name='meshdoctor')\n"
        "except SystemExit as e:\n"
        "    rc = e.code\n"
        "mods = sorted(m for m in sys.modules\n"
        "              if m == 'rich' or m.startswith(('meshdoctor', 'rich.')))\n"
        "sys.stderr.write('\\nMODULES=' + json.dumps([rc, mods]))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert "MODULES=" in p.stderr, p.stderr
    rc, mods = json.loads(p.stderr.rsplit("MODULES=", 1)[1])
    return rc, p.stdout, set(mods)


def test_help_lists_every_command_without_importing_one(clean_env):
    rc, out, mods = _imported(clean_env, "--help")
    assert rc == 0
    # the interrupt handling and the stream set-up (stdlib only) come before anything else
    assert mods == {
        "meshdoctor",
        "meshdoctor.cli",
        "meshdoctor.interrupts",
        "meshdoctor.streams",
    }, mods
    listed = " ".join(out.split("Commands:")[1].split())
    for name, info in COMMANDS.items():
        assert f"{name} {info.short_help}" in listed, (name, out)


CHECK_MODULES = {"meshdoctor.commands.check", "meshdoctor.commands.options"}


def test_check_json_imports_neither_other_commands_nor_probe_triage_fleet_or_rich(clean_env):
    rc, out, mods = _imported(clean_env, "check", "--json")
    assert rc in (0, 1, 3)
    doc = json.loads(out)
    assert doc["command"] == "check" and doc["exit_code"] == rc
    assert "meshdoctor.commands.check" in mods
    unwanted = sorted(
        m
        for m in mods
        if m == "rich"
        or m.startswith(
            ("rich.", "meshdoctor.probe", "meshdoctor.triage", "meshdoctor.render.verdict")
        )
        or m in ("meshdoctor.checker.fleet", "meshdoctor.fixer.plan")
        or (m.startswith("meshdoctor.commands.") and m not in CHECK_MODULES)
    )
    assert not unwanted, unwanted


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_commands_help_loads_that_command_only(clean_env, name):
    rc, out, mods = _imported(clean_env, name, "--help")
    assert rc == 0 and out.startswith(f"Usage: meshdoctor {name} "), out
    loaded = {m for m in mods if m.startswith("meshdoctor.commands.")}
    assert COMMANDS[name].module in loaded
    assert loaded <= {COMMANDS[name].module, "meshdoctor.commands.options"}, loaded
    assert "rich" not in mods


def test_the_table_names_each_command_where_it_lives():
    for name, info in COMMANDS.items():
        cmd = cli.get_command(None, name)
        assert cmd is not None and cmd.name == name, (name, info)
        assert cmd.get_short_help_str(1000) == info.short_help
    assert cli.get_command(None, "no-such-command") is None
