"""The job's output: passed through unchanged and unbuffered, a bounded copy kept for triage, the
whole of it written to ``--log FILE``, mlx.launch's per-rank status lines picked out.

One :class:`Tee` per job, one reader thread per stream (mlx.launch's stdout and stderr): each
chunk read (``os.read``, at most :data:`CHUNK` bytes) is written at once to the same stream of
this process, then to the log and the copy. A reader of ours that went away (a closed pipe)
stops only the passing through: the job still runs and is still read to the end.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from collections import deque
from typing import BinaryIO, Deque, List, Optional, Tuple

from meshdoctor.mlx import status_lines
from meshdoctor.mlx.status_lines import StatusLine

CHUNK = 65536
COPY_BYTES = 4 << 20  # the copy triage reads: the last 4 MiB of the job's output
LINE_BYTES = 4096  # a stderr line longer than this is not a status line (cut, not parsed)


class Tee:
    """The job's output as it goes by. ``copy()``: the last :data:`COPY_BYTES` bytes of both
    streams in the order read; ``statuses``: ``(monotonic time, StatusLine)`` in the order
    mlx.launch printed them; ``last_output``: monotonic time of the last byte on either
    stream; ``total``: bytes read; ``log_error``: why ``--log`` could not be written (None:
    fine or none); ``pass_error``: why passing the output through to our stdout or stderr
    stopped for a reason other than its reader leaving (a full disk: ENOSPC), or None."""

    def __init__(self, log: Optional[BinaryIO] = None) -> None:
        self._lock = threading.Lock()
        self._copy: Deque[bytes] = deque()
        self._copy_bytes = 0
        self._log = log
        self.log_error: Optional[str] = None
        self.pass_error: Optional[str] = None
        self.statuses: List[Tuple[float, StatusLine]] = []
        self.last_output = time.monotonic()
        self.total = 0
        self._partial = b""
        self._threads: List[threading.Thread] = []

    def start(self, src: BinaryIO, dest_fd: int, *, status: bool) -> None:
        """Read ``src`` to its end in a thread, writing every chunk to ``dest_fd`` (1 or 2);
        ``status``: look for mlx.launch's status lines in it (its stderr)."""
        t = threading.Thread(
            target=self._pump, args=(src.fileno(), dest_fd, status), daemon=True, name="tee"
        )
        t.start()
        self._threads.append(t)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds in all for both streams to end; True when they have."""
        t_end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, t_end - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def copy(self) -> bytes:
        """The bounded copy (see class doc)."""
        with self._lock:
            return b"".join(self._copy)

    def _pump(self, fd: int, dest: int, status: bool) -> None:
        passing = True
        while True:
            try:
                data = os.read(fd, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:
                break
            if passing:
                why = _write_all(dest, data)
                passing = why is None
                if why and self.pass_error is None:
                    self.pass_error = f"cannot write standard {_NAMES.get(dest, dest)}: {why}"
            self._keep(data, status)
        try:
            os.close(fd)
        except OSError:
            pass

    def _keep(self, data: bytes, status: bool) -> None:
        now = time.monotonic()
        with self._lock:
            self.last_output = now
            self.total += len(data)
            self._copy.append(data)
            self._copy_bytes += len(data)
            while self._copy_bytes > COPY_BYTES and len(self._copy) > 1:
                self._copy_bytes -= len(self._copy.popleft())
            if self._log is not None and self.log_error is None:
                try:
                    self._log.write(data)
                    self._log.flush()
                except OSError as exc:
                    self.log_error = exc.strerror or str(exc)
            if status:
                self._lines(data, now)

    def _lines(self, data: bytes, now: float) -> None:
        buf = self._partial + data
        *whole, rest = buf.split(b"\n")
        self._partial = rest[-LINE_BYTES:]
        for raw in whole:
            if b"Node with rank" not in raw:
                continue
            for st in status_lines.parse_all(raw[:LINE_BYTES].decode("utf-8", "replace")):
                self.statuses.append((now, st))


_NAMES = {1: "output", 2: "error"}


def _write_all(fd: int, data: bytes) -> Optional[str]:
    """Write all of ``data`` to ``fd``; None when it was, else stop writing: ``""`` when the
    reader went away (EPIPE, a closed descriptor), else why it cannot be written (a full disk)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except BlockingIOError:  # a non-blocking descriptor that is full: wait until writable
            select.select([], [fd], [], 1.0)
            continue
        except OSError as exc:  # the job is still read to the end
            if isinstance(exc, BrokenPipeError) or exc.errno == errno.EBADF:
                return ""
            return exc.strerror or str(exc)
        view = view[n:]
    return None
