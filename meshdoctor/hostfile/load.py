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
            f"{path}: nested too deeply to be a hostfile (JSON arrays or objects inside each "
            "other beyond Python's recursion limit). Expected the mlx.launch hostfile format (a "
            'list of hosts, or an object with "backend", "envs" and "hosts").'
        ) from None
    except json.JSONDecodeError as exc:
        raise HostfileError(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
            "Expected the mlx.launch hostfile format (a list of hosts, or an object with "
            '"backend", "envs" and "hosts").'
        ) from None
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
    tell); raises :class:`HostfileError` naming ``name`` and the cap when there is more."""
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
            data = _read_capped(sys.stdin.buffer, "<stdin>")
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
