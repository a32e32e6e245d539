"""pyproject.toml's requires-python, MLX's and MD101's minimum Python agree, and the README says
it."""

from __future__ import annotations


def test_requires_python_says_what_mlx_needs():
    """pip must refuse an interpreter MLX cannot install into, and MD101 must agree."""
    import tomllib
    from importlib import metadata
    from pathlib import Path

    from meshdoctor.checks.node_platform import MIN_PYTHON
    from packaging.specifiers import SpecifierSet

    root = Path(__file__).resolve().parents[2]
    ours = SpecifierSet(
        tomllib.loads((root / "pyproject.toml").read_text())["project"]["requires-python"]
    )
    mlx = SpecifierSet(metadata.metadata("mlx")["Requires-Python"] or "")
    for minor in range(6, 16):
        v = f"3.{minor}"
        assert (v in ours) == (v in mlx), (v, str(ours), str(mlx))
    assert f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}" in ours
    assert f"{MIN_PYTHON[0]}.{MIN_PYTHON[1] - 1}" not in ours
    assert "Python 3.10+" in (root / "README.md").read_text()
