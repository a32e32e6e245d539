"""Per-host execution for the fixes: the one small interface between a fix and the hosts.

A fix asks :class:`HostExec` to run meshdoctor's own per-host work on a host (a host-scope fix,
a set of checks, the boot time) or a plain command there. This machine is served in-process (or
with :mod:`meshdoctor.execute`); every other host by running meshdoctor on it over ssh
(:mod:`meshdoctor.remote`, ``ssh -o BatchMode=yes``, every call under a deadline) and reading
the JSON verdict it prints. Hosts are served in parallel (:meth:`HostExec.each`).

Remote hosts are reached through the one fan-out, :mod:`meshdoctor.fanout` (the interpreter
there: :func:`meshdoctor.fanout.remote_python`); ``MESHDOCTOR_FIX_SCOPE`` (see
``fixes/stale_ranks``) and the run id ``MESHDOCTOR_FIX_RUN``
(:class:`meshdoctor.receipts.FixLock`) are passed on to them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor.parsers import json_text
from meshdoctor import execute, remote
from meshdoctor.checker.here import check_args, this_host_name
from meshdoctor.fanout import remote_python, run_meshdoctor, run_remote
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.locality import is_this_machine

FORWARD_ENV = ("MESHDOCTOR_FIX_SCOPE", "MESHDOCTOR_FIX_RUN")
REMOTE_FIX_TIMEOUT_S = 60.0
REMOTE_CHECK_TIMEOUT_S = 30.0
# the longest one host's share of a fix may take before it is abandoned (each call has its own,
# shorter deadlines; this only guarantees the run ends)
EACH_BACKSTOP_S = 2 * REMOTE_FIX_TIMEOUT_S
# the ``--hostfile`` argument a remote check reads the hostfile from (sent on its standard input)
REMOTE_HOSTFILE = "/dev/stdin"


@dataclass
class Target:
    """A host a fix acts on: ``name`` (the hostfile's ssh name, or this machine's name),
    ``rank`` (None without a hostfile), ``local`` (this machine: no ssh)."""

    name: str
    rank: Optional[int]
    local: bool


class RemoteRunError(RuntimeError):
    """meshdoctor on another host did not answer with a verdict; the message says why."""


class HostExec:
    """The hosts of one fix run (see module doc). ``targets`` in rank order; ``unreachable``:
    host -> reason, filled as ssh calls fail (a host that failed once is not waited for again)."""

    def __init__(self, hostfile: Optional[Hostfile] = None) -> None:
        self.hostfile = hostfile
        self._ssh = remote.Hosts()
        if hostfile is None:
            self.targets = [Target(this_host_name(), None, True)]
        else:
            self.targets = [
                Target(h.ssh or this_host_name(), h.rank, is_this_machine(h))
                for h in hostfile.hosts
            ]

    @property
    def unreachable(self) -> Dict[str, str]:
        """host -> why it could not be reached over ssh (filled as calls fail)."""
        return self._ssh.unreachable

    @property
    def unconfirmed(self) -> Dict[str, str]:
        """host -> why its last ssh call did not complete, for hosts that answered before (slow
        is not unreachable: such a host is never in :attr:`unreachable`)."""
        return self._ssh.unconfirmed

    def names(self) -> List[str]:
        """The targets' names, in rank order."""
        return [t.name for t in self.targets]

    def target(self, name: str) -> Target:
        """The target named ``name``; raises StopIteration for a name that is not one."""
        return next(t for t in self.targets if t.name == name)

    def each(
        self, fn: Callable[[Target], Any], targets: Optional[Sequence[Target]] = None
    ) -> Dict[str, Any]:
        """``fn(target)`` for every target at once (:func:`meshdoctor.deadline.outcomes`);
        returns host -> value, or host -> the exception it raised. Each call carries its own
        deadline (every command goes through :mod:`meshdoctor.execute` or
        :mod:`meshdoctor.remote`); :data:`EACH_BACKSTOP_S` is the backstop, after which a call
        still running is abandoned and its host gets a :class:`TimeoutError`."""
        from meshdoctor.deadline import outcomes

        targets = list(self.targets if targets is None else targets)
        got = outcomes(
            {t.name: (lambda t=t: fn(t)) for t in targets}, EACH_BACKSTOP_S, name="hostexec"
        )
        out: Dict[str, Any] = {}
        for name, o in got.items():
            if not o.finished:
                out[name] = TimeoutError(f"{name} did not answer within {EACH_BACKSTOP_S:g} s")
            else:
                out[name] = o.error if o.error is not None else o.value
        return out

    def run(
        self,
        host: str,
        argv: Sequence[str],
        timeout: float = execute.DEFAULT_TIMEOUT_S,
        *,
        input: Optional[str] = None,
    ) -> execute.CommandResult:
        """Run ``argv`` on ``host`` under ``timeout`` seconds (never raises; see
        :class:`meshdoctor.execute.CommandResult`)."""
        t = self.target(host)
        if t.local:
            return execute.run(list(argv), timeout=timeout, input=input)
        return self._ssh.run(host, argv, timeout, env=self._forward(), input=input)

    @staticmethod
    def _forward() -> Dict[str, str]:
        return {k: os.environ[k] for k in FORWARD_ENV if k in os.environ}

    def _meshdoctor(
        self,
        host: str,
        args: Sequence[str],
        timeout: float,
        input: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
    ) -> Dict[str, Any]:
        rep = run_meshdoctor(
            [host],
            args,
            timeout=timeout,
            stdin=input,
            env=dict(self._forward(), **(env or {})),
            ssh=self._ssh,
        )[host]
        if isinstance(rep.doc, dict) and "results" in rep.doc:
            return rep.doc
        raise RemoteRunError(
            f"meshdoctor on {host} gave no verdict: {rep.error or 'a document without results'}"
        )

    def fix(
        self,
        t: Target,
        names: Sequence[str],
        *,
        apply: bool,
        include_running: bool,
        options: Optional[Dict[str, Any]] = None,
    ) -> Tuple[List[Any], List[Any]]:
        """Run the host-scope fixes ``names`` on ``t``; returns ``(actions, results)`` as
        :class:`~meshdoctor.fixer.model.Action` and :class:`~meshdoctor.model.Result` objects with the
        host set to ``t.name``. Raises :class:`RemoteRunError` when a remote host gives no
        verdict."""
        from meshdoctor.fixer import engine as fixengine
        from meshdoctor.fixer.model import APPROVED, APPROVED_ENV, Action
        from meshdoctor.model import Result

        if t.local:  # this machine alone: the fixes it runs ask a HostExec of no hostfile
            return fixengine.run_here(
                names,
                hosts=HostExec(None),
                host=t.name,
                apply=apply,
                include_running=include_running,
                options=options,
            )
        args = (
            ["fix", *names, "--json"]
            + (["--yes"] if apply else [])
            + (["--include-running"] if include_running else [])
        )
        approved = (options or {}).get(APPROVED)
        extra = {} if approved is None else {APPROVED_ENV: json.dumps(approved.get(t.name, []))}
        doc = self._meshdoctor(t.name, args, REMOTE_FIX_TIMEOUT_S, env=extra)
        actions = [Action.from_dict(dict(a, host=t.name)) for a in doc.get("actions") or []]
        results = [Result.from_dict(d, host=t.name) for d in doc["results"]]
        return actions, results

    def check(
        self,
        t: Target,
        codes: Sequence[str],
        *,
        hostfile: Optional[Hostfile] = None,
        timeout: float = 10.0,
    ) -> List[Dict[str, Any]]:
        """Run the checks ``codes`` on ``t``; returns their result dicts (the verdict's
        ``results``), each with ``host`` set to ``t.name``. ``hostfile``: the hostfile the
        checks read (sent on stdin to a remote host). Raises :class:`RemoteRunError`."""
        if t.local:
            from meshdoctor.checker.here import context, run_here

            ctx = context(hostfile=hostfile, host=t.name, timeout=timeout)
            return [r.to_dict() for r in run_here(ctx, only=list(codes), timeout=timeout)]
        text = hostfile.to_launch_json() if hostfile is not None else None
        args = check_args(
            timeout=timeout,
            only=list(codes),
            hostfile=REMOTE_HOSTFILE if hostfile is not None else None,
        )
        doc = self._meshdoctor(t.name, args, timeout + REMOTE_CHECK_TIMEOUT_S, input=text)
        return [dict(d, host=t.name) for d in doc["results"]]

    def record(self, t: Target, kind: str, doc: Dict[str, Any]) -> str:
        """Write ``doc`` as a receipt of ``kind`` in ``t``'s own state directory (here, or over
        ssh: ``python -m meshdoctor.receipts record KIND``, meshdoctor sent there as the fan-out
        sends it, :func:`meshdoctor.fanout.run_remote`); returns its path there. Raises
        :class:`RemoteRunError` or OSError."""
        from meshdoctor import receipts

        if t.local:
            return str(receipts.write(kind, doc))
        r, _ = run_remote(
            self.run,
            t.name,
            remote_python(),
            ["record", kind],
            15.0,
            stdin=json.dumps(doc),
            module="meshdoctor.receipts",
        )
        try:
            got = json.loads(r.stdout)
        except ValueError:
            raise RemoteRunError(f"could not record on {t.name}: {r.describe()}") from None
        if "path" not in got:
            raise RemoteRunError(f"could not record on {t.name}: {got.get('error', '?')}")
        return str(got["path"])

    def boot_time(self, t: Target) -> float:
        """``t``'s boot time, seconds since the epoch (:mod:`meshdoctor.facts.boottime`). Raises
        :class:`RemoteRunError` or :class:`~meshdoctor.facts.boottime.BootTimeError`."""
        from meshdoctor.facts.boottime import BootTimeError, boot_time

        if t.local:
            return boot_time()
        r, _ = run_remote(
            self.run, t.name, remote_python(), [], 15.0, module="meshdoctor.facts.boottime"
        )
        try:
            doc = json_text.loads(r.stdout)
        except ValueError:
            raise RemoteRunError(
                f"could not read the boot time of {t.name}: {r.describe()}"
            ) from None
        if "boot_time" not in doc:
            raise BootTimeError(f"{t.name}: {doc.get('error', 'no boot time')}")
        return float(doc["boot_time"])
