"""Run meshdoctor itself on many hosts at once: the one fan-out that fleet mode, the fixes and any
other command use to get another host's verdict.

:func:`run_meshdoctor` runs ``<python> -m meshdoctor ARGS`` on every host in parallel: this
machine as a plain child process, the others over ssh through :mod:`meshdoctor.remote`, exactly
as mlx.launch reaches them (the user's ssh config, ``BatchMode=yes``, a connect timeout, every
argument quoted), each call under one deadline. It returns a :class:`HostReply` per host with
the parsed JSON document or the reason there is none (ssh's own message, a timeout, meshdoctor
missing there); it never raises for a host and never waits past the deadline.

The interpreter on the remote hosts is like mlx.launch's ``--python`` (mlx 0.32,
``mlx/distributed_run.py``: default ``sys.executable``): the caller's ``python`` argument, else
``MESHDOCTOR_REMOTE_PYTHON``, else this interpreter's path (:func:`remote_python`).

Nothing of meshdoctor needs to be installed on a remote host: by default this meshdoctor is
sent over the ssh session itself (:mod:`meshdoctor.ship`: a zip application cached under the
user's cache directory there, keyed and checked by its SHA-256) and run by that interpreter, so
the versions never mix. ``MESHDOCTOR_SHIP=installed`` runs the meshdoctor installed there
instead (``python -m meshdoctor``), which must then be this same version.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Union

from meshdoctor.parsers import json_text
from meshdoctor import execute, remote, ship
from meshdoctor.deadline import outcomes
from meshdoctor.text import printable, shell_line

REMOTE_PYTHON_ENV = "MESHDOCTOR_REMOTE_PYTHON"
SHIP_ENV = "MESHDOCTOR_SHIP"  # "installed": run the remote host's own meshdoctor, not ours
UPLOAD_S = 30.0  # at least this long for sending the zip application (under 1 MB) to a host


def upload_s(timeout: float) -> float:
    """The deadline (s) of sending meshdoctor to a host whose per-host deadline is ``timeout``:
    :data:`UPLOAD_S`, or ``timeout`` where that is longer (a deadline given for a busy or
    distant host holds for the upload too: a Python start, 1 MB through ssh, an fsync)."""
    return max(UPLOAD_S, timeout)


TOO_OLD = "too-old"  # HostReply.unfit: the remote Python is older than meshdoctor and MLX need
UNSAFE_CACHE = "unsafe-cache"  # HostReply.unfit: its cache folder is not the user's alone


def shipped() -> bool:
    """Whether remote hosts run this meshdoctor sent over ssh (the default) rather than one
    installed there (``MESHDOCTOR_SHIP=installed``)."""
    return os.environ.get(SHIP_ENV, "").strip().lower() != "installed"


def remote_python() -> str:
    """The interpreter that runs meshdoctor on remote hosts: ``MESHDOCTOR_REMOTE_PYTHON``, else
    this interpreter's path (mlx.launch's ``--python`` default is the same idea)."""
    return os.environ.get(REMOTE_PYTHON_ENV) or sys.executable


def install_source() -> Optional[str]:
    """The local path this meshdoctor was installed from (a source tree or a wheel file): the
    ``file://`` URL of its distribution's ``direct_url.json`` (PEP 610), else the source tree
    it runs from (the package's parent holds ``pyproject.toml``); None when it came from an
    index. meshdoctor is not published on PyPI, so a bare ``pip install meshdoctor`` is never
    the way to install it elsewhere."""
    import json as _json
    from importlib import metadata
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    for dist in metadata.distributions(name="meshdoctor"):
        try:
            text = dist.read_text("direct_url.json")
            url = (_json.loads(text) if text else {}).get("url", "")
        except (ValueError, AttributeError, OSError):
            continue
        if isinstance(url, str) and url.startswith("file://") and unquote(urlparse(url).path):
            return unquote(urlparse(url).path)
    tree = Path(__file__).resolve().parent.parent
    return str(tree) if (tree / "pyproject.toml").is_file() else None


def install_hint(host: str, python: str) -> Optional[str]:
    """The command that puts what the fleet commands need on ``host`` for ``python``, every
    word quoted (:func:`meshdoctor.remote.shown_command`). By default meshdoctor sends itself
    over ssh (:mod:`meshdoctor.ship`) and needs only MLX's interpreter there: ``ssh HOST
    PYTHON -m pip install mlx``. With ``MESHDOCTOR_SHIP=installed``: ``ssh HOST PYTHON -m pip
    install SOURCE``, SOURCE the source tree or wheel this one came from (a path: pip never
    looks the name up on an index; :func:`install_source`, copied there first, see
    :func:`install_text`). None without a local source in that mode, or for a host name the
    one host-name rule refuses: nothing is offered to run there."""
    if shipped():
        return remote.shown_command(host, [python, "-m", "pip", "install", "mlx"])
    src = install_source()
    if src is None:
        return None
    return remote.shown_command(host, [python, "-m", "pip", "install", src])


def install_text(host: str) -> str:
    """How to make ``host`` ready for the fleet commands, in words. By default nothing of
    meshdoctor is installed there (it is sent over ssh and cached); what the host needs is the
    interpreter the ranks use, with MLX. With ``MESHDOCTOR_SHIP=installed``: a wheel of this
    meshdoctor (``pip wheel --no-deps SOURCE``) copied there and installed with the command
    offered, or the README's install without a local source."""
    if shipped():
        return (
            "Nothing of meshdoctor needs installing there: it is sent over ssh and run by the "
            "interpreter the ranks use, which must exist on that host and have MLX "
            "(Python 3.10 or newer); name it with --python, MESHDOCTOR_REMOTE_PYTHON or the "
            "hostfile's python."
        )
    src = install_source()
    if src is None or remote.shown_command(host, ["true"]) is None:
        return (
            "MESHDOCTOR_SHIP=installed runs the meshdoctor installed there: install the same "
            "version from its source as the README says, or unset MESHDOCTOR_SHIP to send it "
            "over ssh."
        )
    wheel = shell_line(["python3", "-m", "pip", "wheel", "--no-deps", "-w", "dist", src])
    return (
        "MESHDOCTOR_SHIP=installed runs the meshdoctor installed there (unset it to send this "
        f"one over ssh instead): build a wheel here (`{wheel}`), copy it to {host} with scp "
        "and install it with pip, or copy the source (without its virtual environment) to "
        "the same path and install it with the command below."
    )


@dataclass
class HostReply:
    """One host's answer to :func:`run_meshdoctor`.

    ``doc``: the parsed JSON document (None when there is none); ``error``: why not, one line
    with ssh's or the interpreter's own message; ``reachable``: ssh got through (False for ssh's
    exit status 255, or a deadline overrun on a host that never answered and whose deadline was
    too short to tell: slow is not unreachable, see :func:`meshdoctor.remote.connected_by`); ``missing``: meshdoctor (or the interpreter)
    is not installed there; ``returncode``: the command's exit status (None on timeout);
    ``stderr``: its tail; ``duration_s``: wall seconds; ``via``: ``local`` or ``ssh``;
    ``unfit``: the remote interpreter cannot run meshdoctor (:data:`TOO_OLD`: older than
    :data:`meshdoctor.ship.MIN_PYTHON`; :data:`UNSAFE_CACHE`: its cache folder is writable by
    others), ``error`` then saying so; ``shipped``: meshdoctor was sent over ssh for this call
    (its cached copy was missing or not whole there)."""

    host: str
    via: str
    doc: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    reachable: bool = True
    missing: bool = False
    returncode: Optional[int] = None
    stderr: str = ""
    duration_s: float = 0.0
    unfit: Optional[str] = None
    shipped: bool = False


_MISSING_MARKS = (
    "No module named meshdoctor",
    "No module named 'meshdoctor'",
    "not found",
    "No such file or directory",
)


def _reply(
    host: str, via: str, res: execute.CommandResult, deadline: float, answered: bool = False
) -> HostReply:
    """``res`` as a :class:`HostReply`; ``answered``: the host answered an earlier call."""
    err_tail = [printable(ln.strip()) for ln in res.stderr.strip().splitlines() if ln.strip()]
    last = err_tail[-1][:300] if err_tail else ""
    rep = HostReply(
        host,
        via,
        returncode=res.returncode,
        stderr="\n".join(err_tail[-5:])[-1500:],
        duration_s=res.duration_s,
    )
    if res.timed_out:
        if via == "local" or answered or remote.connected_by(deadline):  # slow, not unreachable
            rep.error = (
                f"still running at the {deadline:g} s deadline ("
                + ("this machine" if via == "local" else "ssh got through")
                + ": slow, not unreachable)"
            )
            return rep
        rep.reachable = False
        rep.error = f"no answer from {host} within the {deadline:g} s deadline" + (
            f" (ssh: {last})" if last else ""
        )
        return rep
    if res.missing or (via == "ssh" and res.returncode == 255):
        if answered and not res.missing:  # ssh got through before: its connection broke
            rep.error = f"the ssh connection to {host} broke: {last or res.describe()}"
            return rep
        rep.reachable = False
        rep.error = last or res.describe()
        return rep
    if res.cut:  # more than any verdict holds: never parsed, and said so
        rep.error = f"the answer from {host} was cut: {res.describe()}"
        return rep
    said = ship.boot_said(res.stderr) if via == "ssh" else ""
    if said and res.returncode in (ship.EXIT_TOO_OLD, ship.EXIT_UNSAFE):
        rep.unfit = TOO_OLD if res.returncode == ship.EXIT_TOO_OLD else UNSAFE_CACHE
        rep.error = printable(said)
        return rep
    if said and res.returncode in (ship.EXIT_ABSENT, ship.EXIT_BAD_UPLOAD):
        rep.error = f"meshdoctor could not be sent to {host}: {printable(said)}"
        return rep
    line = res.stdout.strip()
    try:
        doc = json_text.loads(line) if line else None
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        rep.doc = doc
        return rep
    rep.missing = res.returncode in (1, 126, 127) and any(m in res.stderr for m in _MISSING_MARKS)
    rep.error = last or f"exited {res.returncode} without a JSON verdict"
    return rep


def run_remote(
    call: Callable[..., execute.CommandResult],
    host: str,
    python: str,
    args: Sequence[str],
    timeout: float,
    *,
    env: Optional[Dict[str, str]] = None,
    stdin: Optional[str] = None,
    module: str = "meshdoctor",
) -> "tuple[execute.CommandResult, bool]":
    """Run ``meshdoctor ARGS`` on ``host`` with ``python`` through ``call`` (:func:`remote.run`
    or a :class:`meshdoctor.remote.Hosts`' ``run``): this meshdoctor's cached copy there
    (:func:`meshdoctor.ship.run_argv`); when it is missing or not whole, the copy is sent on
    the session's standard input (:func:`meshdoctor.ship.store_argv`, at least
    :func:`upload_s` s of its own) and the command run again in what the first call left of
    ``timeout``. With
    ``MESHDOCTOR_SHIP=installed``: ``python -m meshdoctor ARGS``. ``module``: another module
    of meshdoctor run the same way (``python -m MODULE ARGS``). Returns the command's result
    and whether the copy was sent."""
    extra = {"env": env} if env is not None else {}  # a caller's run() may take no env

    def go(argv: Sequence[str], deadline: float, text: Optional[str]) -> execute.CommandResult:
        return call(host, list(argv), deadline, input=text, **extra)

    if not shipped():
        return go([python, "-m", module, *args], timeout, stdin), False
    res = go(ship.run_argv(python, args, module), timeout, stdin)
    if res.returncode != ship.EXIT_ABSENT or not ship.boot_said(res.stderr):
        return res, False
    up = go(ship.store_argv(python), upload_s(timeout), ship.upload_text())
    if not up.ok:
        return up, True
    left = max(1.0, timeout - res.duration_s)  # the upload has its own deadline
    return go(ship.run_argv(python, args, module), left, stdin), True


class Interrupted(KeyboardInterrupt):
    """An interrupt (Ctrl-C, SIGTERM, SIGHUP) stopped :func:`run_meshdoctor` while it waited:
    ``replies`` holds the hosts that had answered by then (host -> :class:`HostReply`, in the
    order asked), ``signame`` the signal's name."""

    def __init__(self, signame: str, replies: Dict[str, "HostReply"]) -> None:
        super().__init__(signame)
        self.signame, self.replies = signame, replies


def run_meshdoctor(
    hosts: Sequence[str],
    args: Union[Sequence[str], Callable[[str], Sequence[str]]],
    *,
    timeout: float,
    python: Optional[str] = None,
    stdin: Optional[str] = None,
    local: Optional[Callable[[str], bool]] = None,
    env: Optional[Dict[str, str]] = None,
    ssh: Optional[remote.Hosts] = None,
    parallel: int = remote.MAX_PARALLEL,
) -> Dict[str, HostReply]:
    """Run ``<python> -m meshdoctor ARGS`` on every host of ``hosts`` in parallel.

    ``args``: the meshdoctor arguments (a list, or a function host -> list for per-host ones;
    pass ``--json`` to get ``doc``); ``timeout``: seconds for each host, ssh connect included;
    ``python``: the remote interpreter (default :func:`remote_python`); ``stdin``: text fed to
    every call; ``local``: says which hosts are this machine (run without ssh, with this
    interpreter); default: none. ``env``: variables set for the remote command (this machine's
    child inherits the environment); ``ssh``: a :class:`meshdoctor.remote.Hosts` to go through,
    so a host found unreachable is remembered by the caller and not waited for again;
    ``parallel``: at most this many hosts at once (a large fleet goes in waves, each host's
    ``timeout`` counted from its own start). Returns host -> :class:`HostReply`, in ``hosts``
    order, within ``timeout`` plus about a second per wave (plus :func:`upload_s` where
    meshdoctor is sent over ssh and a host has no cached copy yet). Never raises for a host: an
    unsafe host name is an error reply. An interrupt while it waits raises
    :class:`Interrupted` with the replies so far.
    """
    python = python or remote_python()
    replies: Dict[str, HostReply] = {}
    unique = list(dict.fromkeys(hosts))
    gate = threading.BoundedSemaphore(max(1, parallel))
    waves = max(1, math.ceil(len(unique) / max(1, parallel)))

    def one(host: str) -> None:
        with gate:
            one_host(host)

    def one_host(host: str) -> None:
        argv = list(args(host) if callable(args) else args)
        try:
            if local is not None and local(host):
                res = execute.run(
                    [sys.executable, "-m", "meshdoctor", *argv], timeout=timeout, input=stdin
                )
                replies[host] = _reply(host, "local", res, timeout)
            else:
                call = ssh.run if ssh is not None else remote.run
                res, sent = run_remote(call, host, python, argv, timeout, env=env, stdin=stdin)
                answered = (ssh is not None and host in ssh.answered) or remote.SHARED.saw(host)
                replies[host] = _reply(host, "ssh", res, timeout, answered)
                replies[host].shipped = sent
        except Exception as exc:  # an unsafe host name, a fork failure: that host's answer
            replies[host] = HostReply(
                host, "ssh", error=f"{type(exc).__name__}: {exc}", reachable=False
            )

    try:
        per_host = timeout + 1.0 + (upload_s(timeout) if shipped() else 0.0)  # one upload
        outcomes({h: (lambda h=h: one(h)) for h in unique}, waves * per_host, name="fleet")
    except KeyboardInterrupt as exc:  # keep what had come: the caller reports it
        done = {h: replies[h] for h in unique if h in replies}
        raise Interrupted(str(exc) or "SIGINT", done) from None
    return {
        h: replies.get(h)
        or HostReply(h, "ssh", reachable=False, error=f"no answer within {timeout:g} s")
        for h in unique
    }
