"""The one place that speaks ssh.

Every remote command is an argument list; :func:`remote_command` quotes each word with
:func:`meshdoctor.text.shell_line` (``env`` assignments the same way), so nothing from a
hostfile reaches a shell unquoted. ssh runs with ``-o BatchMode=yes`` (never prompts: a missing key fails at once
instead of hanging) and ``-o ConnectTimeout``; short commands go through
:func:`meshdoctor.execute.run` and so have a deadline; long-running ones (probe ranks) are started
with :func:`popen` in their own session and are the caller's to reap.
"""

from __future__ import annotations

import math
import os
import subprocess
from typing import Dict, List, Mapping, Optional, Sequence, Set

from meshdoctor import execute
from meshdoctor.hostfile.rules import host_name_problem, is_env_key
from meshdoctor.text import shell_line

SSH = "ssh"
CONNECT_TIMEOUT_S = 5
SSH_CONFIG_ENV = "MESHDOCTOR_SSH_CONFIG"  # an ssh_config file for every ssh call (ssh -F)


class RemoteError(ValueError):
    """A host name or environment key that cannot be passed to ssh safely; the message names
    it and says what is allowed."""


def check_host(host: str) -> str:
    """``host`` if it is a usable ssh destination; raises :class:`RemoteError` for an empty
    name, one starting with ``-`` (it would be read as an ssh option) or holding shell
    metacharacters, whitespace or control characters
    (:func:`meshdoctor.hostfile.rules.host_name_problem`, the one host-name rule)."""
    why = host_name_problem(host)
    if why:
        raise RemoteError(f'host {host!r}: {why}; fix the hostfile\'s "ssh" entry')
    return host


def remote_command(argv: Sequence[str], env: Optional[Mapping[str, str]] = None) -> str:
    """The shell command line the remote sshd runs: ``env K=V ... argv...``, every word quoted.

    Raises :class:`RemoteError` for an environment key that is not a shell identifier."""
    words: List[str] = []
    if env:
        words.append("env")
        for k, v in env.items():
            if not is_env_key(k):
                raise RemoteError(
                    f"environment key {k!r} is not a valid variable name "
                    "(letters, digits and '_', not starting with a digit)"
                )
            words.append(f"{k}={v}")
    return shell_line([*words, *argv])


