"""Receipts of fix runs and the lock that keeps two fix runs from interleaving.

Both live in the user's state directory (platformdirs ``user_state_dir("meshdoctor")``, e.g.
``~/.local/state/meshdoctor`` on Linux, ``~/Library/Application Support/meshdoctor`` on macOS;
``MESHDOCTOR_STATE_DIR`` overrides it). Receipts are JSON files readable by their owner only
(mode 0600), one per run, under ``receipts/``; the lock is ``fcntl.flock`` on ``fix.lock``.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional

STATE_ENV = "MESHDOCTOR_STATE_DIR"
RUN_ENV = "MESHDOCTOR_FIX_RUN"  # the id of the fix run a host's own fix work belongs to
RECEIPT_MAX_BYTES = 1024 * 1024  # the most read of one receipt file; those written are a few KB


class LockBusy(RuntimeError):
    """Another meshdoctor fix run holds the lock; the message names its pid."""


class StateDirError(OSError):
    """The state directory cannot be used (a file is in its place, it cannot be created, or it
    is not writable); the message names it and what to do."""


def state_dir() -> Path:
    """The state directory (created with mode 0700 if missing). Raises :class:`StateDirError`
    when it cannot be created or written."""
    env = os.environ.get(STATE_ENV)
    if env:
        d = Path(env)
    else:
        import platformdirs

        d = Path(platformdirs.user_state_dir("meshdoctor"))
    problem = None
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    except FileExistsError:
        problem = "a file, not a directory"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    else:
        if not os.access(d, os.W_OK | os.X_OK):
            problem = "not writable"
    if problem:
        raise StateDirError(
            f"meshdoctor's state directory {d} cannot be used ({problem}); set {STATE_ENV} "
            "to a writable directory"
        )
    return d


class FixLock:
    """``with FixLock(run_id):`` holds the fix lock or raises :class:`LockBusy` at once (never
    waits: a second operator is told, not queued behind a run that may take minutes). The lock
    file holds ``<pid> <run_id>``; meshdoctor doing a host's share of the same run (``run_id``
    equal, e.g. on a host that shares this state directory) goes ahead without it."""

    def __init__(self, run_id: str = "") -> None:
        self.path = state_dir() / "fix.lock"
        self.run_id = run_id
        self.fd: Optional[int] = None

    def __enter__(self) -> "FixLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
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
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {self.run_id}".encode())
        self.fd = fd
        return self

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
        import psutil

        out += f" ({' '.join(psutil.Process(int(holder[0])).cmdline())[:200]})"
    except (ValueError, psutil.Error):
        pass
    if holder[1:]:
        out += f", run {holder[1]}"
    return out


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def write(kind: str, doc: Dict[str, Any]) -> Path:
    """Write one receipt of ``kind`` (``auto-setup``) with mode 0600; returns its path. ``doc``
    gets ``kind`` and ``written_at`` (ISO 8601 UTC) added."""
    d = state_dir() / "receipts"
    d.mkdir(exist_ok=True, mode=0o700)
    now = _now()
    path = d / f"{kind}-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}.json"
    body = dict(doc, kind=kind, written_at=now.isoformat(timespec="seconds"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(body, f, indent=2)
    return path


def all_of(kind: str) -> List[Dict[str, Any]]:
    """Every readable receipt of ``kind``, oldest first (by ``started_epoch``); each dict gets
    ``path``. Unreadable files, and files over :data:`RECEIPT_MAX_BYTES`, are skipped."""
    d = state_dir() / "receipts"
    out = []
    for p in sorted(d.glob(f"{kind}-*.json")) if d.is_dir() else []:
        try:
            with open(p, "rb") as fh:
                raw = fh.read(RECEIPT_MAX_BYTES + 1)
            if len(raw) > RECEIPT_MAX_BYTES:
                continue  # not a receipt meshdoctor wrote (they are a few KB)
            doc = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict):
            out.append(dict(doc, path=str(p)))
    return sorted(out, key=lambda r: float(r.get("started_epoch") or 0))


def latest(kind: str) -> Optional[Dict[str, Any]]:
    """The newest receipt of ``kind``, or None."""
    got = all_of(kind)
    return got[-1] if got else None
