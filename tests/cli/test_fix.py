"""``meshdoctor fix`` through the CLI, whatever the fix (each fix's own tests are in
tests/fixes/)."""

from __future__ import annotations

import json

import pytest


def test_an_unknown_fix_name_is_a_usage_error_listing_the_fixes():
    from tests.helpers import run_cli

    r = run_cli("fix", "no-such-fix", "--json")
    assert r.rc == 2 and r.out == ""
    assert "no fix 'no-such-fix'; fixes: stale-ranks, reset-group, auto-setup, bridge0" in r.err


def _shared_dir():
    import os
    import tempfile

    d = tempfile.mkdtemp(prefix="md-shared-")
    os.chmod(d, 0o1777)  # like /tmp: every user may add to it
    return d


def test_a_lock_another_user_linked_to_a_root_file_is_never_written():
    """A shared, world-writable MESHDOCTOR_STATE_DIR where another user linked fix.lock to a
    file of root's: root's fix refuses (MD700, what to do) and the file keeps its bytes."""
    import os
    import shutil

    from tests.helpers import other_user, run_cli

    shared = _shared_dir()
    try:
        victim = os.path.join(shared, "root-owned")
        with open(victim, "w") as f:
            f.write("x" * 35)
        os.chmod(victim, 0o644)
        state = os.path.join(shared, "state")
        with other_user() as as_them:
            assert as_them(f"mkdir {state} && chmod 777 {state}").returncode == 0
            assert as_them(f"ln -s {victim} {state}/fix.lock").returncode == 0
            env = dict(os.environ, MESHDOCTOR_STATE_DIR=state)
            r = run_cli("fix", "stale-ranks", "--yes", "--json", env=env, private_pids=True)
            assert r.rc == 3, r.err
            [res] = r.results("MD700")
            assert res["status"] == "error"
            assert f"state directory {state} cannot be used (owned by uid" in res["summary"]
            assert "of your own that nobody else can write (mode 0700)" in res["summary"]
            assert os.path.getsize(victim) == 35
            # the same directory made ours but still open to everyone: refused as well
            os.chown(state, 0, 0)
            r = run_cli("fix", "stale-ranks", "--yes", "--json", env=env, private_pids=True)
            assert r.rc == 3
            summary = r.results("MD700")[0]["summary"]
            assert "(mode 0777: others can write it); chmod 700 it, or set" in summary
            assert os.path.getsize(victim) == 35
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_linked_lock_in_our_own_state_directory_is_refused_not_followed(tmp_path):
    import os

    from tests.helpers import run_cli

    victim = tmp_path / "root-owned"
    victim.write_text("x" * 35)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "fix.lock").symlink_to(victim)
    env = dict(os.environ, MESHDOCTOR_STATE_DIR=str(state))
    r = run_cli("fix", "stale-ranks", "--yes", "--json", env=env, private_pids=True)
    assert r.rc == 3, r.err
    summary = r.results("MD700")[0]["summary"]
    assert f"the fix lock {state / 'fix.lock'} cannot be used (a symbolic link)" in summary
    assert "remove it, then run the fix again" in summary
    assert victim.read_text() == "x" * 35


def test_an_emergency_fix_runs_without_a_usable_state_directory(tmp_path):
    """Reported: `fix stale-ranks` on a node whose home is read-only or full refused for want of
    a state directory. The lock goes to the runtime directory and the run says so (MD700 warn);
    an untrusted state directory or a file in its place is still refused (the tests above,
    tests/cli/test_unusable_input.py)."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.helpers import VALIDATOR

    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) for a read-only mount in a private namespace")
    home = tmp_path / "home"
    home.mkdir()
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = dict(os.environ, MESHDOCTOR_STATE_DIR=str(home / "state"), XDG_RUNTIME_DIR=str(run))
    cmd = f"mount -t tmpfs -o ro none {home} && exec {sys.executable} -m meshdoctor fix stale-ranks --yes --json"
    p = subprocess.run(
        ["unshare", "-m", "-p", "-f", "--mount-proc", "sh", "-c", cmd],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if p.returncode not in (0, 1, 3) and "mount" in p.stderr:
        pytest.skip(f"no private read-only mount here: {p.stderr.strip()[:200]}")
    doc = json.loads(p.stdout)
    VALIDATOR.validate(doc)
    assert p.returncode == 0, (doc["results"], p.stderr)
    res = {r["code"]: r for r in doc["results"]}
    assert res["MD701"]["status"] == "ok"
    warn = res["MD700"]
    assert warn["status"] == "warn"
    assert f"the fix ran with its lock in {run / 'meshdoctor' / 'fix.lock'}" in warn["summary"]
    assert "Read-only file system" in warn["summary"] and "no receipt" in warn["summary"]
    assert oct(os.stat(run / "meshdoctor").st_mode & 0o777) == "0o700"
