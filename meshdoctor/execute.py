"""The one place that runs external commands, always with a deadline.

Commands are argument lists, never shell strings: nothing from a hostfile or a log reaches a shell.
Each command runs in its own session (process group); on timeout the whole group gets SIGKILL, so a
hung ``ibv_devinfo`` or ``system_profiler`` and any children it forked are gone before we return.
Every read is bounded in bytes as well as time: a command that prints more than ``max_bytes`` on
stdout or stderr (default :data:`MAX_OUTPUT_BYTES`) is killed the same way at that cap, and its
result says it was cut (``cut``), so a tool or a remote host that never stops printing costs at
most that much memory and its deadline.
Every group started here is also remembered until it is reaped, so that :func:`stop_all` (called on
an interrupt and at interpreter exit) kills whatever is still running on any exit path.

Every command carries :data:`PARENT_MARKER_ENV` (this process's pid) in its environment, inherited by
whatever it forks: rank identification (:mod:`meshdoctor.ranks`) never takes a process marked by a
live meshdoctor for a rank, even when it inherited ``MLX_RANK`` from the shell and whatever its
parentage. The exception is a probe rank (its environment has ``MESHDOCTOR_PROBE_ID``): it is a
rank by design and is found by that marker.

Each command run by :func:`run` also carries :data:`COMMAND_MARKER_ENV`, a token of its own:
a child that leaves the command's process group (``setsid``, a daemon's double fork) still
inherits it, so when the command is killed (deadline, cap, interrupt, exit) every process that
carries the token is killed too, with its own group: nothing a tool started outlives meshdoctor.
"""

from __future__ import annotations

import atexit
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from meshdoctor.text import shell_line

DEFAULT_TIMEOUT_S = 5.0
MAX_OUTPUT_BYTES = 8 * 1024 * 1024  # per stream; `ibv_devinfo -v` prints tens of KB
_CHUNK = 65536
PARENT_MARKER_ENV = "MESHDOCTOR_PARENT_PID"  # pid of the meshdoctor that started the command
PROBE_MARKER_ENV = "MESHDOCTOR_PROBE_ID"  # == meshdoctor.ranks.PROBE_MARKER_ENV
COMMAND_MARKER_ENV = "MESHDOCTOR_COMMAND_ID"  # token of one command run(): "<our pid>.<n>"
_TOKENS = iter(range(1, 1 << 62))

_LIVE: List[subprocess.Popen] = []  # every group started here and not known to be reaped
# the tokens of run()'s commands from just before their start until they are reaped: a command
# whose Popen returned but which its thread had not tracked yet when stop_all swept (a thread
# descheduled in between, then stopped with the interpreter) is still found by its token
_OPEN_TOKENS: set = set()
_LIVE_LOCK = threading.Lock()
_STOPPING: Dict[str, bool] = {"final": False}  # set by stop_all(final=True): start nothing new


