"""What identify reads of a process, read the cheap way (meshdoctor.ranks._username,
_environ), is what psutil gives: the same account name, and the environment whenever it holds a
variable identify looks at (else nothing, unparsed)."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

from meshdoctor import ranks


def test_name_and_environment_are_psutils():
    env = dict(os.environ, MLX_RANK="3")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    try:
        seen = 0
        for p in psutil.process_iter():
            try:
                want_env = p.environ()
                want_name = p.username()
            except psutil.Error:
                continue
            assert ranks._username(p) == want_name
            got = ranks._environ(p)
            keys = ranks.RANK_ENV_KEYS + (ranks.PROBE_MARKER_ENV, ranks.PARENT_MARKER_ENV)
            if any(k in want_env for k in keys):
                assert got == want_env
            else:  # parsed only when the block names one (a value may, harmlessly)
                assert got in ({}, want_env)
            seen += 1
        assert seen and ranks._environ(psutil.Process(child.pid))["MLX_RANK"] == "3"
    finally:
        child.kill()
        child.wait()
