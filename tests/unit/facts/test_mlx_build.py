"""The MLX build fact's package scan: the MLX CUDA packages it names are those importlib.metadata
names, for wheel (dist-info) and egg-info installs, without the cost of importing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from meshdoctor.facts.context import NodeContext
from meshdoctor.facts import mlx_build, mlx_cache


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


# --- the cache of the probe's answer -------------------------------------------------------------


def _site_with_real_mlx(tmp_path):
    """A site directory whose ``mlx`` is the installed one, linked file by file, except its core
    extension, which is copied (so touching it touches only this copy)."""
    import importlib.util
    import shutil

    spec = importlib.util.find_spec("mlx")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("mlx is not installed here")
    real = Path(list(spec.submodule_search_locations)[0])
    site = tmp_path / "site"
    (site / "mlx").mkdir(parents=True)
    core = None
    for entry in real.iterdir():
        dst = site / "mlx" / entry.name
        if entry.name.startswith("core") and entry.name.endswith((".so", ".dylib")):
            shutil.copy2(entry, dst)
            core = dst
        else:
            dst.symlink_to(entry)
    for libs in real.parent.glob("mlx*.libs"):  # auditwheel's vendored libraries
        (site / libs.name).symlink_to(libs)
    assert core is not None
    return site, core


class ProbeCount:
    """Counts the MLX probe children started (through :func:`meshdoctor.execute.run`)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = mlx_build.NodeContext.command

        def command(ctx, *argv, **kw):
            if argv[1:2] == ("-c",) and "import mlx.core" in argv[2]:
                self.n += 1
            return real(ctx, *argv, **kw)

        monkeypatch.setattr(mlx_build.NodeContext, "command", command)


def _gather():
    return NodeContext(platform="linux").fact(mlx_build.gather_mlx)


