"""The one place that speaks ssh.

Every remote command is an argument list; :func:`remote_command` quotes each word with
:func:`meshdoctor.text.shell_line` (``env`` assignments the same way), so nothing from a
hostfile reaches a shell unquoted. ssh runs with ``-o BatchMode=yes`` (never prompts: a missing key fails at once
instead of hanging) and ``-o ConnectTimeout``; short commands go through
:func:`meshdoctor.execute.run` and so have a deadline; long-running ones (probe ranks) are started
with :func:`popen` in their own session and are the caller's to reap.

One connection per host for a whole command: every call to a host goes through one OpenSSH
master connection (``ControlMaster=auto``, ``ssh_config(5)``), so only the first call to a host
pays for the TCP connect, the key exchange and the authentication; the others open a session
over it. The control sockets live in a folder of this run (:class:`Shared`: created 0700 under
the state directory on first use, a short path since a unix socket path is limited to about
100 bytes: 104 on macOS, ``unix(4)``), one socket per host named by a hash of its name. The
masters are ended (``ssh -O exit``) and the folder removed when the command ends, interrupted or
not (:func:`close_shared`, called by the command line's exit and at interpreter exit); a master
left by a killed meshdoctor exits by itself :data:`CONTROL_PERSIST_S` seconds after its last
session (``ControlPersist``). ``MESHDOCTOR_SSH_MULTIPLEX=0`` turns it off: one connection per call.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Set

from meshdoctor import execute
from meshdoctor.hostfile.rules import host_name_problem, is_env_key
from meshdoctor.text import shell_line

SSH = "ssh"
CONNECT_TIMEOUT_S = 5
SSH_CONFIG_ENV = "MESHDOCTOR_SSH_CONFIG"  # an ssh_config file for every ssh call (ssh -F)
MULTIPLEX_ENV = "MESHDOCTOR_SSH_MULTIPLEX"  # "0": no shared connection, one per call
CONTROL_PERSIST_S = 15  # an idle master waits this long for the next session, then exits
MAX_PARALLEL = 32  # hosts reached at once by default (the fan-out's cap for large fleets)
CLOSE_TIMEOUT_S = 2.0  # the deadline of ending the masters at exit (a local socket each)
# a control socket's path at most this long: ssh binds it first under the name plus a
# 17-character random suffix (OpenSSH mux.c), and sun_path holds 104 bytes on macOS
SOCKET_PATH_MAX = 104 - 1 - 17
_HASH_CHARS = 12  # a socket is named by this many hex digits of the SHA-256 of its host


class Shared:
    """The run's ssh master connections: the folder of their control sockets (``None`` until
    the first ssh call, and when it cannot be made: every call then connects on its own), the
    hosts called through it, those whose master came up (``reached``: ssh authenticated
    there). Thread-safe; one per process (:data:`SHARED`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dir: Optional[Path] = None
        self.failed = False
        self.closed = False
        self.hosts: Set[str] = set()
        self.reached: Set[str] = set()

    def path(self, host: str) -> Optional[str]:
        """The control socket's path for ``host``, the folder made on first use; None when
        connections are not shared (turned off, closed, or no folder could be made)."""
        if os.environ.get(MULTIPLEX_ENV, "1").strip() == "0":
            return None
        with self.lock:
            if self.closed or self.failed:
                return None
            if self.dir is None:
                self.dir = _make_dir()
                if self.dir is None:
                    self.failed = True
                    return None
                atexit.register(close_shared)
            self.hosts.add(host)
            return str(self.dir / socket_name(host))

    def saw(self, host: str) -> bool:
        """Whether ``host``'s master is or was up (its control socket is there, even one left
        by a master that died): ssh got through and authenticated. Remembers it."""
        with self.lock:
            if host in self.reached:
                return True
            d = self.dir
        if d is None or not os.path.exists(d / socket_name(host)):
            return False
        with self.lock:
            self.reached.add(host)
        return True


SHARED = Shared()


def socket_name(host: str) -> str:
    """The control socket's file name for ``host``: a hash, so any host name gives a short,
    plain file name."""
    return hashlib.sha256(host.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]


def _make_dir() -> Optional[Path]:
    """A new 0700 folder for this run's control sockets: ``ssh-PID-XXXXXXXX`` under the state
    directory (folders of runs whose process is gone are removed first), or under the system's
    temporary folder when the state directory's path is too long for a socket path or cannot be
    used. None when neither works."""
    from meshdoctor import receipts

    prefix = f"ssh-{os.getpid()}-"
    room = SOCKET_PATH_MAX - len(f"/{prefix}XXXXXXXX/") - _HASH_CHARS  # mkdtemp adds 8
    bases: List[Path] = []
    try:
        base = receipts.state_dir()
        if len(str(base)) <= room:
            bases.append(base)
            _sweep(base)
    except (receipts.StateDirError, OSError):
        pass
    bases += [Path(p) for p in (tempfile.gettempdir(), "/tmp") if len(p) <= room]
    for base in bases:
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=base))  # mode 0700
        except OSError:
            continue
    return None


