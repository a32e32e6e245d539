"""The mlx.launch hostfile as typed data: loading, consistency rules, and which rank this machine is.

Format (mlx ``python/mlx/_distributed_utils/common.py`` ``Hostfile.from_file``, mlx 0.32.4):
either a JSON list of hosts, or ``{"backend": ..., "envs": ["K=V", ...], "hosts": [...]}``; a host
is ``{"ssh": name, "ips": [ip, ...], "rdma": [null | "dev" | ["dev", ...], ...]}``; rank = position.

* The loader, :func:`load` (a path or ``-``) and :func:`parse` (text), is the only code that reads
  the JSON. It returns a frozen :class:`Hostfile` (tuples, frozen :class:`Host` entries) whose
  ``problems`` are found once, as it is built: each inconsistency as a :class:`Problem`, a JSON
  path into the file (``hosts[2].rdma[2]``) and a message; MD401 reports them and ``probe``
  refuses the file over them (exit 2). It raises :class:`HostfileError` (a usage error, exit 2)
  when the file cannot be read or is not JSON, naming the file and the line/column.
* :func:`from_list` (``--hosts a,b,c``) and the :class:`Hostfile` constructor build one from typed
  values, checked by the same rules; :meth:`Hostfile.to_launch_json` is the JSON text another
  meshdoctor reads.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    Dict,
    FrozenSet,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

BACKENDS = ("ring", "jaccl", "jaccl-ring", "mpi", "nccl")
JACCL_BACKENDS = ("jaccl", "jaccl-ring")
JACCL_MESH_MAX = (
    8  # the JACCL mesh connects every pair of Macs directly: at most 8 ranks (mlx docs)
)
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_env_key(key: str) -> bool:
    """A usable environment variable name (letters, digits, '_', not starting with a digit)."""
    return bool(_ENV_KEY.match(key))


# A host name meshdoctor will hand to ssh: letters, digits and . _ - (host names, RFC 1123), plus
# @ (user@host), : and % (IPv6 addresses and zones), not starting with '-' (ssh would read an
# option). Everything else (; $ ` ( ) | & < > quotes, spaces, control characters) is refused, so no
# host name can mean anything to a shell, whichever command reaches the host.
_SAFE_HOST = re.compile(r"^[A-Za-z0-9_.@:%-]+$")


def host_name_problem(name: str) -> Optional[str]:
    """Why ``name`` cannot be a host to reach (an ssh destination), or None when it can.

    The one validation of host names for every command that reaches a host (MD401, probe,
    :mod:`meshdoctor.remote`): empty, longer than 255 characters, starting with ``-`` (ssh would
    read it as an option), or holding anything but letters, digits and ``. _ - @ : %`` (shell
    metacharacters such as ``;``, ``$``, backquotes, spaces and control characters)."""
    if not name:
        return "missing or empty: the host name to ssh into"
    if len(name) > 255:
        return f"{len(name)} characters: longer than any host name (at most 255)"
    if name.startswith("-") or not _SAFE_HOST.match(name):
        return (
            f"{name!r} cannot be an ssh destination: a host name holds only letters, digits "
            "and . _ - @ : % and does not start with '-'"
        )
    return None


def n_ranks(n: int) -> str:
    """``"1 rank"``, ``"3 ranks"``."""
    return f"{n} rank" + ("" if n == 1 else "s")


def ranks_phrase(ranks: Sequence[int]) -> str:
    """``"rank 0"``, ``"ranks 0 and 1"``, ``"ranks 0, 1 and 2"``; four or more consecutive
    ranks as a range (``"ranks 0-7 and 9"``), so a summary stays one short line however large
    the mesh; ``"no rank"`` when empty."""
    r: List[str] = []
    i, xs = 0, list(ranks)
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        if j - i >= 3:
            r.append(f"{xs[i]}-{xs[j]}")
        else:
            r.extend(str(x) for x in xs[i : j + 1])
        i = j + 1
    if not r:
        return "no rank"
    if len(r) == 1:
        return f"ranks {r[0]}" if "-" in r[0] else f"rank {r[0]}"
    return f"ranks {', '.join(r[:-1])} and {r[-1]}"


def host_sources_conflict(given: Sequence[str]) -> Optional[str]:
    """The one rule for the options that name the hosts (``--hostfile``, ``--hosts``, and
    ``-n`` for the probe; ``given``: those passed): at most one. Returns the message for two or
    more, None otherwise; never one silently dropped."""
    if len(given) > 1:
        return f"{' and '.join(given)} both name the hosts; pass only one"
    return None


class HostfileError(ValueError):
    """The hostfile cannot be read or parsed; the message names the file and the position."""


class Problem(NamedTuple):
    """One inconsistency of a hostfile: ``path``, a JSON path into the file
    (``hosts[2].rdma[2]``), and ``message``, what is wrong there and what it needs."""

    path: str
    message: str


@dataclass(frozen=True)
class BadCell:
    """An ``rdma`` cell that is neither null, a device name nor a non-empty list of device names
    (a number, an object, ``[]``, a list holding something else), kept as written so the rules
    can name it: ``written`` is its JSON text, ``names`` the strings a list cell still holds."""

    written: str
    names: Tuple[str, ...] = ()

    @property
    def is_list(self) -> bool:
        return self.written.startswith("[")

    @property
    def value(self) -> Any:
        """The cell as JSON would give it (for messages, and to write it back)."""
        return json.loads(self.written)


#: One cell of a host's ``rdma`` row: None (no device towards that rank), a device name, a
#: tuple of device names (one per cable), or a :class:`BadCell`.
RdmaCell = Union[None, str, Tuple[str, ...], BadCell]


def _cell(value: Any) -> RdmaCell:
    """A written rdma cell (JSON value) as typed data."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(c, str) and c for c in value):
        return tuple(value)
    names = tuple(c for c in value if isinstance(c, str)) if isinstance(value, list) else ()
    return BadCell(json.dumps(value), names)