def ssh_argv(
    host: str,
    argv: Sequence[str],
    env: Optional[Mapping[str, str]] = None,
    *,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> List[str]:
    """The local argv that runs ``argv`` on ``host``:
    ``ssh [-F $MESHDOCTOR_SSH_CONFIG] -o BatchMode=yes -o ConnectTimeout=N
    -o ServerAliveInterval=5 -- host 'cmd'`` (N: ``connect_timeout`` rounded up, so a caller's
    shorter deadline, not ssh, ends a call that has not connected in time)."""
    config = os.environ.get(SSH_CONFIG_ENV)
    return [
        SSH,
        *(["-F", config] if config else []),
        "-o",
        "BatchMode=yes",
        "-o",
        f"ConnectTimeout={max(1, math.ceil(connect_timeout))}",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=3",
        "-o",
        "LogLevel=ERROR",
        "--",
        check_host(host),
        remote_command(argv, env),
    ]


def shown_command(host: str, argv: Sequence[str]) -> Optional[str]:
    """The ssh command line a user may copy to run ``argv`` on ``host`` (advice in a
    remediation): ``ssh HOST 'CMD'``, the host and the remote command each one quoted word
    (:func:`meshdoctor.text.shell_line`; the remote command as :func:`remote_command` quotes
    it). None when the one host-name rule (:func:`meshdoctor.hostfile.rules.host_name_problem`)
    refuses ``host`` (which includes every name ssh would read as an option): no command is
    offered for a name a shell or ssh would misread; the advice is to fix the hostfile."""
    if host_name_problem(host):
        return None
    return shell_line(["ssh", host, remote_command(argv)])


def shown_remedy(host: str, command: str) -> Optional[str]:
    """A remedy's command line for a result about ``host``, made safe to paste on the
    operator's machine: ``command`` (a shell line as the producer printed it, words quoted)
    run on ``host`` through :func:`shown_command` (``kill -TERM 332`` becomes
    ``ssh h1 'kill -TERM 332'``: pasted as it was, it would signal an unrelated local pid).
    None when ``host`` is refused by the one host-name rule or ``command`` is not a line of
    plain words (nothing is offered that would not run as shown)."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if not argv or any(w in ("|", "||", "&&", ";", "&", ">", "<") for w in argv):
        return None
    return shown_command(host, argv)


def run(
    host: str,
    argv: Sequence[str],
    timeout: float = execute.DEFAULT_TIMEOUT_S,
    *,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
) -> execute.CommandResult:
    """Run ``argv`` on ``host`` over ssh with a deadline of ``timeout`` seconds (connect
    included); never raises for ssh failures (exit 255) or timeouts, see
    :func:`meshdoctor.execute.run`."""
    return execute.run(
        ssh_argv(host, argv, env, connect_timeout=min(CONNECT_TIMEOUT_S, timeout)),
        timeout=timeout,
        input=input,
    )


def popen(
    host: str,
    argv: Sequence[str],
    env: Optional[Dict[str, str]] = None,
    *,
    stdin=subprocess.DEVNULL,
) -> subprocess.Popen:
    """Start ``argv`` on ``host`` as a long-running ssh child in its own session, with stdout
    and stderr piped; the caller owns the process (deadline, kill, wait). Raises OSError if
    ssh cannot be started and :class:`RemoteError` for an unsafe host or env key."""
    return execute.spawn(ssh_argv(host, argv, env), stdin=stdin)


CONNECTED_SLACK_S = 2.0  # a deadline this much past ssh's connect timeout: ssh got through


def connected_by(timeout: float) -> bool:
    """Whether an ssh call under ``timeout`` seconds that overran it had got through: ssh's own
    ``ConnectTimeout`` (:func:`ssh_argv`, TCP connect and the banner exchange, see
    ``ssh_config(5)``) ends a connection that does not come up with exit status 255, so a call
    still running :data:`CONNECTED_SLACK_S` past it reached the host, which was only slow."""
    return timeout >= min(CONNECT_TIMEOUT_S, math.ceil(timeout)) + CONNECTED_SLACK_S


class Hosts:
    """ssh calls to a set of hosts that remember which hosts never answered.

    Slow is not unreachable. A host is ``answered`` once a call to it completed (any exit status
    but ssh's own 255), once a call overran a deadline long past ssh's connect timeout
    (:func:`connected_by`: ssh got through), or once the caller saw it answer
    (:meth:`mark_answered`: a probe rank's events arrived from it). A later failure on an
    answered host (a deadline overrun, even ssh's 255) is recorded in ``unconfirmed`` (host ->
    one-line reason) and never makes it unreachable: the caller says what it could not confirm.

    A host that has NOT answered and whose call ssh itself could not complete (exit status 255:
    connect refused or timed out, no route, host key or auth failure) or that overran its
    deadline is marked ``unreachable`` with the reason, and later calls to it return at once
    instead of waiting for another connect timeout: a teardown after a pulled cable then costs
    one timeout, not one per call. ``unreachable`` maps host -> one-line reason.
    """

    def __init__(self) -> None:
        self.unreachable: Dict[str, str] = {}
        self.unconfirmed: Dict[str, str] = {}
        self.answered: Set[str] = set()

    def mark_answered(self, host: str) -> None:
        """``host`` answered (the caller saw it: a rank's events, a started session); a later
        failure there is ``unconfirmed``, not ``unreachable``."""
        self.answered.add(host)
        self.unreachable.pop(host, None)

    def run(
        self,
        host: str,
        argv: Sequence[str],
        timeout: float = execute.DEFAULT_TIMEOUT_S,
        *,
        env: Optional[Mapping[str, str]] = None,
        input: Optional[str] = None,
    ) -> execute.CommandResult:
        """:func:`run` (``env``, ``input`` as there), or an immediate failed result (returncode
        None) for a host already known to be unreachable (one that never answered)."""
        if host in self.unreachable:
            return execute.CommandResult(
                list(argv),
                None,
                "",
                f"skipped, {host} is unreachable: {self.unreachable[host]}",
                0.0,
            )
        r = run(host, argv, timeout, env=env, input=input)
        if r.timed_out:
            why = f"ssh to {host} did not answer within {timeout:g} s"
            if connected_by(timeout):
                self.answered.add(host)
            self._failed(host, why)
        elif r.returncode == 255:
            tail = (r.stderr.strip().splitlines() or ["ssh exited 255"])[-1]
            self._failed(host, tail.strip()[:200])
        elif r.returncode is not None:
            self.answered.add(host)
            self.unconfirmed.pop(host, None)
        return r

    def _failed(self, host: str, why: str) -> None:
        if host in self.answered:
            self.unconfirmed[host] = why
        else:
            self.unreachable[host] = why
