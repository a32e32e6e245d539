"""Interrupts (SIGINT from Ctrl-C, SIGTERM from a supervisor, SIGHUP from a closed terminal) as one
orderly stop: they interrupt only the phases that may be cut short, so the cleanup and the verdict
always happen.

:func:`install` routes the three signals here. Inside :class:`interruptible` a signal raises
``KeyboardInterrupt(<signal name>)`` in the main thread at once; outside it (cleanup, the report)
it is only recorded, :func:`interrupted` tells, and the next :class:`interruptible` raises it on
entry. The exit status is then the verdict's (3, could not assess, unless something had already
failed), never the shell's 128 + signal number.
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Dict, Optional

SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))

_STATE: Dict[str, Any] = {"armed": False, "pending": None}


def interrupt(signame: str) -> None:
    """Record an interrupt named ``signame`` (a signal handler calls this): raises
    KeyboardInterrupt(signame) now if inside :class:`interruptible`, else records it."""
    if _STATE["armed"]:
        _STATE["armed"] = False
        raise KeyboardInterrupt(signame)
    _STATE["pending"] = _STATE["pending"] or signame


def interrupted() -> Optional[str]:
    """The signal name of an interrupt that arrived outside an interruptible phase, or None."""
    return _STATE["pending"]


def arm() -> None:
    """From now on an interrupt raises KeyboardInterrupt at once; a pending one is raised now."""
    if _STATE["pending"]:
        raise KeyboardInterrupt(_STATE["pending"])
    _STATE["armed"] = True


def disarm() -> None:
    """From now on an interrupt is only recorded (:func:`interrupted`)."""
    _STATE["armed"] = False


class interruptible:
    """Context in which :func:`interrupt` raises (:func:`arm` on entry, :func:`disarm` on
    exit); a pending interrupt is raised on entry."""

    def __enter__(self) -> None:
        arm()

    def __exit__(self, *exc: Any) -> None:
        disarm()


def _handler(signum: int, frame: Any) -> None:
    interrupt(signal.Signals(signum).name)


def install() -> None:
    """Route :data:`SIGNALS` to :func:`interrupt` (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        signal.signal(sig, _handler)
