"""The one place that runs external commands, always with a deadline.

Commands are argument lists, never shell strings: nothing from a hostfile or a log reaches a shell.
Each command runs in its own session (process group); on timeout the whole group gets SIGKILL, so a
hung ``ibv_devinfo`` or ``system_profiler`` and any children it forked are gone before we return.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

DEFAULT_TIMEOUT_S = 5.0


@dataclass
class CommandResult:
    """Outcome of one command.

    ``returncode`` is None when the command timed out or could not start; ``timed_out`` says which.
    ``missing`` is True when the executable is not on PATH. ``stdout``/``stderr`` are text
    (decoded as UTF-8 with replacement). ``duration_s`` is wall time in seconds.
    """

    argv: Sequence[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    missing: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe(self) -> str:
        """A one-line account for evidence and error messages (an argument longer than 80
        characters, such as an inline script, is shortened)."""
        cmd = " ".join(a if len(a) <= 80 else a[:40].split("\n")[0] + "..." for a in self.argv)
        if self.missing:
            if self.argv and "/" in str(self.argv[0]):  # a path: PATH was never searched
                return f"`{cmd}`: no such executable file"
            return f"`{cmd}`: command not found on PATH"
        if self.timed_out:
            return f"`{cmd}` did not finish within {self.duration_s:.1f} s (killed)"
        if self.returncode is None:
            return f"`{cmd}` not run: {self.stderr.strip()[:200]}"
        tail = [ln.strip() for ln in (self.stderr or self.stdout).strip().splitlines()[-1:]] \
            or [""]
        return f"`{cmd}` exited {self.returncode}" + (f": {tail[0][:200]}" if tail[0] else "")


def which(name: str) -> Optional[str]:
    """Full path of ``name`` on PATH, or None."""
    return shutil.which(name)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def run(argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S, *,
        env: Optional[Dict[str, str]] = None, input: Optional[str] = None) -> CommandResult:
    """Run ``argv`` (a list; no shell) with a deadline of ``timeout`` seconds.

    Never raises for a missing executable, a non-zero exit or a timeout: those are reported in the
    :class:`CommandResult`. On timeout the command's whole process group is killed with SIGKILL.
    """
    argv = [str(a) for a in argv]
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            env=env, start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        return CommandResult(argv, None, "", str(exc), time.monotonic() - t0, missing=True)
    try:
        out, err = proc.communicate(input=input.encode() if input is not None else None,
                                    timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:  # pipes held open by an unkillable grandchild
            out, err = b"", b""
        return CommandResult(argv, None, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"), time.monotonic() - t0,
                             timed_out=True)
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    return CommandResult(argv, proc.returncode, out.decode("utf-8", "replace"),
                         err.decode("utf-8", "replace"), time.monotonic() - t0)


def spawn(argv: Sequence[str], *, env: Optional[Dict[str, str]] = None,
          stdin: Any = subprocess.DEVNULL) -> subprocess.Popen:
    """Start a long-running ``argv`` (a probe rank, its ssh client) in its own session with
    stdout and stderr piped. The caller owns it: its deadline, its signals, its reaping.
    Raises OSError when it cannot be started."""
    return subprocess.Popen([str(a) for a in argv], env=env, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
