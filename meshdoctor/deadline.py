"""Run functions in threads under one deadline: the one place that does it.

Each function runs in a daemon thread; the caller waits until every one has finished or the
deadline has passed, whichever comes first, and gets back what finished. A function still running
at the deadline is abandoned (daemon threads do not hold the process at exit); whatever external
command it started has its own, shorter deadline (:mod:`meshdoctor.execute`) and is killed there.
Used by the check runner, the verbs reader, the Thunderbolt reader, the NVML reader, the fan-out
to other hosts, the fixes' per-host calls, the fleet reach test and the teardown of every host
(:func:`start`: the caller works meanwhile).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Optional, Tuple, TypeVar

K = TypeVar("K", bound=Hashable)

# the longest the main thread blocks in one join while waiting (seconds): see Running.wait
WAIT_SLICE_S = 0.1


@dataclass
class Outcome:
    """One call's outcome: ``finished`` (returned or raised before the deadline), ``value`` (its
    return value), ``error`` (the exception it raised, if any)."""

    finished: bool = False
    value: Any = None
    error: Optional[BaseException] = None


def call_all(
    calls: Dict[K, Callable[[], Any]], timeout: float, *, name: str = "deadline"
) -> Dict[K, Tuple[bool, Any]]:
    """Run every function of ``calls`` at once; wait at most ``timeout`` seconds in all (one
    deadline, counted from this call). Returns key -> ``(finished, value)`` in the order of
    ``calls``; an exception a function raised is re-raised here (the first one, in key order),
    since it is a bug or a broken binding, not a hang. See :func:`outcomes` to keep them."""
    got = outcomes(calls, timeout, name=name)
    for o in got.values():
        if o.error is not None:
            raise o.error
    return {k: (o.finished, o.value) for k, o in got.items()}


def outcomes(
    calls: Dict[K, Callable[[], Any]], timeout: float, *, name: str = "deadline"
) -> Dict[K, Outcome]:
    """Like :func:`call_all`, but returns each call's :class:`Outcome`, exceptions included,
    and raises nothing. Returns within ``timeout`` seconds plus a few milliseconds however the
    functions behave."""
    return start(calls, name=name).wait(timeout)


class Running:
    """Calls started by :func:`start`; :meth:`wait` collects them under a deadline."""

    def __init__(self, calls: Dict[K, Callable[[], Any]], name: str) -> None:
        self.boxes: Dict[K, Outcome] = {k: Outcome() for k in calls}
        self.threads = []
        for k, fn in calls.items():
            th = threading.Thread(
                target=self._work, args=(fn, self.boxes[k]), daemon=True, name=f"{name}-{k}"
            )
            th.start()
            self.threads.append(th)

    @staticmethod
    def _work(fn: Callable[[], Any], box: Outcome) -> None:
        try:
            box.value = fn()
        except BaseException as exc:  # reported to the caller, never lost in the thread
            box.error = exc
        box.finished = True

    def wait(self, timeout: float) -> Dict[K, Outcome]:
        """Wait at most ``timeout`` seconds in all for the calls; each one's :class:`Outcome`
        (``finished`` False: still running, abandoned).

        The wait is cut into slices of :data:`WAIT_SLICE_S`: Python runs a signal's handler in
        the main thread only between bytecodes, and when the kernel hands the signal to another
        thread (one of ours, blocked in a read) nothing wakes a main thread blocked in one long
        ``join`` (seen: Ctrl-C and SIGTERM unanswered for the 54 s of a hung tool's deadline,
        Linux 6.18); between slices the handler runs, so an interrupt is answered at once."""
        deadline = time.monotonic() + timeout
        for th in self.threads:
            while th.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                th.join(min(left, WAIT_SLICE_S))
        return self.boxes


def start(calls: Dict[K, Callable[[], Any]], *, name: str = "deadline") -> Running:
    """Start every function of ``calls`` in its own daemon thread and return at once (the caller
    does its own work meanwhile, then :meth:`Running.wait`)."""
    return Running(calls, name)


def call(fn: Callable[[], Any], timeout: float, *, name: str = "deadline") -> Tuple[bool, Any]:
    """``(finished, value)`` of ``fn()`` run in a daemon thread for at most ``timeout`` seconds;
    an exception ``fn`` raises is re-raised here."""
    return call_all({0: fn}, timeout, name=name)[0]