@dataclass(frozen=True)
class Host:
    """One rank's entry: ``rank`` (its position), ``ssh`` name ('' when missing), ``ips`` (the
    strings the entry lists) and the ``rdma`` row, one :data:`RdmaCell` per rank.

    ``rdma_row``: the entry lists an ``rdma`` row, even an empty one (``"rdma": []``); a
    non-empty ``rdma`` always counts as one. Lists given for ``ips``/``rdma`` become tuples."""

    rank: int
    ssh: str
    ips: Tuple[str, ...] = ()
    rdma: Tuple[RdmaCell, ...] = ()
    rdma_row: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "ips", tuple(self.ips))
        rdma = tuple(tuple(c) if isinstance(c, list) else c for c in self.rdma)
        object.__setattr__(self, "rdma", rdma)
        object.__setattr__(self, "rdma_row", self.rdma_row or bool(rdma))

    def devices_to(self, peer: int) -> List[str]:
        """RDMA device names this host uses towards rank ``peer`` (empty if none listed)."""
        if peer >= len(self.rdma):
            return []
        cell = self.rdma[peer]
        if isinstance(cell, str):
            return [cell]
        if isinstance(cell, tuple):
            return [c for c in cell if isinstance(c, str)]
        if isinstance(cell, BadCell):
            return list(cell.names)
        return []

    def devices(self) -> List[str]:
        """Every RDMA device this host's row names, in order, without repeats."""
        seen: List[str] = []
        for peer in range(len(self.rdma)):
            for d in self.devices_to(peer):
                if d not in seen:
                    seen.append(d)
        return seen


@dataclass(frozen=True)
class _Document:
    """The JSON document a :class:`Hostfile` stands for: its ``text``, the ``problems`` of how
    it is written (found by the loader, or from the typed values), whether the entries are sound
    enough for the rules (``rules``), and the ``hosts``/``envs`` it was read into."""

    text: str
    problems: Tuple[Problem, ...]
    rules: bool
    hosts: Tuple[Host, ...]
    envs: Tuple[str, ...]


