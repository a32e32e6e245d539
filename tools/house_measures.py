"""Measure the import graph and the size of meshdoctor's pieces.

Usage::

    python3 tools/house_measures.py [ROOT]

``ROOT`` is a checkout (default: the one this file is in). Printed, one figure a line:

* ``rooms``: the top-level modules and packages of ``meshdoctor`` (``__init__`` left out);
* ``arrows back up``: imports (at module level or inside a function, ``TYPE_CHECKING`` blocks
  left out, as the import-linter contract of ``pyproject.toml`` leaves them out) from a room to
  a room of a higher layer of that contract's ``layers`` list, or between two siblings that a
  ``|`` keeps apart, each listed;
* ``circles``: the strongly connected sets of rooms (Tarjan) over every import, and over the
  imports run at import time alone (module level), each listed;
* ``engine and renderer modules naming a code``: modules of ``checker/``, ``render/``,
  ``submesh/`` and ``output.py`` whose code (docstrings and comments left out) holds a string
  that is a code (``"MD401"``), each listed with the codes;
* ``largest file``, ``longest function``: lines, with the path and the name;
* ``functions >= 100 lines``: every one, longest first.

Standard library only (``ast``, ``tomllib``): the tool reads source and runs none of it.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

PACKAGE = "meshdoctor"
LONG = 100  # lines: a function this long or longer is listed
ENGINE = ("checker", "render", "submesh", "output")  # rooms that must never name a code
CODE = re.compile(r"MD[0-9]{3}")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, module: str, is_pkg: bool) -> Iterator[Tuple[str, bool]]:
    """``(imported module, at import time)`` for each import of ``tree``."""
    base = module.split(".") if is_pkg else module.split(".")[:-1]

    def walk(node: ast.AST, top: bool) -> Iterator[Tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    yield a.name, top
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    stem = base[: len(base) - child.level + 1]
                    name = ".".join(stem + ([child.module] if child.module else []))
                else:
                    name = child.module or ""
                yield name, top
                for a in child.names:  # from pkg import module
                    yield f"{name}.{a.name}", top
            else:
                inner = top and not isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
                )
                yield from walk(child, inner)

    yield from walk(tree, True)


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layers(root: Path) -> List[List[Tuple[str, bool]]]:
    """The layers contract: top to bottom, each layer's rooms with ``independent`` (``|``)."""
    conf = tomllib.loads((root / "pyproject.toml").read_text())
    for c in conf.get("tool", {}).get("importlinter", {}).get("contracts", []):
        if c.get("type") == "layers":
            out = []
            for layer in c["layers"]:
                sep = "|" if "|" in layer else ":"
                out.append([(n.strip(), sep == "|") for n in layer.split(sep)])
            return out
    return []


def _sccs(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's strongly connected components of more than one node."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def measure(root: Path) -> str:
    """The report (see the module's docstring) of the checkout at ``root``."""
    src = root / PACKAGE
    files = sorted(p for p in src.rglob("*.py") if ".venv" not in p.parts)
    rooms: Set[str] = set()
    every: Dict[str, Set[str]] = {}
    at_import: Dict[str, Set[str]] = {}
    arrows: List[Tuple[str, str]] = []
    funcs: List[Tuple[int, str]] = []
    sizes: List[Tuple[int, str]] = []
    naming: List[Tuple[str, List[str]]] = []
    for p in files:
        text = p.read_text()
        rel = str(p.relative_to(root))
        sizes.append((len(text.splitlines()), rel))
        mod = _module_name(root, p)
        room = _room(mod)
        if room and room != "__init__":
            rooms.add(room)
        tree = ast.parse(text, rel)
        if room in ENGINE:
            named = sorted(
                {
                    n.value
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)
                    and CODE.fullmatch(n.value)
                }
            )
            if named:
                naming.append((rel, named))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs.append((node.end_lineno - node.lineno + 1, f"{rel}:{node.name}"))
        for name, top in _imports(tree, mod, p.name == "__init__.py"):
            if not name.startswith(PACKAGE + "."):
                continue
            target = _room(name)
            if not room or not target or target == room:
                continue
            if not (src / target).is_dir() and not (src / f"{target}.py").exists():
                continue
            every.setdefault(room, set()).add(target)
            if top:
                at_import.setdefault(room, set()).add(target)
            arrows.append((mod, name))
    layer_of: Dict[str, Tuple[int, bool]] = {}
    for i, layer in enumerate(_layers(root)):
        for name, independent in layer:
            layer_of[name] = (i, independent)
    back = sorted(
        {
            (a, b)
            for a, b in arrows
            if _room(a) in layer_of
            and _room(b) in layer_of
            and (
                layer_of[_room(b)][0] < layer_of[_room(a)][0]
                or (layer_of[_room(b)][0] == layer_of[_room(a)][0] and layer_of[_room(a)][1])
            )
        }
    )
    unlayered = sorted(r for r in rooms if r not in layer_of)
    funcs.sort(reverse=True)
    sizes.sort(reverse=True)
    long = [f for f in funcs if f[0] >= LONG]
    circles = _sccs(every)
    circles_now = _sccs(at_import)
    lines = [
        f"rooms: {len(rooms)} ({', '.join(sorted(rooms))})",
        f"rooms outside the layers contract: {len(unlayered)}"
        + (f" ({', '.join(unlayered)})" if unlayered else ""),
        f"arrows back up: {len(back)}",
        *(f"  {a} -> {b}" for a, b in back),
        f"circles (every import): {len(circles)}",
        *(f"  {' <-> '.join(c)}" for c in circles),
        f"circles (at import time): {len(circles_now)}",
        *(f"  {' <-> '.join(c)}" for c in circles_now),
        f"engine and renderer modules naming a code: {len(naming)}",
        *(f"  {rel}: {' '.join(c)}" for rel, c in naming),
        f"python files: {len(files)}, lines: {sum(n for n, _ in sizes)}",
        f"largest file: {sizes[0][0]} lines {sizes[0][1]}",
        f"longest function: {funcs[0][0]} lines {funcs[0][1]}",
        f"functions >= {LONG} lines: {len(long)}",
        *(f"  {n} {name}" for n, name in long),
    ]
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    """Print the measures of ``argv[0]`` (default: this checkout)."""
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    sys.stdout.write(measure(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
