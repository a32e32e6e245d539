"""The loader, the only code that reads a hostfile's JSON: :func:`load` (a path or ``-``),
:func:`parse` (text) and :func:`from_list` (``--hosts a,b,c``).

Each returns a frozen :class:`~meshdoctor.hostfile.model.Hostfile` whose ``problems`` are found
once, as it is built (:mod:`meshdoctor.hostfile.rules`): each inconsistency as a
:class:`~meshdoctor.hostfile.types.Problem`, a JSON path into the file (``hosts[2].rdma[2]``) and a
message. :class:`HostfileError` (a usage error, exit 2) says the file cannot be read or is not
JSON, naming the file and the line/column.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any, Iterable, Optional, Tuple, Union

from meshdoctor.hostfile.hostlist import HostListError, expand
from meshdoctor.hostfile.rules import written_problems
from meshdoctor.hostfile.types import BadCell, Document, Host, RdmaCell
from meshdoctor.hostfile.model import Hostfile

STDIN = "-"

# The most bytes the loader reads of a hostfile. An mlx.launch hostfile is a few KB (one small
# object per host; a JACCL mesh has at most 8); 4 MiB leaves room for any real one while a path
# with no end (/dev/zero, an endless pipe on standard input) stops here instead of filling memory.
MAX_BYTES = 4 * 1024 * 1024
# The deepest nesting of lists and objects the loader accepts. The deepest an mlx.launch hostfile
# goes is 5 (object > hosts > entry > rdma > a cell's list of devices); 32 leaves room for any
# real file while a document nested thousands deep is refused before any rule walks it.
MAX_DEPTH = 32
_NESTED = (
    "nested too deeply to be a hostfile ({what}). Expected the mlx.launch hostfile format (a "
    'list of hosts, or an object with "backend", "envs" and "hosts").'
)


class HostfileError(ValueError):
    """The hostfile cannot be read or parsed; the message names the file and the position."""


def _cell(value: Any) -> RdmaCell:
    """A written rdma cell (JSON value) as typed data."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(c, str) and c for c in value):
        return tuple(value)
    names = tuple(c for c in value if isinstance(c, str)) if isinstance(value, list) else ()
    return BadCell(json.dumps(value), names)


def _typed(data: Any) -> Tuple[str, Tuple[str, ...], Tuple[Host, ...]]:
    """``(backend, envs, hosts)`` of a parsed document; what is not of its type is left out
    (:func:`~meshdoctor.hostfile.rules.written_problems` names it)."""
    if isinstance(data, dict):
        backend, envs, raw_hosts = (
            data.get("backend", ""),
            data.get("envs", []),
            data.get("hosts", []),
        )
    elif isinstance(data, list):
        backend, envs, raw_hosts = "", [], data
    else:
        backend, envs, raw_hosts = "", [], []
    hosts = []
    for i, h in enumerate(raw_hosts if isinstance(raw_hosts, list) else []):
        if not isinstance(h, dict):
            h = {}
        ips, rdma = h.get("ips"), h.get("rdma")
        hosts.append(
            Host(
                i,
                h["ssh"] if isinstance(h.get("ssh"), str) else "",
                tuple(ip for ip in ips if isinstance(ip, str)) if isinstance(ips, list) else (),
                tuple(_cell(c) for c in rdma) if isinstance(rdma, list) else (),
                isinstance(rdma, list),
            )
        )
    return (
        backend if isinstance(backend, str) else "",
        tuple(e for e in envs if isinstance(e, str)) if isinstance(envs, list) else (),
        tuple(hosts),
    )


