"""A non-editable install ships every module and every data file: a wheel built from this tree
holds each ``.py`` file and each data file under ``meshdoctor/`` (an editable install, as the
tests use, would hide a package or a data file the build leaves out)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_wheel_of_this_tree_holds_every_module_and_data_file(tmp_path):
    pytest.importorskip("setuptools")  # built without isolation: no index is asked
    src = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(
        ROOT / "meshdoctor", src / "meshdoctor", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("meshdoctor-*.whl")
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("meshdoctor/")}
    tree = {
        f.relative_to(ROOT).as_posix()
        for f in (ROOT / "meshdoctor").rglob("*")
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"
    }
    assert tree - shipped == set(), "the wheel leaves these out: see [tool.setuptools] in pyproject"
