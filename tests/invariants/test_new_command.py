"""A command is its module (or package) plus one row in ``cli.COMMANDS``, as
``docs/architecture.md`` and ``CONTRIBUTING.md`` say: nothing else in meshdoctor names a command
module, and a throwaway command added that way alone, in a copy of the package, is listed, runs,
has its help and gives a verdict that validates."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from meshdoctor import cli
from tests.helpers import validate

PACKAGE = Path(cli.__file__).parent
COMMANDS_DIR = PACKAGE / "commands"
SHARED = {"meshdoctor.commands", "meshdoctor.commands.options"}  # what commands share


def _named_modules(path: Path):
    """The ``meshdoctor.commands.*`` modules ``path`` imports or names in a string (docstrings
    aside)."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [] if id(node) in docs else [node.value]
        else:
            continue
        for name in names:
            if name.startswith("meshdoctor.commands.") and name not in SHARED:
                yield name.split(".")[2]


def test_only_the_command_table_names_a_command_module():
    outside = {
        f"{path.relative_to(PACKAGE.parent)}: {name}"
        for path in PACKAGE.rglob("*.py")
        if COMMANDS_DIR not in path.parents and path.name != "cli.py"
        for name in _named_modules(path)
    }
    assert outside == set()
    in_table = {info.module.split(".")[2] for info in cli.COMMANDS.values()}
    assert set(_named_modules(PACKAGE / "cli.py")) == in_table
    modules = {
        p.stem if p.is_file() else p.name
        for p in COMMANDS_DIR.iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem not in ("__init__",)
    }
    assert modules - {"options"} == in_table, "every command module is a row, every row a module"


HELLO = '''"""``meshdoctor hello``: a throwaway command, added by its module and one row only."""

import click

from meshdoctor.commands.options import json_option, output_options, quiet_option
from meshdoctor.model import Verdict
from meshdoctor.output import emit, report_to


@click.command()
@json_option()
@quiet_option()
@output_options
def hello(as_json: bool, quiet: bool) -> None:
    """Say that a new command needs nothing but this file and its row."""
    verdict = report_to(Verdict(command="hello"), as_json=as_json, quiet=quiet)
    emit(verdict, as_json=as_json, quiet=quiet)
'''

ROW = """    "hello": CommandInfo(
        "meshdoctor.commands.hello",
        "hello",
        "Say hello (a throwaway command of the tests).",
    ),
"""


def test_a_new_command_is_its_module_and_one_row(tmp_path, clean_env):
    copy = tmp_path / "meshdoctor"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "commands" / "hello.py").write_text(HELLO)
    table = "COMMANDS: Dict[str, CommandInfo] = {\n"
    source = (copy / "cli.py").read_text()
    assert source.count(table) == 1
    (copy / "cli.py").write_text(source.replace(table, table + ROW))
    env = dict(clean_env, PYTHONPATH=str(tmp_path))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "meshdoctor", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,  # a bound on a hang, never waited out by a passing run
        )

    listed = run("--help")
    assert listed.returncode == 0, listed.stderr
    assert "hello" in listed.stdout and "a throwaway command of the tests" in listed.stdout
    own = run("hello", "--help")
    assert own.returncode == 0, own.stderr
    assert "needs nothing but this file and its row" in own.stdout
    assert "--format" in own.stdout and "--quiet" in own.stdout
    done = run("hello", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    validate(doc)
    assert doc["command"] == "hello" and doc["verdict"] == "go"
    where = subprocess.run(
        [sys.executable, "-c", "import meshdoctor; print(meshdoctor.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert where.stdout.strip() == str(copy / "__init__.py")  # the copy ran, not the tree
