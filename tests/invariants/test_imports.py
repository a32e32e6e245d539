"""The import graph of meshdoctor's own modules: no module imports itself back through others
(an import circle), the package runs from a bare checkout, and the layer contracts in
pyproject.toml ([tool.importlinter]) hold when import-linter is installed (.ci/run installs it
and runs ``lint-imports`` too)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "meshdoctor"


def _modules() -> Dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> Set[int]:
    skip: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(x) for b in node.body for x in ast.walk(b))
    return skip


def import_graph() -> Dict[str, Set[str]]:
    """module -> the meshdoctor modules it imports at run time (imports under
    ``if TYPE_CHECKING:`` excluded; ``from pkg import sub`` counts as importing ``pkg.sub``)."""
    mods = _modules()
    graph: Dict[str, Set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = subs if all(s in mods for s in subs) else subs + [base]
            graph[mod].update(t for t in targets if t in mods and t != mod)
    return graph


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_among_meshdoctors_modules():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_top_level_stays_small():
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= 17, top  # the rest lives in packages by feature (docs/architecture.md)


def test_runs_from_a_bare_checkout(tmp_path):
    """``PYTHONPATH=. python3 -m meshdoctor list-checks`` from a checkout that was never
    installed: every package is inside meshdoctor/ (no package-dir mapping)."""
    shutil.copytree(PKG, tmp_path / "meshdoctor", ignore=shutil.ignore_patterns("__pycache__"))
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import runpy, sys; sys.argv[1:] = ['list-checks'];"
            "import meshdoctor; print(meshdoctor.__file__); runpy.run_module('meshdoctor', run_name='__main__')",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": ".", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    first, rest = p.stdout.split("\n", 1)
    assert first.startswith(str(tmp_path)), first
    assert "MD101  node.platform" in rest


def test_layer_contracts_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]' installs it)")
    p = subprocess.run([lint], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:]


def test_psutil_comes_from_proctable_whose_reader_has_every_name_used():
    """psutil is optional on a host meshdoctor was sent to (meshdoctor.ship): every module
    imports it from meshdoctor.proctable, which hands out the /proc and macOS-tools reader
    where psutil is missing, and that reader has every ``psutil.NAME`` the package uses."""
    from meshdoctor.proctable import lite

    direct, used = [], set()
    for name, path in _modules().items():
        if name.startswith("meshdoctor.proctable"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "psutil" for a in node.names
            ):
                direct.append(f"{name}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("psutil"):
                direct.append(f"{name}:{node.lineno}")
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "psutil"
            ):
                used.add(node.attr)
    assert not direct, "import psutil from meshdoctor.proctable instead: " + ", ".join(direct)
    assert used and not sorted(n for n in used if not hasattr(lite, n))
