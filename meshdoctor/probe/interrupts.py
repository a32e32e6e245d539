"""Interrupts of a probe (SIGINT, SIGTERM, SIGHUP): an object the caller holds and passes in.

An interrupt stops a launch only while it starts or watches the ranks (inside
:meth:`Interrupts.armed`); one that arrives during evidence gathering, teardown, the leftover
check or the report waits (:attr:`Interrupts.pending`), so the ranks are always torn down and the
verdict always printed. The CLI makes one, routes the signals to :meth:`Interrupts.interrupt`
(:meth:`Interrupts.install`) and hands it to :func:`meshdoctor.probe.launcher.run_probe`.
"""

from __future__ import annotations

import signal
from typing import Any, Optional

SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupts:
    """Interrupt state of one probe. ``pending``: the signal name of an interrupt that arrived
    outside an armed phase (None: none)."""

    def __init__(self) -> None:
        self._armed = False
        self.pending: Optional[str] = None

    def interrupt(self, signame: str) -> None:
        """Ask the probe to stop (a signal handler calls this): raises KeyboardInterrupt(signame)
        now when armed, else records it in :attr:`pending`."""
        if self._armed:
            self._armed = False
            raise KeyboardInterrupt(signame)
        self.pending = self.pending or signame

    def armed(self) -> "_Armed":
        """Context in which :meth:`interrupt` raises; a pending interrupt raises on entry."""
        return _Armed(self)

    def install(self) -> None:
        """Route SIGINT (Ctrl-C), SIGTERM (a supervisor's timeout) and SIGHUP (a closed
        terminal) of this process to :meth:`interrupt` (main thread only, as
        :func:`signal.signal` requires)."""
        def handler(signum: int, frame: Any) -> None:
            self.interrupt(signal.Signals(signum).name)

        for name in SIGNALS:
            signal.signal(getattr(signal, name), handler)


class _Armed:
    def __init__(self, owner: Interrupts) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        if self.owner.pending:
            raise KeyboardInterrupt(self.owner.pending)
        self.owner._armed = True

    def __exit__(self, *exc: Any) -> None:
        self.owner._armed = False
