"""meshdoctor's state directory, the files in it, the fix lock and the receipts of fix runs.

The state directory is platformdirs ``user_state_dir("meshdoctor")`` (e.g.
``~/.local/state/meshdoctor`` on Linux, ``~/Library/Application Support/meshdoctor`` on macOS);
``MESHDOCTOR_STATE_DIR`` overrides it. meshdoctor runs as root on cluster nodes, so every use
holds to these rules (another user who can write a directory we use could otherwise make root
write, empty or read a file of their choosing through a link):

* the directory and every folder in it are created with mode 0700, and on every use each one is
  opened with ``O_NOFOLLOW|O_DIRECTORY`` and checked: owned by us (the effective uid), writable
  by nobody else. Otherwise :class:`StateDirError` (reported as MD700) says what to do;
* files are opened relative to that folder's descriptor with ``O_NOFOLLOW``; only regular files
  owned by us with one link are read (a FIFO or device is refused, never opened blocking:
  ``O_NONBLOCK``), at most a stated number of bytes;
* every write is a temporary file (``O_CREAT|O_EXCL``, mode 0600) + ``fsync`` + ``rename``, so
  a reader sees the old file or the whole new one, never a part. The one exception is the lock
  file, which must stay one inode for ``fcntl.flock``: it holds only ``<pid> <run_id>``.

Files at a path the user named (``--output``, ``--healthy-hostfile``, ``launch --json`` and
``--log``, ``bundle -o``, ``probe --save-baseline``) have one writer, :func:`write_path`
(:func:`open_stream` for a stream), judged before any work by :func:`output_problem`: only a
regular file is replaced; a character device or FIFO is written in place, a descriptor
(``/dev/stdout``) through itself, a folder, block device or another user's link refused.

Receipts are JSON files (mode 0600), one per run, under ``receipts/``; the lock is
``fcntl.flock`` on ``fix.lock``. Sources: open(2) (``O_NOFOLLOW``, ``O_EXCL``, ``O_NONBLOCK`` on a
FIFO), rename(2) (atomic replacement), fsync(2), flock(2).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple
from meshdoctor.parsers import json_text

STATE_ENV = "MESHDOCTOR_STATE_DIR"
RUN_ENV = "MESHDOCTOR_FIX_RUN"  # the id of the fix run a host's own fix work belongs to
RECEIPT_MAX_BYTES = 1024 * 1024  # the most read of one receipt file; those written are a few KB
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# errors of a home that is read-only or full: the lock goes to the runtime directory instead
_NO_ROOM = (errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM)


class LockBusy(RuntimeError):
    """Another meshdoctor fix run holds the lock; the message names its pid."""


class StateDirError(OSError):
    """The state directory (or a folder in it) cannot be used: a file in its place, it cannot be
    created, it is not writable, not ours or writable by others; the message names it and what
    to do. ``untrusted``: it is there but not ours or open to others (or a link): refused
    outright; otherwise it only cannot be made or written (a read-only or full home), where
    the fix lock can still go in the runtime directory (:func:`runtime_folder`)."""

    def __init__(self, message: str, untrusted: bool = False, errno_: Optional[int] = None) -> None:
        super().__init__(message)
        self.untrusted = untrusted
        self.errno = errno_

    @property
    def no_room(self) -> bool:
        """It could not be made or written for want of a writable place (a read-only or full
        file system, no permission): the case where the fix lock goes to the runtime
        directory. A file in its place or an untrusted directory is not."""
        return not self.untrusted and self.errno in _NO_ROOM


class StateFileError(OSError):
    """A file in the state directory cannot be trusted or read (a link, a FIFO or device, not
    ours, more than one link, over its size limit, unreadable); the message names it and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def state_path() -> Path:
    """Where the state directory is (``MESHDOCTOR_STATE_DIR`` or the platform's place); nothing
    is created or checked (:func:`state_dir` does both)."""
    return _root()


def _root() -> Path:
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_state_dir("meshdoctor"))


def _refuse(
    d: str, problem: str, mend: str = "", untrusted: bool = False, errno_: Optional[int] = None
) -> StateDirError:
    """The MD700 message: which directory, why, and what to do (``mend``: a first remedy);
    ``errno_``: the error of the call that failed, when one did."""
    return StateDirError(
        f"meshdoctor's state directory {d} cannot be used ({problem}); {mend}"
        f"set {STATE_ENV} to a writable directory of your own that nobody else can write "
        "(mode 0700)",
        untrusted,
        errno_,
    )


