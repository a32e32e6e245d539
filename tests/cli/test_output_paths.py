"""Every file a command writes at the user's word (``check``/``triage --output``, ``launch
--json``/``--log``, ``bundle -o``, ``probe --save-baseline``) through the real CLI: a character
device stays a device (a node made here with /dev/null's major and minor, never /dev/null
itself), a FIFO is written through and stays a FIFO, a link to /dev/stdout writes where standard
output goes (appended, not from offset 0), a folder or a missing folder is a usage error before
any work (exit 2; launch starts no job)."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path
from typing import List

import pytest

from tests.helpers import run_cli

ROOT = os.geteuid() == 0


def _commands(target: str, tmp: Path) -> dict:
    log = tmp / "rank.log"
    job = [sys.executable, "-c", "print('job output')"]
    return {
        "check --output": ["check", "--local-only", "--only", "MD101", "--output", target],
        "triage --output": ["triage", "--format", "json", "--output", target, str(log)],
        "launch --json": ["launch", "--no-check", "--json", target, "--", *job],
        "launch --log": ["launch", "--no-check", "--log", target, "--", *job],
        "bundle -o": ["bundle", "--since", "1h", "-o", target],
        "probe --save-baseline": [
            "probe",
            "-n",
            "2",
            "--size",
            "4096",
            "--iters",
            "1",
            "--save-baseline",
            target,
        ],
    }


NAMES = list(_commands("x", Path("/nowhere")))


def _needs(name: str) -> None:
    if name.startswith(("launch", "probe")):
        pytest.importorskip("mlx.core")


def _run(name: str, target: str, tmp: Path, env) -> "object":
    (tmp / "rank.log").write_text("rank 0 step 3 sum 6\n")
    # a private PID namespace: a probe -n or a gate never meets another job's ranks on the box
    return run_cli(
        *_commands(target, tmp)[name], env=env, timeout=240, cwd=str(tmp), private_pids=True
    )


@pytest.mark.skipif(not ROOT, reason="mknod of a character device needs root")
@pytest.mark.parametrize("name", NAMES)
def test_a_character_device_stays_a_device(name, tmp_path, clean_env):
    _needs(name)
    dev = tmp_path / "null"
    rdev = os.stat("/dev/null").st_rdev
    os.mknod(dev, stat.S_IFCHR | 0o666, rdev)
    r = _run(name, str(dev), tmp_path, clean_env)
    assert r.rc == 0, (r.out[-2000:], r.err[-2000:])
    st = os.lstat(dev)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev, "the device was replaced"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("name", NAMES)
def test_a_fifo_is_written_through_and_stays_a_fifo(name, tmp_path, clean_env):
    _needs(name)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    w_fd = os.open(fifo, os.O_WRONLY)  # ours: the reader sees EOF only once we close it
    os.set_blocking(r_fd, True)
    got: List[bytes] = []

    def read():
        while True:
            b = os.read(r_fd, 65536)
            if not b:
                return
            got.append(b)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    try:
        r = _run(name, str(fifo), tmp_path, clean_env)
    finally:
        os.close(w_fd)
        t.join(60)
        os.close(r_fd)
    assert r.rc == 0, (r.out[-2000:], r.err[-2000:])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert b"".join(got), "nothing came through the FIFO"


@pytest.mark.parametrize("name", NAMES)
def test_a_folder_or_a_missing_folder_is_a_usage_error_before_any_work(name, tmp_path, clean_env):
    _needs(name)
    (tmp_path / "dir").mkdir()
    for target in (str(tmp_path / "dir"), str(tmp_path / "no" / "out")):
        r = _run(name, target, tmp_path, clean_env)
        assert r.rc == 2, (target, r.rc, r.err[-2000:])
        assert "Invalid value" in r.err and "Traceback" not in r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "rank.log"]


def test_launch_checks_its_output_paths_before_the_job_starts(tmp_path, clean_env):
    marker = tmp_path / "ran"
    job = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    for option in ("--json", "--log"):
        r = run_cli(
            "launch",
            "--no-check",
            option,
            str(tmp_path / "no" / "v.json"),
            "--",
            *job,
            env=clean_env,
            timeout=120,
        )
        assert r.rc == 2 and "does not exist" in r.err, (option, r.rc, r.err[-1500:])
        assert not marker.exists(), f"the job ran although {option} cannot be written"


def test_a_link_to_dev_stdout_writes_where_standard_output_goes(tmp_path, clean_env):
    import subprocess

    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    into = tmp_path / "seen.txt"
    into.write_text("before\n")
    with open(into, "a") as fh:  # `>>`: what is there stays
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "meshdoctor",
                "check",
                "--local-only",
                "--only",
                "MD101",
                "--format",
                "oneline",
                "--output",
                str(link),
            ],
            stdout=fh,
            stderr=subprocess.PIPE,
            env=clean_env,
            timeout=60,
            text=True,
        )
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    text = into.read_text()
    assert text.startswith("before\nGO "), text


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--hostfile", "{hf}", "--healthy-hostfile"],
        ["probe", "--hostfile", "{hf}", "--pairs", "--healthy-hostfile"],
        ["fix", "auto-setup", "--output-hostfile"],
    ],
)
def test_every_other_output_path_is_judged_when_the_options_are_read(args, tmp_path, clean_env):
    hf = tmp_path / "hosts.json"
    hf.write_text('[{"ssh": "127.0.0.1"}, {"ssh": "127.0.0.1"}]')
    argv = [a.format(hf=hf) for a in args]
    for target in (tmp_path, tmp_path / "no" / "out.json"):
        r = run_cli(*argv, str(target), env=clean_env, timeout=60)
        assert r.rc == 2 and "Invalid value" in r.err, (target, r.rc, r.err[-1500:])
        assert ("does not exist" in r.err) == (target != tmp_path), r.err