@dataclass(frozen=True)
class Hostfile:
    """A hostfile, validated: ``hosts`` (rank order), ``backend`` as written ('' when absent),
    ``envs`` (``"K=V"`` strings) and ``path`` (where it was read; None when built from values).

    ``problems``: every inconsistency as :class:`Problem` tuples (empty when consistent), found
    once when the hostfile is built (the rules: :func:`parse`); MD401 reports them and ``probe``
    refuses the file over them. Frozen: a variant (``dataclasses.replace(hf, backend=...)``) is
    a new hostfile, checked anew. Build one with :func:`load`, :func:`parse`, :func:`from_list`,
    or from typed values: ``Hostfile((Host(0, "m1", ("10.0.0.1",)), ...), backend="ring")``.
    ``here`` (default :func:`local_names`): the names and addresses that mean this machine, for
    the locality rule."""

    hosts: Tuple[Host, ...]
    backend: str = ""
    envs: Tuple[str, ...] = ()
    path: Optional[str] = None
    problems: Tuple[Problem, ...] = field(init=False, default=())
    here: Optional[FrozenSet[str]] = field(default=None, repr=False, compare=False)
    _document: Optional[_Document] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts = tuple(self.hosts)
        if any(h.rank != i for i, h in enumerate(hosts)):
            raise ValueError("each Host's rank must be its position in hosts")
        object.__setattr__(self, "hosts", hosts)
        object.__setattr__(self, "envs", tuple(self.envs))
        if self.here is None:
            object.__setattr__(self, "here", frozenset(local_names()))
        doc = self._document
        if doc is None or doc.hosts != hosts or doc.envs != self.envs:
            doc = _typed_document(self)  # built from values, or a variant with other entries
            object.__setattr__(self, "_document", doc)
        rules = _rules(self, self.here) if doc.rules else []
        object.__setattr__(self, "problems", doc.problems + tuple(rules))

    def env_dict(self) -> Dict[str, str]:
        """``envs`` (``"K=V"`` strings) as a dict; an entry without ``=`` is skipped."""
        return dict(e.split("=", 1) for e in self.envs if "=" in e)

    @property
    def world_size(self) -> int:
        return len(self.hosts)

    @property
    def effective_backend(self) -> str:
        """The backend as written, else ``jaccl`` when any rdma row is given, else ``ring``."""
        if self.backend:
            return self.backend
        if any(any(c is not None for c in h.rdma) for h in self.hosts):
            return "jaccl"
        return "ring"

    def to_launch_json(self) -> str:
        """The hostfile as JSON text in mlx.launch's format, for another meshdoctor to read
        (``check --hostfile`` sends it to every host on stdin): the document as read, so every
        host validates what the user wrote, or for a hostfile built from values (``--hosts``),
        those values (:func:`parse` of it gives the same hosts, backend, envs and problems). A
        variant with another backend (``probe --backend``) keeps the document it came from."""
        assert self._document is not None  # set by __post_init__
        return self._document.text


def _launch_json(hosts: Sequence[Host], backend: str, envs: Sequence[str]) -> str:
    """Typed values in mlx.launch's object form: ``backend`` and ``envs`` when set, per host
    ``ssh``, ``ips`` and its ``rdma`` row when it has one."""

    def cell(c: RdmaCell) -> Any:
        if isinstance(c, BadCell):
            return c.value
        return list(c) if isinstance(c, tuple) else c

    def entry(h: Host) -> Dict[str, Any]:
        e: Dict[str, Any] = {"ssh": h.ssh, "ips": list(h.ips)}
        if h.rdma_row:
            e["rdma"] = [cell(c) for c in h.rdma]
        return e

    doc: Dict[str, Any] = {}
    if backend:
        doc["backend"] = backend
    if envs:
        doc["envs"] = list(envs)
    doc["hosts"] = [entry(h) for h in hosts]
    return json.dumps(doc)


