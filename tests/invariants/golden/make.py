"""Write the golden files that tests/invariants/test_golden.py compares with:
``list-checks --json``, ``list-checks --all --json``, ``schema`` and ``explain CODE`` for every
catalogued code.

Run it only when a change to what meshdoctor prints is meant:
``python3 -m tests.invariants.golden.make``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

COMMANDS = {
    "list-checks.json": ["list-checks", "--json"],
    "list-checks-all.json": ["list-checks", "--all", "--json"],
    "list-checks.txt": ["list-checks"],
    "list-checks-all.txt": ["list-checks", "--all"],
    "schema.json": ["schema"],
}


def cli(*args: str) -> str:
    """stdout of ``python -m meshdoctor ARGS`` from the repository root (raises on a non-zero
    exit)."""
    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor", *args],
        capture_output=True,
        text=True,
        cwd=HERE.parents[2],
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "LANG": "C.UTF-8"},
        timeout=120,
        check=True,
    )
    return p.stdout


def explain_all() -> str:
    """``explain CODE`` for every code of ``list-checks --all --json``, one after another (run
    four at a time: each is a Python start-up that mostly waits on imports)."""
    from concurrent.futures import ThreadPoolExecutor

    codes = [e["code"] for e in json.loads(cli("list-checks", "--all", "--json"))]
    with ThreadPoolExecutor(max_workers=4) as pool:
        texts = list(pool.map(lambda c: cli("explain", c), codes))
    return "".join(f"==== {c}\n{t}" for c, t in zip(codes, texts))


def main() -> None:
    for name, args in COMMANDS.items():
        (HERE / name).write_text(cli(*args))
    (HERE / "explain.txt").write_text(explain_all())


if __name__ == "__main__":
    main()