def _checked(fd: int, shown: str) -> int:
    """``fd`` (a folder) when it is ours and writable by nobody else; else closes it and raises
    :class:`StateDirError`."""
    st = os.fstat(fd)
    problem = None
    if st.st_uid != os.geteuid():
        problem = f"owned by uid {st.st_uid}, not by uid {os.geteuid()} running meshdoctor"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"mode {stat.S_IMODE(st.st_mode):04o}: others can write it"
    elif os.geteuid() != 0 and (st.st_mode & 0o300) != 0o300:
        problem = "not writable"
    if problem:
        os.close(fd)
        mine = st.st_uid == os.geteuid()
        raise _refuse(shown, problem, "chmod 700 it, or " if mine else "", untrusted=True)
    return fd


def _open_dir(name: str, shown: str, parent: Optional[int]) -> int:
    """Create (0700) and open the folder ``name`` (relative to ``parent``'s descriptor, or a
    path when None) without following a link; checked by :func:`_checked`."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _refuse(shown, exc.strerror or str(exc), errno_=exc.errno) from None
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        problem = exc.strerror or str(exc)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # O_DIRECTORY|O_NOFOLLOW on a link: either
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            problem = "a symbolic link" if link else "a file, not a directory"
            raise _refuse(shown, problem, untrusted=link) from None
        raise _refuse(shown, problem) from None
    return _checked(fd, shown)


def state_dir() -> Path:
    """The state directory, created with mode 0700 if missing (its parents as needed) and
    checked as the module docstring says. Raises :class:`StateDirError`."""
    d = _root()
    try:
        d.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise _refuse(
            str(d), exc.strerror or "a parent cannot be created", errno_=exc.errno
        ) from None
    os.close(_open_dir(str(d), str(d), None))
    return d


@contextlib.contextmanager
def folder(*parts: str) -> Iterator[int]:
    """``with folder("cache", "mlx_build") as fd:`` a descriptor of that folder under the state
    directory, each level created (0700) and checked on the way down (no link followed).
    Raises :class:`StateDirError`."""
    d = _root()
    try:
        d.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise _refuse(
            str(d), exc.strerror or "a parent cannot be created", errno_=exc.errno
        ) from None
    fd = _open_dir(str(d), str(d), None)
    shown = d
    try:
        for p in parts:
            shown = shown / p
            nxt = _open_dir(p, str(shown), fd)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def _distrust(st: os.stat_result) -> Optional[str]:
    """Why a file with this stat cannot be trusted (not a regular file, not ours, more than one
    link), or None."""
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by us"
    if st.st_nlink != 1:
        return f"{st.st_nlink} links"
    return None


def read_file(dir_fd: int, name: str, limit: int, shown: str = "") -> bytes:
    """At most ``limit`` bytes of the regular file ``name`` in the folder ``dir_fd``; raises
    :class:`StateFileError` for a link, FIFO, device, a file not ours or with more than one link,
    or one longer than ``limit`` bytes; FileNotFoundError when it is not there."""
    shown = shown or name
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StateFileError(f"{shown}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):  # never open a FIFO or device
        raise StateFileError(f"{shown}: not a regular file")
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        why = "not a regular file" if exc.errno == errno.ELOOP else exc.strerror
        raise StateFileError(f"{shown}: {why}") from None
    try:
        why = _distrust(os.fstat(fd))
        if why:
            raise StateFileError(f"{shown}: {why}")
        chunks: List[bytes] = []
        got = 0
        while got <= limit:
            b = os.read(fd, min(65536, limit + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
    finally:
        os.close(fd)
    if got > limit:
        raise StateFileError(f"{shown}: over {limit} bytes")
    return b"".join(chunks)


def write_file(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Replace ``name`` in the folder ``dir_fd`` with ``data`` (``mode``, 0600 unless told, less
    the umask): a new temporary file
    (``O_CREAT|O_EXCL|O_NOFOLLOW``), written whole, fsynced, renamed over ``name``, the folder
    fsynced. Raises OSError; a failed write leaves no temporary behind."""
    tmp = f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        mode,
        dir_fd=dir_fd,
    )
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


# --- files at a path the user named (--output, --healthy-hostfile, --json, -o, --log, ...) ----
# /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name a descriptor of this process: they
# are written through that descriptor, as bash's redirections do ("REDIRECTION" in bash(1)), never
# reopened (a regular file behind them would be written from offset 0) nor replaced.
_STD_FDS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_MAX_LINKS = 40  # the most symbolic links followed, as the kernel's own limit (path_resolution(7))