def _depth(data: Any) -> int:
    """How deep lists and objects nest in parsed JSON ``data`` (a scalar: 0), counted without
    recursion and stopping once past :data:`MAX_DEPTH`."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        value, level = todo.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            items = value.values() if isinstance(value, dict) else value
            todo.extend((v, level + 1) for v in items if isinstance(v, (list, dict)))
    return deepest


def parse(text: str, path: str = "<hostfile>", names: Optional[Iterable[str]] = None) -> Hostfile:
    """The loader: hostfile ``text`` as a validated :class:`~meshdoctor.hostfile.model.Hostfile`
    (``problems`` found here, once: the rules of :mod:`meshdoctor.hostfile.rules`). ``path``
    names the file in messages; ``names``: what means this machine (default
    :func:`meshdoctor.hostfile.locality.local_names`). Raises :class:`HostfileError` when it is
    not JSON. An entry that is not an object is reported once, and no other rule looks at it."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise HostfileError(
            f"{path}: "
            + _NESTED.format(what="JSON arrays or objects inside each other beyond Python's limit")
        ) from None
    except json.JSONDecodeError as exc:
        raise HostfileError(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
            "Expected the mlx.launch hostfile format (a list of hosts, or an object with "
            '"backend", "envs" and "hosts").'
        ) from None
    if _depth(data) > MAX_DEPTH:
        raise HostfileError(
            f"{path}: " + _NESTED.format(what=f"lists or objects more than {MAX_DEPTH} levels deep")
        )
    backend, envs, hosts = _typed(data)
    written, rules = written_problems(data)
    return Hostfile(
        hosts,
        backend,
        envs,
        path,
        here=frozenset(names) if names is not None else None,
        _document=Document(text, tuple(written), rules, hosts, envs),
    )


def _read_capped(stream: Any, name: str) -> bytes:
    """At most :data:`MAX_BYTES` bytes of the binary ``stream`` (reads ``MAX_BYTES + 1`` to
    tell; an ``int`` is a file descriptor, read unbuffered: a caller that gives up waiting on a
    pipe leaves no buffer lock held); raises :class:`HostfileError` naming ``name`` and the cap
    when there is more."""
    if isinstance(stream, int):
        import os

        parts, got = [], 0
        while got <= MAX_BYTES:
            part = os.read(stream, min(1 << 20, MAX_BYTES + 1 - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
        data = b"".join(parts)
    else:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise HostfileError(
            f"{name}: larger than {MAX_BYTES // (1024 * 1024)} MiB, the most meshdoctor reads of "
            "a hostfile (an mlx.launch hostfile is a few KB); pass the mlx.launch hostfile (JSON)"
        )
    return data


def _decode(data: bytes, name: str, verb: str) -> str:
    """``data`` as UTF-8 text (a BOM is tolerated); raises :class:`HostfileError`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HostfileError(
            f"{name}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
            f"at offset {exc.start}); {verb} the hostfile as UTF-8 JSON"
        ) from None


def load(path: Union[str, Path], names: Optional[Iterable[str]] = None) -> Hostfile:
    """Read and parse (:func:`parse`) the hostfile at ``path`` (``-``: standard input, named
    ``<stdin>`` in messages); files, devices and standard input alike are read up to
    :data:`MAX_BYTES`. Raises :class:`HostfileError` (unreadable, larger than the cap, not UTF-8,
    not JSON)."""
    if str(path) == STDIN:
        import sys

        try:
            data = _read_capped(sys.stdin.fileno(), "<stdin>")
        except HostfileError:
            raise
        except (OSError, ValueError, AttributeError) as exc:
            raise HostfileError(f"<stdin>: cannot read the hostfile: {exc}") from None
        return parse(_decode(data, "<stdin>", "send"), "<stdin>", names)
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = _read_capped(fh, str(p))
    except FileNotFoundError:
        raise HostfileError(
            f"{p}: no such file. Pass the mlx.launch hostfile (JSON) with --hostfile."
        ) from None
    except HostfileError:
        raise
    except OSError as exc:
        raise HostfileError(f"{p}: cannot read: {exc}") from None
    return parse(_decode(data, str(p), "save"), str(p), names)


def from_list(hostlist: str, names: Optional[Iterable[str]] = None) -> Hostfile:
    """A hostfile from ``--hosts a,b,c`` or Slurm's host-list syntax ``mac[01-16,20]``
    (:func:`meshdoctor.hostfile.hostlist.expand`; as mlx.launch: an IP also serves as the ring
    address), validated like a file listing the same entries. Raises :class:`HostfileError`
    on a list that cannot be expanded (an empty entry, a bad bracket), saying what and where."""
    try:
        names_given = expand(hostlist)
    except HostListError as exc:
        raise HostfileError(f"--hosts {hostlist!r}: {exc}") from None
    hosts = []
    for i, name in enumerate(names_given):
        try:
            ipaddress.ip_address(name)
            ips: Tuple[str, ...] = (name,)
        except ValueError:
            ips = ()
        hosts.append(Host(i, name, ips))
    return Hostfile(tuple(hosts), here=frozenset(names) if names is not None else None)
