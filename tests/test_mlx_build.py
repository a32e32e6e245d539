"""The MLX build fact's package scan: the MLX CUDA packages it names are those importlib.metadata
names, for wheel (dist-info) and egg-info installs, without the cost of importing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from meshdoctor.facts import mlx_build


def _dist(site, dirname, name, version, meta="METADATA"):
    d = site / dirname
    d.mkdir(parents=True)
    (d / meta).write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x\n\nName: not-me\n"
    )


def _in_child(code, site):
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cuda_package_scan_matches_importlib_metadata(tmp_path):
    site = tmp_path / "site"
    _dist(site, "mlx_cuda_13-0.32.4.dist-info", "mlx-cuda-13", "0.32.4")
    _dist(site, "MLX_CUDA_12-0.31.0.dist-info", "mlx_cuda_12", "0.31.0")
    _dist(site, "mlx_cuda_11.egg-info", "mlx-cuda-11", "0.29.0", meta="PKG-INFO")
    _dist(site, "mlx_metal-0.32.4.dist-info", "mlx-metal", "0.32.4")  # not a CUDA package
    (site / "mlx_cuda_broken-1.0.dist-info").mkdir()  # no METADATA: skipped by both
    scan = _in_child(
        mlx_build._SCAN_CUDA + "import json; print(json.dumps(mlx_cuda_dists()))", site
    )
    reference = _in_child(
        "import importlib.metadata as md, json\n"
        "out = []\n"
        "for d in md.distributions():\n"
        "    nm = (d.metadata['Name'] or '').lower().replace('_', '-')\n"
        "    if nm.startswith('mlx-cuda'):\n"
        "        out.append([nm, d.version])\n"
        "print(json.dumps(out))\n",
        site,
    )
    assert sorted(map(tuple, json.loads(scan))) == sorted(map(tuple, json.loads(reference)))
    assert ("mlx-cuda-13", "0.32.4") in map(tuple, json.loads(scan))


def test_cuda_packages_names_them_for_an_interpreter(tmp_path, monkeypatch):
    site = tmp_path / "site"
    _dist(site, "mlx_cuda_13-0.32.4.dist-info", "mlx-cuda-13", "0.32.4")
    monkeypatch.setenv("PYTHONPATH", str(site))
    assert mlx_build.cuda_packages(sys.executable) == ["mlx-cuda-13"]
    assert mlx_build.cuda_major_of(["mlx-cuda-13==0.32.4"]) == 13