def _sweep(base: Path) -> None:
    """Remove the socket folders of earlier runs whose meshdoctor is gone (killed before its
    exit could remove them): ours (same owner), named ``ssh-PID-...``, PID not running."""
    from meshdoctor.proctable import psutil

    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for e in entries:
        parts = e.name.split("-")
        if len(parts) != 3 or parts[0] != "ssh" or not parts[1].isdigit():
            continue
        try:
            if not e.is_dir(follow_symlinks=False) or e.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if not psutil.pid_exists(int(parts[1])):
            shutil.rmtree(e.path, ignore_errors=True)


def _control_option(sock: str) -> str:
    """``ControlPath=...`` for ``sock``: quoted (a path may hold spaces: ``Application
    Support``) and ``%`` doubled (ssh expands ``%`` tokens in it, ``ssh_config(5)``)."""
    return 'ControlPath="' + sock.replace("%", "%%") + '"'


def _ssh_options() -> List[str]:
    config = os.environ.get(SSH_CONFIG_ENV)
    return [SSH, *(["-F", config] if config else [])]


def close_shared(timeout: float = CLOSE_TIMEOUT_S) -> None:
    """End this run's ssh masters (``ssh -O exit``, every host at once, under one deadline of
    ``timeout`` seconds) and remove their folder; later ssh calls connect on their own. Run at
    the command's exit (also after an interrupt) and at interpreter exit; never raises."""
    from meshdoctor import deadline

    with SHARED.lock:
        d, hosts = SHARED.dir, sorted(SHARED.hosts)
        SHARED.closed = True
        SHARED.dir = None
    if d is None:
        return
    calls = {}
    for host in hosts:
        sock = d / socket_name(host)
        if os.path.exists(sock):
            argv = [*_ssh_options(), "-o", _control_option(str(sock)), "-O", "exit", "--", host]
            calls[host] = lambda argv=argv: execute.run(argv, timeout, cleanup=True)
    try:
        deadline.outcomes(calls, timeout + 0.5, name="ssh-exit")
    finally:
        shutil.rmtree(d, ignore_errors=True)


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
    -o ServerAliveInterval=5 [-o ControlMaster=auto -o ControlPath=P -o ControlPersist=S]
    -- host 'cmd'`` (N: ``connect_timeout`` rounded up, so a caller's shorter deadline, not
    ssh, ends a call that has not connected in time; P: the host's control socket in this
    run's folder, see :class:`Shared`)."""
    host = check_host(host)
    control = SHARED.path(host)
    shared = (
        [
            "-o",
            "ControlMaster=auto",
            "-o",
            _control_option(control),
            "-o",
            f"ControlPersist={CONTROL_PERSIST_S}",
        ]
        if control
        else []
    )
    return [
        *_ssh_options(),
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
        *shared,
        "--",
        host,
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


def fleet_remedy(command: str, host: str, source: Optional[str], remote_host: bool):
    """The command of a remedy a host's node check sent, as the operator running the fleet
    check should paste it: a ``meshdoctor fix ...`` keeps the hostfile that produced it
    (``meshdoctor fix stale-ranks --hostfile h.json --yes``: ``--yes`` alone would clean only
    the machine it is pasted on); any other command of a remote host runs there
    (:func:`shown_remedy`). ``source``: the hostfile's path (None: ``--hosts``, the command
    then targets the host alone)."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError:
        argv = []
    if argv[:2] == ["meshdoctor", "fix"] and "--hostfile" not in argv:
        if source:
            rest = [w for w in argv[2:] if w != "--yes"]
            return shell_line(
                ["meshdoctor", "fix", *rest, "--hostfile", source]
                + (["--yes"] if "--yes" in argv else [])
            )
        if not remote_host:
            return command
    return shown_remedy(host, command) if remote_host else command


def fleet_prose(text: str, host: str, source: Optional[str], remote_host: bool) -> str:
    """A remedy's prose as the operator running the fleet check should read it: each command
    it quotes in backquotes (`kill -KILL 332`) is rewritten as :func:`fleet_remedy` rewrites
    the remedy's command (run on the remote host through ``ssh HOST``, a ``meshdoctor fix``
    keeping the hostfile); an ``ssh ...`` command is left as it is."""
    import re

    def one(m: "re.Match") -> str:
        command = m.group(1)
        if command.split(" ", 1)[0] == "ssh":
            return m.group(0)
        shown = fleet_remedy(command, host, source, remote_host)
        return f"`{shown}`" if shown else m.group(0)

    return re.sub(r"`([^`\n]+)`", one, text)


def fleet_remediation(rem, host: str, source: Optional[str], remote_host: bool) -> None:
    """Rewrite ``rem`` (a :class:`meshdoctor.model.Remediation` a host's node check sent, or
    None) in place for the operator running the fleet check: its command through
    :func:`fleet_remedy`, the commands its prose quotes through :func:`fleet_prose`."""
    if rem is None:
        return
    if rem.command:
        rem.command = fleet_remedy(rem.command, host, source, remote_host)
    if "`" in rem.text:
        rem.text = fleet_prose(rem.text, host, source, remote_host)


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
        if SHARED.saw(host):  # its master came up: ssh got through, whatever this call did
            self.answered.add(host)
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