def _typed_document(hf: Hostfile) -> _Document:
    """The document of a hostfile built from values: how its values would be written, with the
    problems of how they are written (the same rules the loader applies to a file)."""
    out = _backend_problems(hf.backend) + _env_problems(list(hf.envs))
    if not hf.hosts:
        out.append(Problem("hosts", "is empty: list one entry per rank"))
    for h in hf.hosts:
        out.extend(_entry_problems(h.rank, h.ssh, list(h.ips), True))
    return _Document(
        _launch_json(hf.hosts, hf.backend, hf.envs), tuple(out), bool(hf.hosts), hf.hosts, hf.envs
    )


def _backend_problems(backend: Any) -> List[Problem]:
    if not isinstance(backend, str) or (backend and backend not in BACKENDS):
        return [
            Problem(
                "backend", f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}"
            )
        ]
    return []


def _env_problems(envs: Any) -> List[Problem]:
    if not isinstance(envs, list):
        return [Problem("envs", 'must be a list of "KEY=VALUE" strings')]
    return [
        Problem(f"envs[{i}]", f"{e!r} is not KEY=VALUE")
        for i, e in enumerate(envs)
        if not isinstance(e, str) or "=" not in e or not is_env_key(e.split("=")[0])
    ]


def _entry_problems(rank: int, ssh: Any, ips: Any, rdma_is_list: bool) -> List[Problem]:
    """How one entry is written: its ssh name, its IPs, whether its rdma row is a list."""
    where = f"hosts[{rank}]"
    out = []
    if ssh is not None and not isinstance(ssh, str):
        why: Optional[str] = f"must be a string (the host name to ssh into), not {_short(ssh)}"
    else:
        why = host_name_problem(ssh or "")
    if why:
        out.append(Problem(f"{where}.ssh", why))
    if not isinstance(ips, list):
        out.append(Problem(f"{where}.ips", "must be a list of IP addresses"))
    else:
        for j, ip in enumerate(ips):
            try:
                ipaddress.ip_address(ip)
            except (ValueError, TypeError):
                out.append(Problem(f"{where}.ips[{j}]", f"{ip!r} is not an IP address"))
    if not rdma_is_list:
        out.append(Problem(f"{where}.rdma", "must be a list with one entry per rank"))
    return out


def _written_problems(data: Any) -> Tuple[List[Problem], bool]:
    """How a parsed document is written: ``(problems, rules)``, ``rules`` False when its shape
    leaves nothing for the consistency rules to look at (not a list of objects, no hosts). An
    entry that is not an object is reported once, and no other rule looks at it."""
    out: List[Problem] = []
    if not isinstance(data, (list, dict)):
        return [Problem("$", 'must be a list of hosts or an object with "hosts"')], False
    if isinstance(data, dict):
        if "hosts" not in data:
            return [Problem("hosts", 'missing: the object form needs a "hosts" list')], False
        if not isinstance(data["hosts"], list):
            return [Problem("hosts", "must be a list")], False
        out += _backend_problems(data.get("backend", ""))
        out += _env_problems(data.get("envs", []))
    raw_hosts = data["hosts"] if isinstance(data, dict) else data
    if not raw_hosts:
        return out + [Problem("hosts", "is empty: list one entry per rank")], False
    objects = True
    for i, h in enumerate(raw_hosts):
        if not isinstance(h, dict):
            out.append(
                Problem(f"hosts[{i}]", f'{_short(h)} must be an object with "ssh", "ips", "rdma"')
            )
            objects = False
            continue
        rdma_is_list = "rdma" not in h or isinstance(h["rdma"], list)
        out += _entry_problems(i, h.get("ssh"), h.get("ips", []), rdma_is_list)
    return out, objects


