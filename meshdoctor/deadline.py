"""Run functions in threads under one deadline: the one place that does it.

Each function runs in a daemon thread; the caller waits until every one has finished or the
deadline has passed, whichever comes first, and gets back what finished. A function still running
at the deadline is abandoned (daemon threads do not hold the process at exit); whatever external
command it started has its own, shorter deadline (:mod:`meshdoctor.execute`) and is killed there.
Used by the check runner, the verbs reader, the Thunderbolt reader and the probe's evidence
gathering.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Optional, Tuple, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass
class Outcome:
    """One call's outcome: ``finished`` (returned or raised before the deadline), ``value`` (its
    return value), ``error`` (the exception it raised, if any)."""

    finished: bool = False
    value: Any = None
    error: Optional[BaseException] = None


def call_all(calls: Dict[K, Callable[[], Any]], timeout: float, *,
             name: str = "deadline") -> Dict[K, Tuple[bool, Any]]:
    """Run every function of ``calls`` at once; wait at most ``timeout`` seconds in all (one
    deadline, counted from this call). Returns key -> ``(finished, value)`` in the order of
    ``calls``; an exception a function raised is re-raised here (the first one, in key order),
    since it is a bug or a broken binding, not a hang. See :func:`outcomes` to keep them."""
    got = outcomes(calls, timeout, name=name)
    for o in got.values():
        if o.error is not None:
            raise o.error
    return {k: (o.finished, o.value) for k, o in got.items()}


def outcomes(calls: Dict[K, Callable[[], Any]], timeout: float, *,
             name: str = "deadline") -> Dict[K, Outcome]:
    """Like :func:`call_all`, but returns each call's :class:`Outcome`, exceptions included,
    and raises nothing. Returns within ``timeout`` seconds plus a few milliseconds however the
    functions behave."""
    deadline = time.monotonic() + timeout
    boxes: Dict[K, Outcome] = {k: Outcome() for k in calls}
    threads = []
    for k, fn in calls.items():
        def work(fn: Callable[[], Any] = fn, box: Outcome = boxes[k]) -> None:
            try:
                box.value = fn()
            except BaseException as exc:  # reported to the caller, never lost in the thread
                box.error = exc
            box.finished = True

        th = threading.Thread(target=work, daemon=True, name=f"{name}-{k}")
        th.start()
        threads.append(th)
    for th in threads:
        th.join(max(0.0, deadline - time.monotonic()))
    return boxes


def call(fn: Callable[[], Any], timeout: float, *, name: str = "deadline") -> Tuple[bool, Any]:
    """``(finished, value)`` of ``fn()`` run in a daemon thread for at most ``timeout`` seconds;
    an exception ``fn`` raises is re-raised here."""
    return call_all({0: fn}, timeout, name=name)[0]