@dataclass
class CommandResult:
    """Outcome of one command.

    ``returncode`` is None when the command timed out, was cut or could not start; ``timed_out``
    and ``cut`` say which. ``cut`` names the stream (``stdout``/``stderr``) that went over the
    byte cap ``cap_bytes``: the command was killed there and that stream holds its first
    ``cap_bytes`` bytes. ``missing`` is True when the executable is not on PATH.
    ``stdout``/``stderr`` are text (decoded as UTF-8 with replacement). ``duration_s`` is wall
    time in seconds.
    """

    argv: Sequence[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    missing: bool = False
    cut: Optional[str] = None
    cap_bytes: int = 0

    @property
    def ok(self) -> bool:
        """True when the command exited 0 within its deadline."""
        return self.returncode == 0 and not self.timed_out

    def describe(self) -> str:
        """A one-line account for evidence and error messages: the command line with every
        word quoted (:func:`meshdoctor.text.shell_line`: a path or a host from outside is shown
        as one word); an argument longer than 80 characters, such as an inline script, is
        shortened."""
        cmd = shell_line(a if len(a) <= 80 else a[:40].split("\n")[0] + "..." for a in self.argv)
        if self.missing:
            if self.argv and "/" in str(self.argv[0]):  # a path: PATH was never searched
                return f"`{cmd}`: no such executable file"
            return f"`{cmd}`: command not found on PATH"
        if self.timed_out:
            return f"`{cmd}` did not finish within {self.duration_s:.1f} s (killed)"
        if self.cut:
            return (
                f"`{cmd}` printed more than {self.cap_bytes} bytes on {self.cut} "
                "(cut there and killed)"
            )
        if self.returncode is None:
            return f"`{cmd}` not run: {self.stderr.strip()[:200]}"
        tail = [ln.strip() for ln in (self.stderr or self.stdout).strip().splitlines()[-1:]] or [""]
        return f"`{cmd}` exited {self.returncode}" + (f": {tail[0][:200]}" if tail[0] else "")


def which(name: str) -> Optional[str]:
    """Full path of ``name`` on PATH, or None."""
    return shutil.which(name)


def marked_env(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """``env`` (default: this process's environment) plus :data:`PARENT_MARKER_ENV` set to this
    process's pid; a probe rank's environment (it has ``MESHDOCTOR_PROBE_ID``) gets no marker, and
    a marker inherited from another meshdoctor is replaced by ours."""
    out = dict(os.environ if env is None else env)
    if PROBE_MARKER_ENV in out:
        out.pop(PARENT_MARKER_ENV, None)
    else:
        out[PARENT_MARKER_ENV] = str(os.getpid())
    return out


def _track(proc: subprocess.Popen) -> None:
    with _LIVE_LOCK:
        _LIVE[:] = [p for p in _LIVE if p.returncode is None]
        _LIVE.append(proc)
        late = _STOPPING["final"]
    if late:  # started while stop_all swept: it goes too
        _kill_group(proc)


def _untrack(proc: subprocess.Popen) -> None:
    with _LIVE_LOCK:
        if proc in _LIVE:
            _LIVE.remove(proc)


def stop_all(final: bool = False) -> int:
    """SIGKILL the process group of every command started here that has not been reaped yet
    (:func:`run`'s and :func:`spawn`'s alike). Returns how many groups were signalled; never
    raises. Called on an interrupt and at interpreter exit: nothing meshdoctor started outlives
    it. ``final``: from now on :func:`run` starts nothing (it answers "not run") and
    :func:`spawn` raises OSError, so a check thread still running cannot start a new command
    after the sweep."""
    with _LIVE_LOCK:
        if final:
            _STOPPING["final"] = True
        procs, _LIVE[:] = list(_LIVE), []
        tokens = set(_OPEN_TOKENS)
    n = 0
    for proc in procs:
        if proc.returncode is None:
            _kill_group(proc, sweep=False)
            n += 1
    tokens |= {t for t in (getattr(p, "_md_token", None) for p in procs) if t}
    _kill_marked(tokens)
    return n


atexit.register(stop_all, final=True)


def _kill_group(proc: subprocess.Popen, sweep: bool = True) -> None:
    """SIGKILL ``proc``'s process group; ``sweep``: and every process that carries its
    command's token and left the group (:func:`_kill_marked`)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    token = getattr(proc, "_md_token", None)
    if sweep and token:
        _kill_marked({token})


def _kill_marked(tokens: set) -> int:
    """SIGKILL every process (and the group it leads) whose environment carries
    :data:`COMMAND_MARKER_ENV` with one of ``tokens``: the children of our commands that left
    their process group. Only processes whose environment we may read (ours) are looked at;
    never this process. Returns how many were signalled; never raises."""
    if not tokens:
        return 0
    try:
        from meshdoctor.proctable import psutil
    except ImportError:  # pragma: no cover - a dependency
        return 0
    n, me = 0, os.getpid()
    for p in psutil.process_iter():
        if p.pid == me:
            continue
        try:
            if not tokens.intersection(p.environ().get(COMMAND_MARKER_ENV, "").split(",")):
                continue
            leader = os.getpgid(p.pid) == p.pid
            if leader:
                os.killpg(p.pid, signal.SIGKILL)
            else:
                os.kill(p.pid, signal.SIGKILL)
            n += 1
        except (psutil.Error, OSError):
            continue
    return n


def _collect(
    proc: subprocess.Popen, data: Optional[bytes], deadline: float, cap: int
) -> Tuple[bytes, bytes, str]:
    """Feed ``data`` to ``proc``'s stdin and read its stdout and stderr until both close and it
    exits, the monotonic ``deadline`` passes (``"timeout"``) or a stream goes over ``cap`` bytes
    (``"stdout"``/``"stderr"``, that stream kept to ``cap`` bytes); ``""`` when it finished."""
    bufs = {"stdout": bytearray(), "stderr": bytearray()}
    sel = selectors.DefaultSelector()
    try:
        for name in bufs:
            f = getattr(proc, name)
            os.set_blocking(f.fileno(), False)
            sel.register(f.fileno(), selectors.EVENT_READ, name)
        todo = memoryview(data or b"")
        if proc.stdin is not None:
            if todo:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
            else:
                proc.stdin.close()
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(bufs["stdout"]), bytes(bufs["stderr"]), "timeout"
            for key, _ in sel.select(min(left, 1.0)):
                if key.data == "stdin":
                    try:
                        todo = todo[os.write(key.fd, todo[:_CHUNK]) :]
                    except BlockingIOError:
                        continue
                    except OSError:  # it stopped reading (EPIPE): the rest is not wanted
                        todo = todo[:0]
                    if not todo:
                        sel.unregister(key.fd)
                        proc.stdin.close()  # type: ignore[union-attr]
                    continue
                try:
                    chunk = os.read(key.fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                buf = bufs[key.data]
                buf += chunk
                if len(buf) > cap:
                    del buf[cap:]
                    return bytes(bufs["stdout"]), bytes(bufs["stderr"]), key.data
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return bytes(bufs["stdout"]), bytes(bufs["stderr"]), "timeout"
        return bytes(bufs["stdout"]), bytes(bufs["stderr"]), ""
    finally:
        sel.close()


def read_until(f: Any, until: float, limit: int = 4096) -> bytes:
    """What the pipe ``f`` holds until it closes, ``limit`` bytes are read or the monotonic time
    ``until`` passes, whichever is first; never blocks past ``until``. For a pipe a process we
    did not start may still hold: an OpenSSH master that came up with a command keeps a copy of
    that command's stderr (ControlMaster, ssh_config(5)) for as long as any session over it
    lasts, so reading it to its end can wait forever."""
    fd = f.fileno()
    got = bytearray()
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while len(got) < limit:
            left = until - time.monotonic()
            if left <= 0 or not sel.select(left):
                break
            try:
                chunk = os.read(fd, limit - len(got))
            except BlockingIOError:
                continue
            if not chunk:
                break
            got += chunk
    return bytes(got)


def run(
    argv: Sequence[str],
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    env: Optional[Dict[str, str]] = None,
    input: Optional[str] = None,
    max_bytes: int = MAX_OUTPUT_BYTES,
    cleanup: bool = False,
) -> CommandResult:
    """Run ``argv`` (a list; no shell) with a deadline of ``timeout`` seconds, reading at most
    ``max_bytes`` of its stdout and as many of its stderr. ``cleanup``: a command that ends
    something meshdoctor started (``ssh -O exit``), run even after :func:`stop_all` ``final``.

    Never raises for a missing executable, a non-zero exit, a timeout or output over the cap:
    those are reported in the :class:`CommandResult` (``timed_out``, ``cut``). On timeout or at
    the cap the command's whole process group is killed with SIGKILL.
    """
    argv = [str(a) for a in argv]
    t0 = time.monotonic()
    if _STOPPING["final"] and not cleanup:
        return CommandResult(argv, None, "", "meshdoctor is stopping (interrupted)", 0.0)
    token = f"{os.getpid()}.{next(_TOKENS)}"
    child_env = marked_env(env)
    # our token after the ones inherited (a meshdoctor run by a meshdoctor): killing the outer
    # command reaches what the inner one started too
    inherited = child_env.get(COMMAND_MARKER_ENV)
    child_env[COMMAND_MARKER_ENV] = f"{inherited},{token}" if inherited else token
    with _LIVE_LOCK:
        _OPEN_TOKENS.add(token)
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            env=child_env,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        with _LIVE_LOCK:
            _OPEN_TOKENS.discard(token)
        return CommandResult(argv, None, "", str(exc), time.monotonic() - t0, missing=True)
    proc._md_token = token  # type: ignore[attr-defined]
    _track(proc)
    try:
        out, err, stop = _collect(
            proc, input.encode() if input is not None else None, t0 + timeout, max_bytes
        )
        if stop:
            _kill_group(proc)
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:  # unkillable (uninterruptible sleep): leave it
                pass
            return CommandResult(
                argv,
                None,
                out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"),
                time.monotonic() - t0,
                timed_out=stop == "timeout",
                cut=None if stop == "timeout" else stop,
                cap_bytes=max_bytes,
            )
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        _untrack(proc)
        with _LIVE_LOCK:
            _OPEN_TOKENS.discard(token)
        for f in (proc.stdout, proc.stderr, proc.stdin):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
    return CommandResult(
        argv,
        proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - t0,
    )


def spawn(
    argv: Sequence[str], *, env: Optional[Dict[str, str]] = None, stdin: Any = subprocess.DEVNULL
) -> subprocess.Popen:
    """Start a long-running ``argv`` (a probe rank, its ssh client) in its own session with
    stdout and stderr piped, its environment marked (:func:`marked_env`). The caller owns it:
    its deadline, its signals, its reaping; :func:`stop_all` still kills its group if it is
    alive when meshdoctor is interrupted or exits. Raises OSError when it cannot be started."""
    if _STOPPING["final"]:
        raise OSError("meshdoctor is stopping (interrupted)")
    proc = subprocess.Popen(
        [str(a) for a in argv],
        env=marked_env(env),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _track(proc)
    return proc
