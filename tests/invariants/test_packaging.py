"""A non-editable install ships every module: each package directory of the source tree is named
in pyproject.toml (an editable install, as the tests use, would hide a missing one)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_directory_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(cfg["packages"])
    dirs = {name: ROOT / path for name, path in cfg.get("package-dir", {}).items()}
    found = set()
    for init in (ROOT / "meshdoctor").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    for name, path in dirs.items():
        found.update(
            ".".join((name, *init.parent.relative_to(path).parts))
            for init in path.rglob("__init__.py")
        )
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set(), "these listed packages have no __init__.py"
