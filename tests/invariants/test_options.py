"""The options several commands share are declared once, in ``meshdoctor/commands/options.py``
(its factories, as pip's ``cmdoptions``): no command module writes ``click.option("--json", ...)``
or any other of :data:`meshdoctor.commands.options.SHARED` itself, and every command that takes
one of them takes the factory's (its flags, type and default the same everywhere)."""

from __future__ import annotations

import ast
from pathlib import Path

import click

from meshdoctor.cli import COMMANDS, cli
from meshdoctor.commands import options

COMMANDS_DIR = Path(options.__file__).parent


def _declared_here(path: Path):
    """``(line, option name)`` of every ``click.option(...)`` call in ``path`` whose names
    include one of the shared options."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option":
            names = [a.value for a in node.args if isinstance(a, ast.Constant)]
            for name in names:
                if name in options.SHARED:
                    yield node.lineno, name


def test_no_command_module_declares_a_shared_option_itself():
    found = [
        f"{path.relative_to(COMMANDS_DIR.parent.parent)}:{line}: {name}"
        for path in sorted(COMMANDS_DIR.rglob("*.py"))
        if path.name != "options.py"
        for line, name in _declared_here(path)
    ]
    assert found == [], "use the factory of meshdoctor/commands/options.py"


def _params():
    ctx = click.Context(cli)
    for name in sorted(COMMANDS):
        for param in cli.get_command(ctx, name).params:
            yield name, param


def test_a_shared_flag_means_the_same_in_every_command():
    seen = {}
    for command, param in _params():
        shared = [o for o in param.opts if o in options.SHARED]
        if not shared or not isinstance(param, click.Option):
            continue
        shape = (
            tuple(param.opts),
            param.name,
            param.is_flag,
            type(param.type).__name__,
            param.multiple,
        )
        seen.setdefault(shape[0][-1], {}).setdefault(shape, []).append(command)
    # launch --json FILE (the job's stdout stays the job's) is the one other meaning of --json
    allowed = {"--json": 2, "--output": 2, "--local-only": 1}
    for option, shapes in seen.items():
        assert len(shapes) <= allowed.get(option, 1), (option, shapes)