def _typed(data: Any) -> Tuple[str, Tuple[str, ...], Tuple[Host, ...]]:
    """``(backend, envs, hosts)`` of a parsed document; what is not of its type is left out
    (``_written_problems`` names it)."""
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
    """The loader: hostfile ``text`` as a validated :class:`Hostfile` (``problems`` found here,
    once). ``path`` names the file in messages; ``names``: what means this machine (default
    :func:`local_names`). Raises :class:`HostfileError` when it is not JSON.

    Rules (mlx.launch's hostfile format, mlx 0.32.4): hosts present, each with a non-empty
    ``ssh``; ``ips`` valid addresses; ``envs`` are ``K=V``; no duplicate hosts; ring needs IPs
    on every host; jaccl rows have N entries, null on the diagonal, every off-diagonal cell
    filled (jaccl) or both ring neighbours (jaccl-ring); jaccl needs an IP on rank 0 for the
    coordinator; no IPv6 address where MLX reads "ip:port" (ring IPs, the JACCL coordinator:
    MLX splits it at the first colon); a jaccl mesh has at most 8 ranks; an entry that is this machine lists only
    addresses of this machine (:func:`locality_problems`). An entry that is not an object is
    reported once, and no other rule looks at it."""
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
    written, rules = _written_problems(data)
    return Hostfile(
        hosts,
        backend,
        envs,
        path,
        here=frozenset(names) if names is not None else None,
        _document=_Document(text, tuple(written), rules, hosts, envs),
    )


STDIN = "-"

# The most bytes the loader reads of a hostfile. An mlx.launch hostfile is a few KB (one small
# object per host; a JACCL mesh has at most 8); 4 MiB leaves room for any real one while a path
# with no end (/dev/zero, an endless pipe on standard input) stops here instead of filling memory.
MAX_BYTES = 4 * 1024 * 1024


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
    """A hostfile from ``--hosts a,b,c`` (as mlx.launch: an IP also serves as the ring address),
    validated like a file listing the same entries. Raises :class:`HostfileError` on an empty
    entry."""
    hosts = []
    for i, name in enumerate(hostlist.split(",")):
        name = name.strip()
        if not name:
            raise HostfileError(f"--hosts {hostlist!r}: entry {i} is empty")
        try:
            ipaddress.ip_address(name)
            ips: Tuple[str, ...] = (name,)
        except ValueError:
            ips = ()
        hosts.append(Host(i, name, ips))
    return Hostfile(tuple(hosts), here=frozenset(names) if names is not None else None)


def _rules(hf: Hostfile, names: Iterable[str]) -> List[Problem]:
    """The consistency rules over the entries (see :func:`parse`), for the effective backend."""
    out: List[Problem] = []
    backend = hf.effective_backend
    # an entry whose ssh or ips is written wrong is reported for that once, not again here
    written = {p.path for p in hf._document.problems} if hf._document is not None else set()
    _duplicates(hf, backend, out)
    out.extend(
        p for p in locality_problems(hf, names) if p.path.split(".")[0] + ".ssh" not in written
    )
    if backend == "ring" and hf.world_size > 1:
        for h in hf.hosts:
            if not h.ips and f"hosts[{h.rank}].ips" not in written:
                out.append(
                    Problem(
                        f"hosts[{h.rank}].ips",
                        "the ring backend needs at least one IP "
                        "per host (it connects to IPs, not host names)",
                    )
                )
    if backend in JACCL_BACKENDS:
        _jaccl_rules(hf, backend, out)
    _ipv6_rules(hf, backend, out)
    return out


def _is_ipv6(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).version == 6
    except ValueError:
        return False


# MLX reads a rank's address as "ip:port" and splits it at the FIRST colon (parse_address in
# mlx/distributed/utils.cpp for the ring, mlx/distributed/jaccl/lib/jaccl/tcp.cpp for the JACCL
# coordinator; mlx v0.30-v0.32.4), so no IPv6 form parses: "::1:50947" and "[::1]:50947" both end
# in "Can't parse address" (the ring: run with both forms on mlx 0.32.4; the JACCL coordinator:
# the same code, read in the sources of mlx v0.32.1 and main, mlx/distributed/jaccl/lib/jaccl/
# rdma.cpp TCPAllGather -> parse_address(MLX_JACCL_COORDINATOR)).
IPV6_WHY = (
    '(MLX splits "ip:port" at the first colon, parse_address in mlx/distributed/{src}, '
    'mlx 0.32.4: "{ip}:PORT" and "[{ip}]:PORT" both fail with "Can\'t parse address"); use an '
    "IPv4 address of the host"
)


