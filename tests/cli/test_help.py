"""Every command's --help names only options it has (reported: `fix --help` and `triage --help`
mentioned --strict, which they do not have)."""

from __future__ import annotations

import re

import pytest

from meshdoctor.cli import COMMANDS
from tests.helpers import run_cli


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_help_names_only_options_it_has(name):
    import click

    from meshdoctor.cli import cli

    r = run_cli(name, "--help")
    assert r.rc == 0, r.err
    cmd = cli.get_command(click.Context(cli), name)
    have = {o for p in cmd.params for o in p.opts + p.secondary_opts if o.startswith("--")}
    have |= {"--help"}
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", r.out))
    # another command's option, named as that command's on purpose ("every --json verdict")
    elsewhere = {"--json"} if name == "schema" else set()
    assert named - have - elsewhere == set(), (name, sorted(named - have))
