"""meshdoctor.ship: the zip application, its cache and BOOT, run here by the system interpreter
(/usr/bin/python3, which has nothing of ours: no meshdoctor, click, platformdirs or psutil)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import zipfile

import pytest

from meshdoctor import ship

SYSTEM_PY = "/usr/bin/python3"
pytestmark = pytest.mark.skipif(not os.access(SYSTEM_PY, os.X_OK), reason="no /usr/bin/python3")


def boot(argv, cache, stdin=None):
    env = {"PATH": os.environ["PATH"], "HOME": str(cache), "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd="/", timeout=120
    )


def test_the_same_files_give_the_same_bytes_and_the_zip_holds_what_runs_remotely():
    ship.payload.cache_clear()
    first = ship.payload()
    ship.payload.cache_clear()
    assert ship.payload() == first
    names = zipfile.ZipFile(io.BytesIO(first)).namelist()
    assert "__main__.py" in names and "meshdoctor/verdict.schema.json" in names
    assert "meshdoctor/checks/mlx_runtime.py" in names and "click/core.py" in names
    assert "platformdirs/__init__.py" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert ship.digest() == hashlib.sha256(first).hexdigest()


def test_store_then_run_with_nothing_installed(tmp_path):
    absent = boot(ship.run_argv(SYSTEM_PY, ["--version"]), tmp_path)
    assert absent.returncode == ship.EXIT_ABSENT and ship.boot_said(absent.stderr)
    stored = boot(ship.store_argv(SYSTEM_PY), tmp_path, ship.upload_text())
    assert stored.returncode == 0, stored.stderr
    folder = tmp_path / "meshdoctor"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert [p.name for p in folder.iterdir()] == [f"{ship.digest()}.pyz"]  # no temporary left
    r = boot(
        ship.run_argv(SYSTEM_PY, ["check", "--local-only", "--json", "--only", "MD103"]), tmp_path
    )
    doc = json.loads(r.stdout)
    assert doc["tool"]["name"] == "meshdoctor" and [x["code"] for x in doc["results"]] == ["MD103"]
    r = boot(ship.run_argv(SYSTEM_PY, [], "meshdoctor.facts.boottime"), tmp_path)
    assert "boot_time" in json.loads(r.stdout), r.stderr


def test_a_wrong_upload_a_tampered_entry_and_a_shared_folder_are_refused(tmp_path):
    bad = boot(ship.store_argv(SYSTEM_PY), tmp_path, "aGVsbG8=")  # "hello"
    assert bad.returncode == ship.EXIT_BAD_UPLOAD
    assert not (tmp_path / "meshdoctor" / f"{ship.digest()}.pyz").exists()
    assert boot(ship.store_argv(SYSTEM_PY), tmp_path, ship.upload_text()).returncode == 0
    entry = tmp_path / "meshdoctor" / f"{ship.digest()}.pyz"
    planted = tmp_path / "ran"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("meshdoctor/__init__.py", "")
        z.writestr("meshdoctor/__main__.py", f"open({str(planted)!r}, 'w').write('x')\n")
    entry.write_bytes(buf.getvalue())
    r = boot(ship.run_argv(SYSTEM_PY, ["--version"]), tmp_path)
    assert r.returncode == ship.EXIT_ABSENT and "not whole" in r.stderr and not planted.exists()
    entry.unlink()
    (tmp_path / "elsewhere.pyz").write_bytes(ship.payload())
    entry.symlink_to(tmp_path / "elsewhere.pyz")  # a link is not a file of ours
    r = boot(ship.run_argv(SYSTEM_PY, ["--version"]), tmp_path)
    assert r.returncode == ship.EXIT_ABSENT
    entry.unlink()
    (tmp_path / "meshdoctor").chmod(0o777)
    r = boot(ship.store_argv(SYSTEM_PY), tmp_path, ship.upload_text())
    assert r.returncode == ship.EXIT_UNSAFE and not entry.exists()
    r = boot(ship.run_argv(SYSTEM_PY, ["meshdoctor.x"], "os"), tmp_path)
    assert r.returncode != 0


def test_a_store_never_replaces_a_link_or_a_fifo_at_the_cache_entry(tmp_path):
    folder = tmp_path / "meshdoctor"
    folder.mkdir(mode=0o700)
    entry = folder / f"{ship.digest()}.pyz"
    target = tmp_path / "theirs"
    target.write_text("not ours to replace")
    entry.symlink_to(target)
    r = boot(ship.store_argv(SYSTEM_PY), tmp_path, ship.upload_text())
    assert r.returncode == ship.EXIT_UNSAFE and "not a regular file" in r.stderr
    assert entry.is_symlink() and target.read_text() == "not ours to replace"
    entry.unlink()
    os.mkfifo(entry)
    r = boot(ship.store_argv(SYSTEM_PY), tmp_path, ship.upload_text())
    assert r.returncode == ship.EXIT_UNSAFE and entry.is_fifo()
    assert sorted(p.name for p in folder.iterdir()) == [entry.name]  # no temporary left