def _ipv6_rules(hf: Hostfile, backend: str, out: List[Problem]) -> None:
    """IPv6 addresses where MLX reads them as "ip:port": every IP of a ring entry (more than one
    rank), rank 0's first IP for JACCL (mlx.launch makes it MLX_JACCL_COORDINATOR)."""
    if backend == "ring" and hf.world_size > 1:
        for h in hf.hosts:
            for j, ip in enumerate(h.ips):
                if _is_ipv6(ip):
                    out.append(
                        Problem(
                            f"hosts[{h.rank}].ips[{j}]",
                            f"{ip} is an IPv6 address: the ring backend connects to IPv4 "
                            "ip:port only " + IPV6_WHY.format(ip=ip, src="utils.cpp"),
                        )
                    )
    if backend in JACCL_BACKENDS and hf.hosts and hf.hosts[0].ips and _is_ipv6(hf.hosts[0].ips[0]):
        ip = hf.hosts[0].ips[0]
        out.append(
            Problem(
                "hosts[0].ips[0]",
                f"{ip} is an IPv6 address: it is JACCL's coordinator (MLX_JACCL_COORDINATOR), "
                "read as IPv4 ip:port only "
                + IPV6_WHY.format(ip=ip, src="jaccl/lib/jaccl/tcp.cpp"),
            )
        )


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _duplicates(hf: Hostfile, backend: str, out: List[Problem]) -> None:
    seen: dict = {}
    for h in hf.hosts:
        if h.ssh and h.ssh in seen and backend in JACCL_BACKENDS:
            out.append(
                Problem(
                    f"hosts[{h.rank}].ssh",
                    f"duplicate host {h.ssh!r} (also hosts"
                    f"[{seen[h.ssh]}]): JACCL runs one rank per Mac",
                )
            )
        seen.setdefault(h.ssh, h.rank)
    ipseen: dict = {}
    for h in hf.hosts:
        for j, ip in enumerate(h.ips):
            if ip in ipseen and ipseen[ip] != h.rank and backend in JACCL_BACKENDS:
                out.append(
                    Problem(
                        f"hosts[{h.rank}].ips[{j}]", f"duplicate IP {ip} (also hosts[{ipseen[ip]}])"
                    )
                )
            ipseen.setdefault(ip, h.rank)


def _jaccl_rules(hf: Hostfile, backend: str, out: List[Problem]) -> None:
    n = hf.world_size
    if backend == "jaccl" and n > JACCL_MESH_MAX:
        out.append(
            Problem(
                "hosts",
                f"{n} ranks: a JACCL mesh supports at most {JACCL_MESH_MAX}; use jaccl-ring",
            )
        )
    if not hf.hosts[0].ips:
        out.append(
            Problem(
                "hosts[0].ips",
                "JACCL needs an IP on rank 0: it is the coordinator (MLX_JACCL_COORDINATOR)",
            )
        )
    for h in hf.hosts:
        where = f"hosts[{h.rank}].rdma"
        if not h.rdma_row:
            out.append(
                Problem(
                    where,
                    f"missing: {backend} needs a row of {n} entries "
                    "(null for itself, a device name per peer)",
                )
            )
            continue
        if len(h.rdma) != n:
            out.append(Problem(where, f"has {len(h.rdma)} entries, needs {n} (one per rank)"))
        for j, cell in enumerate(h.rdma):
            cw = f"{where}[{j}]"
            if j == h.rank:
                if cell is not None:
                    out.append(Problem(cw, "must be null (a rank has no device to itself)"))
                continue
            needed = backend == "jaccl" or j in ((h.rank - 1) % n, (h.rank + 1) % n)
            if cell is None:
                if needed:
                    peer = hf.hosts[j].ssh if j < n else j
                    out.append(
                        Problem(
                            cw, f"no RDMA device towards rank {j} ({peer}); {backend} needs one"
                        )
                    )
            elif isinstance(cell, str):
                if not cell:
                    out.append(Problem(cw, "empty device name"))
            elif isinstance(cell, tuple) or (isinstance(cell, BadCell) and cell.is_list):
                if (
                    isinstance(cell, BadCell)
                    or not cell
                    or not all(isinstance(c, str) and c for c in cell)
                ):
                    out.append(Problem(cw, "a list cell must hold one or more device names"))
            else:
                value = cell.value if isinstance(cell, BadCell) else cell
                out.append(Problem(cw, f"{value!r} is not a device name, a list of names or null"))