@pytest.fixture
def cached_site(tmp_path, monkeypatch):
    if sys.platform != "linux":
        pytest.skip("the cache applies on Linux")
    site, core = _site_with_real_mlx(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("MESHDOCTOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv(mlx_cache.DISABLE_ENV, raising=False)
    monkeypatch.delenv("MESHDOCTOR_PYTHON", raising=False)
    return site, core, tmp_path / "state" / "cache" / "mlx_build"


def test_the_second_run_answers_from_the_cache_with_the_same_facts(cached_site, monkeypatch):
    site, core, folder = cached_site
    probes = ProbeCount(monkeypatch)
    first = _gather()
    assert first["probe"] == "ok" and first["installed"] is True, first
    assert "_files" not in first  # the file list stays out of the evidence
    assert probes.n == 1 and len(list(folder.glob("*.json"))) == 1
    second = _gather()
    assert probes.n == 1  # no child
    assert second == first
    entry = json.loads(next(folder.glob("*.json")).read_text())
    assert str(core) in entry["files"] and str(site) in entry["files"]
    assert oct(next(folder.glob("*.json")).stat().st_mode & 0o777) == "0o600"


def test_touching_the_core_extension_or_installing_a_package_runs_the_probe_again(
    cached_site, monkeypatch
):
    site, core, folder = cached_site
    probes = ProbeCount(monkeypatch)
    _gather()
    _gather()
    assert probes.n == 1
    st = core.stat()
    os.utime(core, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a real touch
    _gather()
    assert probes.n == 2
    _gather()
    assert probes.n == 2  # cached again, for the touched file
    (site / "somepkg-1.0.dist-info").mkdir()  # an install into the site directory
    _gather()
    assert probes.n == 3
    monkeypatch.setenv("MLX_SOMETHING", "1")  # another environment
    _gather()
    assert probes.n == 4


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\xffnot json",
        b"{",
        b"[]",
        b'{"key": {}, "files": {}, "answer": {}}',
        b'{"key": null, "files": "x", "answer": 3}',
    ],
)
def test_a_corrupt_cache_entry_is_ignored_and_replaced(cached_site, monkeypatch, garbage):
    site, core, folder = cached_site
    probes = ProbeCount(monkeypatch)
    first = _gather()
    path = next(folder.glob("*.json"))
    path.write_bytes(garbage)
    assert _gather() == first and probes.n == 2
    assert json.loads(path.read_text())["answer"]["version"] == first["version"]  # rewritten
    assert _gather() == first and probes.n == 2


def test_a_forged_entry_for_the_same_key_with_other_file_stamps_is_not_used(
    cached_site, monkeypatch
):
    site, core, folder = cached_site
    probes = ProbeCount(monkeypatch)
    _gather()
    path = next(folder.glob("*.json"))
    entry = json.loads(path.read_text())
    entry["files"][str(core)] = [0, 0, 0]
    entry["answer"]["version"] = "9.9.9"
    path.write_text(json.dumps(entry))
    assert _gather()["version"] != "9.9.9" and probes.n == 2


def test_gpu_builds_and_a_turned_off_cache_always_probe(cached_site, monkeypatch):
    cuda = {
        "installed": True,
        "backends": {"ring": True, "nccl": True},
        "cuda": {"available": True, "packages": ["mlx-cuda-13==0.32.4"]},
        "max_recommended_working_set_size": None,
    }
    assert not mlx_cache.cacheable(cuda)
    cpu = dict(cuda, cuda={"available": False, "packages": []}, backends={"ring": True})
    assert mlx_cache.cacheable(dict(cpu))
    assert not mlx_cache.cacheable(dict(cpu, max_recommended_working_set_size=1 << 30))
    assert not mlx_cache.enabled("darwin")
    probes = ProbeCount(monkeypatch)
    monkeypatch.setenv(mlx_cache.DISABLE_ENV, "0")
    _gather()
    _gather()
    assert probes.n == 2


def test_an_unusable_state_directory_still_inspects_mlx(cached_site, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MESHDOCTOR_STATE_DIR", str(blocker / "state"))  # cannot be created
    probes = ProbeCount(monkeypatch)
    assert _gather()["probe"] == "ok" and _gather()["probe"] == "ok"
    assert probes.n == 2


def test_a_bare_interpreter_name_is_keyed_by_what_path_finds(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env = {"PATH": str(bindir)}
    k = mlx_cache.key("python3", env, "probe")
    assert k["python_real"] == os.path.realpath(sys.executable)
    assert k["python_stat"] == mlx_cache.stat_sig(sys.executable)


def test_a_library_added_to_a_linker_directory_runs_the_probe_again(
    cached_site, tmp_path, monkeypatch
):
    libdir = tmp_path / "usr-lib"
    libdir.mkdir()
    monkeypatch.setattr(mlx_cache, "LIB_DIRS", (str(libdir),))
    probes = ProbeCount(monkeypatch)
    _gather()
    _gather()
    assert probes.n == 1
    (libdir / "libmpi.so").write_bytes(b"")  # what MLX's mpi backend dlopens
    _gather()
    assert probes.n == 2


def test_the_installed_mlx_folder_and_its_libraries_are_found(tmp_path, monkeypatch):
    """mlx ships as a namespace package (no ``__init__.py``): the fact names the ``mlx`` folder
    itself and the libraries in it, which the JACCL progress-guard scan (MD203/MD204) reads."""
    import importlib.util

    spec = importlib.util.find_spec("mlx")
    assert spec is not None and spec.submodule_search_locations
    want = os.path.realpath(list(spec.submodule_search_locations)[0])
    monkeypatch.setenv("MESHDOCTOR_MLX_CACHE", "0")
    data = mlx_build.gather_mlx(NodeContext(host="t", command_timeout=30.0))
    assert data["probe"] == "ok" and data["installed"], data
    assert os.path.realpath(data["path"]) == want
    assert data["libs"] and all(os.path.realpath(p).startswith(want + os.sep) for p in data["libs"])
    assert any(os.path.basename(p).startswith("core") for p in data["libs"])


def test_a_linked_cache_folder_is_never_written_through(cached_site, tmp_path, monkeypatch):
    """A `cache/` linked to a folder of root's files: the probe still answers, every run probes,
    and nothing there is overwritten or added."""
    site, core, folder = cached_site
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = tmp_path / "root-files"
    (target / "mlx_build").mkdir(parents=True)
    kept = target / "mlx_build" / "victim.json"
    kept.write_text("x" * 27)
    (state / "cache").symlink_to(target)
    probes = ProbeCount(monkeypatch)
    assert _gather()["probe"] == "ok" and _gather()["probe"] == "ok"
    assert probes.n == 2
    assert sorted(p.name for p in (target / "mlx_build").iterdir()) == ["victim.json"]
    assert kept.read_text() == "x" * 27


def test_a_linked_or_fifo_entry_is_not_read_and_is_replaced_by_a_file(cached_site, monkeypatch):
    site, core, folder = cached_site
    probes = ProbeCount(monkeypatch)
    _gather()
    [entry] = folder.glob("*.json")
    entry.unlink()
    os.mkfifo(entry)  # no writer: an open for reading would block
    assert _gather()["probe"] == "ok"  # answered (the FIFO is never opened blocking)
    assert probes.n == 2
    assert entry.is_file() and not entry.is_symlink()  # a write replaces the FIFO
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
