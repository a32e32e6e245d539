"""The process's standard streams: a reader that went away is not an error; a stdout that
cannot be written is said as such.

A closed stdout or stderr (``>&-``), a pipe whose reader left (``| head -1``: EPIPE) or a
closed terminal on stderr (EIO) must never change the exit code, which is the verdict's: the
descriptor is pointed at /dev/null (:func:`to_devnull`) and what was left to print is dropped.
A standard output that refuses what is written for another reason (a full disk: ``>
/dev/full`` gives ENOSPC, full(4); a quota, a read-only file system) means the verdict never
reached its reader: :class:`Guarded` raises :class:`StdoutUnwritable`, which every command ends
as one line ``cannot write standard output: ...`` (exit 3, :func:`say_unwritable`). Standard
library only, so the CLI can set this up before anything else is imported.
"""

from __future__ import annotations

import os
import sys
from typing import Optional


def to_devnull(fd: int) -> None:
    """Point file descriptor ``fd`` at /dev/null, so that nothing more written there (not even
    the flush at exit) fails; never raises."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
    except OSError:
        pass


def make_usable() -> None:
    """A closed stdout or stderr (``>&-``) becomes /dev/null; a stream whose encoding cannot
    carry every character (``PYTHONIOENCODING=ascii``, a latin-1 terminal) replaces what it
    cannot encode instead of raising (the renderer also falls back to ASCII symbols)."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        if stream is None:
            try:
                os.fstat(fd)
            except OSError:
                to_devnull(fd)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))
            continue
        try:
            "\u2714\u2192".encode(stream.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            try:
                stream.reconfigure(errors="replace")
            except (AttributeError, ValueError):
                pass
    sys.stderr = Unbreakable(sys.stderr, 2)
    if not isinstance(sys.stdout, Guarded):
        sys.stdout = Guarded(sys.stdout, 1)


class StdoutUnwritable(OSError):
    """Standard output refused a write or flush for a reason other than its reader leaving
    (ENOSPC, EDQUOT, EFBIG, EIO, EROFS...): ``errno`` and ``strerror`` are the original's."""


def say_unwritable(exc: OSError) -> None:
    """Say on stderr, once, that standard output cannot be written (``meshdoctor: cannot write
    standard output: REASON``); from here on what is printed is dropped, so nothing fails again
    (not even the flush at exit)."""
    if isinstance(sys.stdout, Guarded):
        sys.stdout.settle()
    sys.stderr.write(f"meshdoctor: cannot write standard output: {exc.strerror or exc}\n")


class Guarded:
    """Standard output (a text stream) whose failures are told apart: a reader that went away
    (EPIPE) raises BrokenPipeError as before (the exit status stays the verdict's); any other
    OSError points the descriptor at /dev/null (what is still buffered is dropped) and raises
    :class:`StdoutUnwritable`, again on every later write or flush until :meth:`settle` (a
    caller that swallows the first, as click's stream probe does, cannot hide it). Everything
    else is the wrapped stream's."""

    def __init__(self, stream, fd: int) -> None:
        self._stream, self._fd = stream, fd
        self._error: Optional[StdoutUnwritable] = None

    def _failed(self, exc: OSError) -> StdoutUnwritable:
        to_devnull(self._fd)
        self._error = StdoutUnwritable(exc.errno, exc.strerror or str(exc))
        return self._error

    def settle(self) -> None:
        """The failure was said: later writes go quietly to /dev/null."""
        self._error = None

    def write(self, text):
        if self._error is not None:
            raise self._error
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        if self._error is not None:
            raise self._error
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


class Unbreakable:
    """A text stream (stderr) whose reader going away is not an error: the first write or flush
    that fails with an OSError (EPIPE from ``2>&1 | head -1``, EIO from a closed terminal) points
    the file descriptor at /dev/null and the text is dropped, so a message on stderr can never
    change the exit code. Everything else is the wrapped stream's."""

    def __init__(self, stream, fd: int) -> None:
        self._stream, self._fd = stream, fd

    def _gone(self) -> None:
        to_devnull(self._fd)

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            self._gone()
            try:
                self._stream.flush()  # what was buffered now goes to /dev/null
            except OSError:
                pass

    def __getattr__(self, name):
        return getattr(self._stream, name)
