"""Fake-Mac test bed: stub commands first on PATH that print fixture files.

A fixture set is a directory ``tests/fixtures/mac/<set>/`` of files named after the command and
its arguments (see ``tests/stubcmd.py``). :func:`install` writes one small wrapper per command into
``bindir`` and returns the environment that puts them first on PATH and tells meshdoctor to assume
macOS. Layer sets to vary one thing: ``install(bindir, ["healthy", "wired-leftover"])`` serves a
file from the last set that has it.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Dict, Iterable, Optional, Union

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "mac"
STUBCMD = HERE / "stubcmd.py"

# Every command a fake Mac answers (formats of the real tools: rdma-core, Apple's system_profiler, networksetup, ifconfig).
MAC_COMMANDS = (
    "sw_vers",
    "uname",
    "vm_stat",
    "sysctl",
    "ibv_devinfo",
    "ibv_devices",
    "system_profiler",
    "networksetup",
    "rdma_ctl",
    "ifconfig",
    "route",
    "launchctl",
    "pmset",
)


def merge_sets(dest: Path, sets: Iterable[Union[str, Path]]) -> Path:
    """Copy the fixture sets into ``dest`` in order (later sets override files of earlier ones)."""
    dest.mkdir(parents=True, exist_ok=True)
    for s in sets:
        src = Path(s) if os.path.isabs(str(s)) else FIXTURES / str(s)
        if not src.is_dir():
            raise FileNotFoundError(f"no fixture set {src}")
        for f in src.iterdir():
            if f.is_file():
                shutil.copy(f, dest / f.name)
    return dest


def install(
    bindir: Union[str, Path],
    sets: Iterable[Union[str, Path]],
    extra: Optional[Dict[str, str]] = None,
    platform: str = "darwin",
) -> Dict[str, str]:
    """Create stub wrappers in ``bindir`` serving ``sets``; return an environment to run with.

    ``extra`` maps file names to contents written into the merged fixture dir (for one-off
    variations, e.g. ``{"vm_stat.hang": "30"}``).
    """
    bindir = Path(bindir)
    fixdir = merge_sets(bindir.parent / (bindir.name + "-fixtures"), sets)
    for name, text in (extra or {}).items():
        (fixdir / name).write_text(text)
    bindir.mkdir(parents=True, exist_ok=True)
    for cmd in MAC_COMMANDS:
        w = bindir / cmd
        w.write_text(f'#!/bin/sh\nexec {sys.executable} {STUBCMD} {fixdir} {cmd} "$@"\n')
        w.chmod(w.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    sudo = bindir / "sudo"  # passwordless unless the fixture set has a sudo.deny file
    sudo.write_text(
        f"#!/bin/sh\nif [ -f {fixdir}/sudo.deny ]; then echo 'sudo: a password is "
        'required\' >&2; exit 1; fi\n[ "$1" = -n ] && shift\nexec "$@"\n'
    )
    sudo.chmod(sudo.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["MESHDOCTOR_PLATFORM"] = platform
    return env