def _fd_named(path: str) -> Optional[int]:
    """The descriptor number ``path`` names (:data:`_STD_FDS`, ``/dev/fd/N``,
    ``/proc/self/fd/N``, ``/proc/<our pid>/fd/N``), or None."""
    if path in _STD_FDS:
        return _STD_FDS[path]
    head, _, tail = path.rpartition("/")
    if not tail.isdigit():
        return None
    if head in ("/dev/fd", "/proc/self/fd", "/proc/thread-self/fd", f"/proc/{os.getpid()}/fd"):
        return int(tail)
    return None


def _refused(path: str, why: str, code: int = errno.EPERM) -> OSError:
    return OSError(code, f"{why}: not written", path)


def output_target(path: str) -> Tuple[str, Any]:
    """Where a write to the user-named ``path`` lands, as ``(kind, where)``: ``("fd", N)`` a
    descriptor of this process (:func:`_fd_named`); ``("in-place", real path)`` an existing
    character device or FIFO, written where it is; ``("file", real path)`` a regular file or a
    name that does not exist yet, replaced atomically (:func:`write_path`). Symbolic links are
    followed (the link stays) only when owned by us or root and when the folder they lead into
    is ours or root's; a folder, a block device, a socket, a link owned by another user or into
    another user's folder is refused. Raises OSError (its ``strerror`` says why)."""
    me = os.geteuid()
    cur = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        n = _fd_named(cur)
        if n is not None:
            return "fd", n
        folder, name = os.path.split(cur)
        folder = os.path.realpath(folder)
        cur = os.path.join(folder, name)
        n = _fd_named(cur)
        if n is not None:
            return "fd", n
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return "file", cur
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (me, 0):
                raise _refused(path, f"{cur} is a symbolic link owned by uid {st.st_uid}")
            target = os.path.join(folder, os.readlink(cur))
            into = os.path.realpath(os.path.dirname(os.path.abspath(target)))
            try:
                owner = os.stat(into).st_uid
            except OSError:
                owner = me  # a dangling link: the folder check below names it
            if owner not in (me, 0) and _fd_named(target) is None:
                raise _refused(path, f"{cur} links into {into}, a folder of uid {owner}")
            cur = target
            continue
        if stat.S_ISREG(st.st_mode):
            return "file", cur
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "in-place", cur
        if stat.S_ISDIR(st.st_mode):
            raise _refused(path, f"{cur} is a folder", errno.EISDIR)
        what = "a block device" if stat.S_ISBLK(st.st_mode) else "neither a file nor a device"
        raise _refused(path, f"{cur} is {what}")
    raise OSError(errno.ELOOP, "too many symbolic links", path)


