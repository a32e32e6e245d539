"""pytest fixtures shared by the test files; the helpers they import are in tests/helpers.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Dict, Optional

import pytest

from meshdoctor.ranks import find_ranks
from tests import stubs


@pytest.fixture
def fake_mac(tmp_path):
    """``fake_mac("healthy", "wired-leftover", extra={...})`` -> env of a fake Mac node."""

    def make(*sets: str, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        return stubs.install(tmp_path / "bin", sets, extra=extra)

    return make


@pytest.fixture
def clean_env():
    """This environment without MLX_*/JACCL_* variables (CI or a developer shell may have some)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}


def _spawn(env_extra, args=None):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen(
        args or [sys.executable, "-c", "import time; time.sleep(120)"],
        env=env,
        start_new_session=True,
    )
    for _ in range(50):  # wait until its environment is visible
        if any(r.pid == p.pid for r in find_ranks()):
            break
        time.sleep(0.05)
    return p


@pytest.fixture
def stray():
    procs = []

    def make(env_extra, args=None):
        p = _spawn(env_extra, args)
        procs.append(p)
        return p

    yield make
    for p in procs:  # the whole session: a shell's children (sleep) must not outlive it
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=10)
