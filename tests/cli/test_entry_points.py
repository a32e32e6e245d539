"""``meshdoctor --version`` and ``--help``; ``python -m meshdoctor`` and the console script
agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import run_cli


def test_version_and_help_exit_zero():
    r = run_cli("--version")
    assert r.rc == 0 and "meshdoctor" in r.out
    r = run_cli("--help")
    assert r.rc == 0
    assert "Exit codes" in r.out and "check" in r.out


def test_python_dash_m_and_console_script_agree():
    import shutil

    exe = Path(sys.executable).with_name("meshdoctor")
    exe = str(exe) if exe.exists() else shutil.which("meshdoctor")
    assert exe, "the meshdoctor console script is not installed"
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout == run_cli("--version").out