def output_problem(path: str) -> Optional[str]:
    """Why a write to ``path`` would fail, said before any work is done (a usage error), or
    None: refused by :func:`output_target`, a descriptor that is not open, a folder that does
    not exist or that we cannot write in, a device or FIFO we cannot write. A full disk is only
    found by the write itself."""
    try:
        kind, where = output_target(path)
    except OSError as exc:
        return exc.strerror or str(exc)
    if kind == "fd":
        try:
            os.fstat(where)
        except OSError:
            return f"descriptor {where} is not open"
        return None
    if kind == "in-place":
        return None if os.access(where, os.W_OK) else f"{where} cannot be written"
    folder = os.path.dirname(where)
    if not os.path.isdir(folder):
        return f"the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} cannot be written"
    return None


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_path(path: str, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to the user-named ``path``, the one writer of every such file
    (``--output``, ``--healthy-hostfile``, ``launch --json``, ``bundle -o``,
    ``probe --save-baseline``): where :func:`output_target` says. A regular file (or a new name)
    is replaced as :func:`write_file` does (a temporary file in its folder, ``mode`` less the
    umask, fsynced, renamed over it: a reader sees the old file or the whole new one); a
    character device or FIFO is written in place (opened ``O_WRONLY``, never created, truncated
    or replaced: ``/dev/null`` stays a device); a descriptor (``/dev/stdout``) through itself.
    Raises OSError."""
    import sys

    kind, where = output_target(path)
    if kind == "fd":
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        _write_fd(where, data)
        return
    if kind == "in-place":
        fd = os.open(where, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
        try:
            _write_fd(fd, data)
        finally:
            os.close(fd)
        return
    folder = os.open(os.path.dirname(where), _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        write_file(folder, os.path.basename(where), data, mode=mode)
    finally:
        os.close(folder)


def open_stream(path: str) -> int:
    """A descriptor open for writing a stream (``launch --log``) at the user-named ``path``,
    where :func:`output_target` says: a regular file created or emptied (``O_NOFOLLOW``: the
    link was judged already), a device or FIFO opened as it is, a descriptor duplicated. The
    caller closes it. Raises OSError."""
    kind, where = output_target(path)
    if kind == "fd":
        return os.dup(where)
    if kind == "in-place":
        return os.open(where, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    return os.open(
        where, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
    )


def runtime_path() -> Path:
    """Where the fix lock goes when the state directory cannot be made or written (a read-only
    or full home): ``$XDG_RUNTIME_DIR/meshdoctor`` (XDG Base Directory Specification: a
    per-user directory on a RAM file system, e.g. ``/run/user/UID``), else ``/run/meshdoctor``
    for root, else ``meshdoctor-UID`` in the temporary directory."""
    import tempfile

    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "meshdoctor"
    if os.geteuid() == 0 and os.path.isdir("/run"):
        return Path("/run/meshdoctor")
    return Path(tempfile.gettempdir()) / f"meshdoctor-{os.geteuid()}"


@contextlib.contextmanager
def runtime_folder() -> Iterator[int]:
    """A descriptor of :func:`runtime_path`, created (0700) and checked like the state
    directory (ours, writable by nobody else, no link followed). Raises
    :class:`StateDirError`."""
    d = runtime_path()
    fd = _open_dir(str(d), str(d), None)
    try:
        yield fd
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


class FixLock:
    """``with FixLock(run_id):`` holds the fix lock or raises :class:`LockBusy` at once (never
    waits: a second operator is told, not queued behind a run that may take minutes). The lock
    file holds ``<pid> <run_id>``; meshdoctor doing a host's share of the same run (``run_id``
    equal, e.g. on a host that shares this state directory) goes ahead without it. The file is
    opened with ``O_NOFOLLOW`` in the checked state directory and must be a regular file of ours
    with one link before anything is written to it (:class:`StateFileError` otherwise)."""

    NAME = "fix.lock"

    def __init__(self, run_id: str = "") -> None:
        self.path = _root() / self.NAME
        self.run_id = run_id
        self.fd: Optional[int] = None
        # why the lock is in the runtime directory instead (an emergency fix still runs when
        # the state directory cannot be made or written); None: it is in the state directory
        self.fallback: Optional[str] = None

    def _open(self, where) -> int:
        with where() as d:
            try:
                return os.open(
                    self.NAME,
                    os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                    0o600,
                    dir_fd=d,
                )
            except OSError as exc:
                if exc.errno in _NO_ROOM and where is folder:
                    raise StateDirError(f"{self.path}: {exc.strerror}", errno_=exc.errno) from None
                why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
                raise self._unusable(why) from None

    def __enter__(self) -> "FixLock":
        try:
            fd = self._open(folder)
        except StateDirError as exc:
            if not exc.no_room:  # untrusted, or a file in its place: refused, never bypassed
                raise
            self.fallback = str(exc)
            self.path = runtime_path() / self.NAME
            fd = self._open(runtime_folder)
        why = _distrust(os.fstat(fd))
        if why:
            os.close(fd)
            raise self._unusable(why)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.read(fd, 200).decode(errors="replace").split()
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            if self.run_id and holder[1:2] == [self.run_id]:
                return self  # our own run holds it
            raise LockBusy(
                f"another `meshdoctor fix` is applying changes ({_describe_holder(holder)}; "
                f"lock {self.path}); wait for it to finish"
            ) from None
        try:  # who holds it, for a second operator; a full disk may refuse the bytes
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {self.run_id}".encode())
        except OSError:
            pass
        self.fd = fd
        return self

    def _unusable(self, why: str) -> StateFileError:
        return StateFileError(
            f"the fix lock {self.path} cannot be used ({why}); remove it, then run the fix again",
        )

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _describe_holder(holder: List[str]) -> str:
    """``pid N (its command line), run R`` from the lock file's ``<pid> <run_id>`` words; what
    cannot be read is left out (an empty file: the holder is between taking the lock and
    writing its pid)."""
    if not holder:
        return "pid unknown"
    out = f"pid {holder[0]}"
    try:
        from meshdoctor.proctable import psutil

        out += f" ({' '.join(psutil.Process(int(holder[0])).cmdline())[:200]})"
    except (ValueError, psutil.Error):
        pass
    if holder[1:]:
        out += f", run {holder[1]}"
    return out


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def write(kind: str, doc: Dict[str, Any]) -> Path:
    """Write one receipt of ``kind`` (``auto-setup``) with mode 0600 (temporary file + fsync +
    rename in the checked ``receipts/`` folder); returns its path. ``doc`` gets ``kind`` and
    ``written_at`` (ISO 8601 UTC) added."""
    now = _now()
    name = f"{kind}-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}.json"
    body = dict(doc, kind=kind, written_at=now.isoformat(timespec="seconds"))
    with folder("receipts") as d:
        write_file(d, name, json.dumps(body, indent=2).encode("utf-8"))
    return _root() / "receipts" / name


def scan(kind: str) -> Tuple[List[Dict[str, Any]], List[str]]:
    """``(receipts, problems)``: every receipt of ``kind`` that reads and parses, oldest first
    (by ``started_epoch``), each dict with ``path`` added; and one line per file of that kind
    that could not be trusted or read (a link, FIFO, foreign or cut-off file: see
    :func:`read_file`; one with a NaN or infinite number anywhere, or a ``started_epoch`` that
    is not a number: it cannot be ordered or compared, so a caller that fails closed on a
    problem treats it as the receipt of a run that may have failed). Raises
    :class:`StateDirError`."""
    out: List[Dict[str, Any]] = []
    problems: List[str] = []
    with folder("receipts") as d:
        base = _root() / "receipts"
        for name in sorted(os.listdir(d)):
            if not (name.startswith(f"{kind}-") and name.endswith(".json")):
                continue
            shown = str(base / name)
            try:
                doc = json_text.loads(read_file(d, name, RECEIPT_MAX_BYTES, shown).decode("utf-8"))
            except FileNotFoundError:
                continue  # removed while we listed
            except OSError as exc:
                problems.append(str(exc) if isinstance(exc, StateFileError) else f"{shown}: {exc}")
                continue
            except ValueError as exc:
                problems.append(f"{shown} does not parse ({type(exc).__name__})")
                continue
            if not isinstance(doc, dict):
                problems.append(f"{shown} is not a receipt (a JSON object)")
                continue
            bad = _not_finite(doc)
            if bad is not None:  # NaN or Infinity: json reads them, no comparison holds
                problems.append(f"{shown} holds a number that is not finite ({bad})")
                continue
            when = doc.get("started_epoch")
            if when is not None and (isinstance(when, bool) or not isinstance(when, (int, float))):
                problems.append(f"{shown}: its started_epoch is not a number ({when!r:.40})")
                continue
            out.append(dict(doc, path=shown))
    return sorted(out, key=lambda r: float(r.get("started_epoch") or 0)), problems


def _not_finite(doc: Any, where: str = "") -> Optional[str]:
    """Where in ``doc`` (parsed JSON) a number is NaN or infinite (``started_epoch: nan``), or
    None when every number is finite."""
    import math

    if isinstance(doc, float) and not math.isfinite(doc):
        return f"{where or 'the document'}: {doc}"
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    for k, v in items:
        bad = _not_finite(v, f"{where}.{k}" if where else str(k))
        if bad is not None:
            return bad
    return None


def all_of(kind: str) -> List[Dict[str, Any]]:
    """Every readable receipt of ``kind``, oldest first (:func:`scan` without its problems)."""
    return scan(kind)[0]


def latest(kind: str) -> Optional[Dict[str, Any]]:
    """The newest receipt of ``kind``, or None."""
    got = all_of(kind)
    return got[-1] if got else None


# A host's own record of the auto-setup that configured it (written on that host, so any
# operator's meshdoctor sees it): ``python -m meshdoctor.receipts record host-setup`` with the
# receipt as a JSON object on stdin. No other kind is written this way.
HOST_SETUP = "host-setup"
RECORD_KINDS = (HOST_SETUP,)
RECORD_MAX_BYTES = 64 * 1024


def main(argv: Optional[List[str]] = None) -> int:
    """``record KIND``: write the JSON object on stdin as a receipt of ``KIND`` (one of
    :data:`RECORD_KINDS`) here; prints ``{"path": ...}`` or ``{"error": ...}`` (exit 1)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if len(args) != 2 or args[0] != "record" or args[1] not in RECORD_KINDS:
            raise ValueError(f"usage: record {'|'.join(RECORD_KINDS)} < receipt.json")
        doc = json.loads(sys.stdin.read(RECORD_MAX_BYTES + 1)[:RECORD_MAX_BYTES])
        if not isinstance(doc, dict):
            raise ValueError("the receipt must be a JSON object")
        print(json.dumps({"path": str(write(args[1], doc))}))
        return 0
    except (ValueError, OSError) as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
