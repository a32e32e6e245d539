"""A started rank process: the local worker, or the local ssh client of a remote one.

Stopping it is :mod:`meshdoctor.teardown`'s job (:meth:`RankProc.target`); signals go only to
processes the launcher started, never pid 1, itself or its parents
(:func:`meshdoctor.ranks.send_signal`).
"""

from __future__ import annotations

import subprocess
from typing import Optional

from meshdoctor.teardown import Target
from meshdoctor.probe.events import RankState


class RankProc:
    """One started rank. ``pid``: the local child's pid (the worker itself locally; ssh's for a
    remote rank). The rank's pid on its host is ``state.pid`` (stored once: set at start for a
    local rank, from the ready event for a remote one; None while a remote rank starts)."""

    def __init__(self, state: RankState, popen: subprocess.Popen) -> None:
        self.state, self.popen = state, popen
        self.rank, self.host, self.local = state.rank, state.host, state.local
        self.pid = popen.pid

    @property
    def rank_pid(self) -> Optional[int]:
        """The rank's pid on its own host (None: a remote rank that has not reported it)."""
        return self.state.pid

    def poll(self) -> Optional[int]:
        """The rank process's exit status, or None while it runs."""
        return self.popen.poll()

    def local_state(self) -> Optional[str]:
        """Process state of a local rank (psutil names: running, sleeping, stopped, zombie...)
        or None (exited, unreadable, remote)."""
        if not self.local or self.popen.poll() is not None:
            return None
        try:
            from meshdoctor.proctable import psutil

            return psutil.Process(self.pid).status()
        except Exception:
            return None

    def target(self) -> Target:
        """This rank as a :class:`meshdoctor.teardown.Target`."""
        return Target(self.host, self.rank_pid, f"rank {self.rank}", self.local, self.popen)
