"""Interrupts (SIGINT from Ctrl-C, SIGTERM from a supervisor, SIGHUP from a closed terminal) as one
orderly stop: an object the command holds and passes in, never module state.

An interrupt stops work only while it may be cut short (inside :meth:`Interrupts.armed`, or
between :meth:`Interrupts.arm` and :meth:`Interrupts.disarm`): there a signal raises
``KeyboardInterrupt(<signal name>)`` in the main thread at once. Outside (evidence gathering,
teardown, the leftover check, the report) it is only recorded in :attr:`Interrupts.pending`, so
the cleanup and the verdict always happen. The exit status is then the verdict's (3, could not
assess, unless something had already failed), never the shell's 128 + signal number. ``check``
and ``probe`` each make one, :meth:`Interrupts.install` it, and hand it to what they run.
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Optional

SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupts:
    """Interrupt state of one command. ``pending``: the signal name of an interrupt that arrived
    outside an armed phase (None: none)."""

    def __init__(self) -> None:
        self._armed = False
        self.pending: Optional[str] = None
        # the command that answers for an interrupt with its own verdict (None: none yet, and
        # a pending interrupt ends the process as exit 3, meshdoctor.cli.main)
        self.handled_by: Optional[str] = None

    def interrupt(self, signame: str) -> None:
        """Ask the command to stop (a signal handler calls this): raises
        KeyboardInterrupt(signame) now when armed, else records it in :attr:`pending`."""
        if self._armed:
            self._armed = False
            raise KeyboardInterrupt(signame)
        self.pending = self.pending or signame

    @property
    def is_armed(self) -> bool:
        """Whether an interrupt raises at once now."""
        return self._armed

    def arm(self) -> None:
        """From now on an interrupt raises at once; a pending one is raised now (and is no
        longer pending)."""
        if self.pending:
            signame, self.pending = self.pending, None
            raise KeyboardInterrupt(signame)
        self._armed = True

    def disarm(self) -> None:
        """From now on an interrupt is only recorded (:attr:`pending`)."""
        self._armed = False

    def armed(self) -> "_Armed":
        """Context in which :meth:`interrupt` raises; a pending interrupt raises on entry."""
        return _Armed(self)

    def install(self) -> None:
        """Route SIGINT, SIGTERM and SIGHUP of this process to :meth:`interrupt` (main thread
        only, as :func:`signal.signal` requires; elsewhere a no-op)."""
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum: int, frame: Any) -> None:
            self.interrupt(signal.Signals(signum).name)

        # The three handlers go in one after another; with the signals blocked meanwhile, one
        # that arrives between two of them waits for its handler instead of having Python's
        # default effect (SIGHUP and SIGTERM: the process dies as 128 + signal number).
        signums = {getattr(signal, n) for n in SIGNALS if hasattr(signal, n)}
        masking = hasattr(signal, "pthread_sigmask")
        before = signal.pthread_sigmask(signal.SIG_BLOCK, signums) if masking else None
        try:
            for signum in signums:
                signal.signal(signum, handler)
        finally:
            if masking:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _Armed:
    def __init__(self, owner: Interrupts) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        self.owner.arm()

    def __exit__(self, *exc: Any) -> None:
        self.owner.disarm()


def hold() -> None:
    """Keep SIGINT, SIGTERM and SIGHUP blocked from now until the process ends, so that the exit
    status already decided is the one it ends with: Python's finalization puts the default
    handlers back, under which a late signal would end the process as 128 + signal number
    instead. Main thread only; a no-op where :func:`signal.pthread_sigmask` does not exist."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(
            signal.SIG_BLOCK, {getattr(signal, n) for n in SIGNALS if hasattr(signal, n)}
        )
