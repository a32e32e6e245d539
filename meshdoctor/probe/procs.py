"""A started rank process (local worker, or the ssh client of a remote one) and the signals the
launcher may send: only to processes it started, never pid 1, itself or its parents
(:func:`meshdoctor.ranks.send_signal`)."""

from __future__ import annotations

import signal
import subprocess
from typing import Optional

from .. import remote
from ..ranks import send_signal


class RankProc:
    """One started rank: a local worker process, or the local ssh client of a remote one.

    ``pid``: the local child's pid (the worker itself locally; ssh's for a remote rank);
    ``remote_pid``: the worker's pid on its host (from its ready event)."""

    def __init__(self, rank: int, host: str, local: bool, popen: subprocess.Popen,
                 hosts: "remote.Hosts") -> None:
        self.rank, self.host, self.local, self.popen = rank, host, local, popen
        self.hosts = hosts
        self.pid = popen.pid
        self.remote_pid: Optional[int] = None

    def poll(self) -> Optional[int]:
        return self.popen.poll()

    def signal(self, sig: int) -> str:
        """Send ``sig`` to this rank (its whole process group locally; the worker pid over ssh
        for a remote rank). Returns an outcome string; never raises."""
        if self.local:
            if self.popen.poll() is not None:  # reaped: its pid may already be another's
                return "already gone"
            return signal_group(self.pid, sig)
        if self.remote_pid is None:
            return "remote pid unknown"
        r = self.hosts.run(self.host, ["kill", f"-{signal.Signals(sig).name[3:]}",
                                   str(self.remote_pid)], timeout=5)
        return "sent" if r.ok else f"failed: {r.describe()}"

    def state(self) -> Optional[str]:
        """Process state (psutil names: running, sleeping, stopped, zombie...) or None."""
        if self.local:
            if self.popen.poll() is not None:
                return None
            try:
                import psutil

                return psutil.Process(self.pid).status()
            except Exception:
                return None
        if self.remote_pid is None:
            return None
        r = self.hosts.run(self.host, ["ps", "-o", "stat=", "-p", str(self.remote_pid)],
                           timeout=5)
        code = r.stdout.strip()[:1] if r.ok else ""
        return {"T": "stopped", "R": "running", "S": "sleeping", "D": "disk-sleep",
                "Z": "zombie", "U": "disk-sleep"}.get(code)


def signal_group(pid: int, sig: int) -> str:
    """Signal the process group ``pid`` leads (we started it with a new session); see
    :func:`meshdoctor.ranks.send_signal` for what is refused."""
    return send_signal(pid, sig, group=True)


def kill_pid(pid: int) -> str:
    """SIGKILL ``pid`` (a leftover positively identified by the run marker); outcome text."""
    return send_signal(pid, signal.SIGKILL)
