"""The node context a check reads: platform, options, hostfile, and facts gathered once per run.

Facts are gathered lazily and at most once per run, whichever check asks first, each under a
deadline: :meth:`NodeContext.command` caches external commands by argument list, and
:meth:`NodeContext.fact` caches any gathering function. Concurrent askers wait for the one
gathering instead of starting their own. A fact that raises re-raises the same exception to every
asker, so each check that depends on it ends in ``error`` naming the cause.

The platform is ``sys.platform`` unless ``MESHDOCTOR_PLATFORM`` (``darwin`` or ``linux``) says
otherwise: that is how the tests and a fake Mac node (stub commands first on PATH) run the macOS
checks on a Linux box.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor import execute
from meshdoctor.hostfile.model import Hostfile

PLATFORM_ENV = "MESHDOCTOR_PLATFORM"


# What MESHDOCTOR_PLATFORM may say (empty or unset: this machine's own platform).
PLATFORM_NAMES = {"darwin": "darwin", "macos": "darwin", "mac": "darwin", "linux": "linux"}


def current_platform() -> str:
    """``darwin`` or ``linux`` (or whatever ``sys.platform`` says elsewhere)."""
    forced = os.environ.get(PLATFORM_ENV, "").strip().lower()
    if forced in PLATFORM_NAMES:
        return PLATFORM_NAMES[forced]
    return "darwin" if sys.platform == "darwin" else sys.platform


def platform_env_problem() -> Optional[str]:
    """What is wrong with ``MESHDOCTOR_PLATFORM`` (a value other than :data:`PLATFORM_NAMES`,
    which would otherwise be ignored without a word), or None."""
    raw = os.environ.get(PLATFORM_ENV, "")
    if raw.strip() and raw.strip().lower() not in PLATFORM_NAMES:
        return (
            f"{PLATFORM_ENV}={raw!r} is not a platform meshdoctor knows; set it to one of "
            f"{', '.join(PLATFORM_NAMES)}, or unset it to use this machine's"
        )
    return None


class _Once:
    """A value computed once; other threads wait for it."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None


# A command that overran a deadline this long is hung (a wedged GPU, RDMA or kernel stack);
# one that overran a shorter deadline only proves the machine was slow (a loaded box, a short
# --timeout): not assessed (error, exit 3) until it overruns again on a deadline this long.
HANG_PROOF_S = 20.0


def hang_proven(res: execute.CommandResult) -> bool:
    """Whether ``res`` (a command that timed out) proves a hang: it ran at least
    :data:`HANG_PROOF_S` seconds before it was killed. False for one that finished."""
    return bool(res.timed_out) and res.duration_s >= HANG_PROOF_S


class NodeContext:
    """Everything a check may read about the node it runs on.

    ``host``: the name results carry; ``platform``: see :func:`current_platform`;
    ``hostfile``: a :class:`Hostfile` or None; ``ranks``: this machine's ranks in it;
    ``command_timeout``: seconds for each external command; ``python``: the interpreter whose MLX
    is inspected (``MESHDOCTOR_PYTHON`` or this one).
    """

    def __init__(
        self,
        *,
        host: str = "localhost",
        platform: Optional[str] = None,
        hostfile: Optional[Hostfile] = None,
        ranks: Sequence[int] = (),
        command_timeout: float = execute.DEFAULT_TIMEOUT_S,
        python: Optional[str] = None,
    ) -> None:
        self.host = host
        self.platform = platform or current_platform()
        self.hostfile = hostfile
        self.ranks = list(ranks)
        self.command_timeout = command_timeout
        self.python = python or os.environ.get("MESHDOCTOR_PYTHON") or sys.executable
        self._lock = threading.Lock()
        self._cache: Dict[Any, _Once] = {}

    @property
    def is_mac(self) -> bool:
        """True when the node is macOS (``platform == "darwin"``, ``MESHDOCTOR_PLATFORM``
        included)."""
        return self.platform == "darwin"

    def _once(self, key: Any, compute: Callable[[], Any]) -> Any:
        with self._lock:
            slot = self._cache.get(key)
            owner = slot is None
            if owner:
                slot = self._cache[key] = _Once()
        if owner:
            try:
                slot.value = compute()
            except BaseException as exc:  # handed to every asker
                slot.error = exc
            finally:
                slot.event.set()
        else:
            slot.event.wait()
        if slot.error is not None:
            raise slot.error
        return slot.value

    def command(
        self, *argv: str, timeout: Optional[float] = None, env: Optional[Dict[str, str]] = None
    ) -> execute.CommandResult:
        """Run ``argv`` once per run (cached), under ``timeout`` or ``command_timeout``, in
        ``env`` (default: this process's environment)."""
        t = self.command_timeout if timeout is None else timeout
        key = ("cmd",) + tuple(argv) + (tuple(sorted(env.items())) if env else ())
        return self._once(key, lambda: execute.run(list(argv), timeout=t, env=env))

    def fact(self, gather: Callable[["NodeContext"], Any]) -> Any:
        """``gather(self)``, computed once per run and shared by every check that asks."""
        return self._once(("fact", gather.__module__, gather.__qualname__), lambda: gather(self))

    @property
    def rank_label(self) -> str:
        """This machine's ranks in words: ``"rank 0"``, ``"ranks 0 and 1"``, ``"no rank"``."""
        from meshdoctor.hostfile.phrases import ranks_phrase

        return ranks_phrase(self.ranks)

    def hostfile_hosts(self) -> List[Tuple[int, Any]]:
        """``(rank, Host)`` of this machine's entries in the hostfile."""
        if self.hostfile is None:
            return []
        return [(r, self.hostfile.hosts[r]) for r in self.ranks]