def local_names() -> Set[str]:
    """Names and addresses that mean this machine: host name, short name, FQDN, local IPs."""
    names = {"localhost", "127.0.0.1", "::1"}
    try:
        hn = socket.gethostname()
        names |= {hn, hn.split(".")[0]}
        names.add(socket.getfqdn())
    except OSError:
        pass
    try:
        import psutil

        for addrs in psutil.net_if_addrs().values():
            for a in addrs:
                if a.family in (socket.AF_INET, socket.AF_INET6):
                    names.add(a.address.split("%")[0])
    except Exception:  # psutil may be unable to read interfaces in a sandbox
        pass
    names.discard("")
    return names


def _loopback(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:
        return False


def is_this_machine(host: Host, names: Optional[Iterable[str]] = None) -> bool:
    """True when ``host`` is this machine: no ssh name, an ssh name or IP that is one of
    :func:`local_names`, or a loopback address (127.0.0.0/8, ::1). The one rule for "which rank
    am I" (check) and "which ranks run without ssh" (probe)."""
    mine = set(names) if names is not None else local_names()
    return (
        not host.ssh
        or host.ssh in mine
        or _loopback(host.ssh)
        or any(ip in mine or _loopback(ip) for ip in host.ips)
    )


def local_ranks(hf: Hostfile, names: Optional[Iterable[str]] = None) -> List[int]:
    """Ranks that are this machine (:func:`is_this_machine`)."""
    mine = set(names) if names is not None else local_names()
    return [h.rank for h in hf.hosts if is_this_machine(h, mine)]


def locality_problems(hf: Hostfile, names: Optional[Iterable[str]] = None) -> List[Problem]:
    """Addresses of entries that are this machine (:func:`is_this_machine`) but are not
    assigned here, as ``(json_path, message)``.

    A rank that runs on this machine listens on its addresses (the ring backend on every IP of
    its entry, the JACCL coordinator on rank 0's first IP), so an entry whose ssh name is this
    machine but whose IP belongs elsewhere can never start here: ``check`` (MD401) fails on it
    and ``probe`` refuses the hostfile (exit 2), with the same message."""
    mine = set(names) if names is not None else local_names()
    out: List[Problem] = []
    for h in hf.hosts:
        if not is_this_machine(h, mine):
            continue
        for j, ip in enumerate(h.ips):
            if ip in mine or _loopback(ip):
                continue
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                continue  # reported as "not an IP address"
            by_name = not h.ssh or h.ssh in mine or _loopback(h.ssh)
            why = (
                f"its ssh name {h.ssh or 'localhost'!r} is this machine"
                if by_name
                else "another of its addresses is this machine's"
            )
            out.append(
                Problem(
                    f"hosts[{h.rank}].ips[{j}]",
                    f"{ip} is not an address of this machine, but rank {h.rank} runs here "
                    f"({why}): the rank "
                    "could not listen on it. Put this machine's own IP in the entry, or the "
                    "ssh name of the host that owns the address",
                )
            )
    return out
