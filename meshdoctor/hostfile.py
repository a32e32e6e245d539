"""The mlx.launch hostfile: loading, consistency rules, and which rank this machine is.

Format (mlx ``python/mlx/_distributed_utils/common.py`` ``Hostfile.from_file``, mlx 0.32.4):
either a JSON list of hosts, or ``{"backend": ..., "envs": ["K=V", ...], "hosts": [...]}``; a host
is ``{"ssh": name, "ips": [ip, ...], "rdma": [null | "dev" | ["dev", ...], ...]}``; rank = position.

* :func:`load` raises :class:`HostfileError` (a usage error, exit 2) when the file cannot be read or
  is not JSON, naming the file and the line/column.
* :func:`problems` lists inconsistencies of a file that parses, each as a JSON path into the file
  (``hosts[2].rdma[2]``) and a message; MD401 reports them.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

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


ssh_name_problem = host_name_problem  # the name older callers use


def n_ranks(n: int) -> str:
    """``"1 rank"``, ``"3 ranks"``."""
    return f"{n} rank" + ("" if n == 1 else "s")


def ranks_phrase(ranks: Sequence[int]) -> str:
    """``"rank 0"``, ``"ranks 0 and 1"``, ``"ranks 0, 1 and 2"``; ``"no rank"`` when empty."""
    r = [str(x) for x in ranks]
    if not r:
        return "no rank"
    if len(r) == 1:
        return f"rank {r[0]}"
    return f"ranks {', '.join(r[:-1])} and {r[-1]}"


class HostfileError(ValueError):
    """The hostfile cannot be read or parsed; the message names the file and the position."""


@dataclass
class Host:
    """One rank's entry: ``rank`` (position), ``ssh`` name, ``ips`` and the ``rdma`` row."""

    rank: int
    ssh: str
    ips: List[str] = field(default_factory=list)
    rdma: List[Any] = field(default_factory=list)

    def devices_to(self, peer: int) -> List[str]:
        """RDMA device names this host uses towards rank ``peer`` (empty if none listed)."""
        if peer >= len(self.rdma):
            return []
        cell = self.rdma[peer]
        if isinstance(cell, str):
            return [cell]
        if isinstance(cell, list):
            return [c for c in cell if isinstance(c, str)]
        return []

    def devices(self) -> List[str]:
        """Every RDMA device this host's row names, in order, without repeats."""
        seen: List[str] = []
        for peer in range(len(self.rdma)):
            for d in self.devices_to(peer):
                if d not in seen:
                    seen.append(d)
        return seen


@dataclass
class Hostfile:
    """A loaded hostfile. ``backend`` is as written ('' when absent); ``raw`` is the parsed JSON."""

    hosts: List[Host]
    backend: str = ""
    envs: List[str] = field(default_factory=list)
    path: Optional[str] = None
    raw: Any = None

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

    def to_dict(self) -> dict:
        return {
            "backend": self.backend,
            "envs": self.envs,
            "hosts": [{"ssh": h.ssh, "ips": h.ips, "rdma": h.rdma} for h in self.hosts],
        }


def _hosts_of(data: Any) -> Tuple[str, List[str], List[Any]]:
    if isinstance(data, dict):
        backend = data.get("backend", "")
        envs = data.get("envs", [])
        hosts = data.get("hosts", [])
    elif isinstance(data, list):
        backend, envs, hosts = "", [], data
    else:
        backend, envs, hosts = "", [], []
    return (
        backend if isinstance(backend, str) else "",
        envs if isinstance(envs, list) else [],
        hosts if isinstance(hosts, list) else [],
    )


def parse(text: str, path: str = "<hostfile>") -> Hostfile:
    """Parse hostfile text; raises :class:`HostfileError` if it is not JSON."""
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
    backend, envs, raw_hosts = _hosts_of(data)
    hosts = []
    for i, h in enumerate(raw_hosts):
        if not isinstance(h, dict):
            h = {}
        ssh = h.get("ssh") if isinstance(h.get("ssh"), str) else ""
        ips = (
            [ip for ip in h.get("ips", []) if isinstance(ip, str)]
            if isinstance(h.get("ips"), list)
            else []
        )
        rdma = h.get("rdma") if isinstance(h.get("rdma"), list) else []
        hosts.append(Host(i, ssh, ips, rdma))
    return Hostfile(hosts, backend, [e for e in envs if isinstance(e, str)], path, data)


STDIN = "-"


def load(path: Union[str, Path]) -> Hostfile:
    """Read and parse the hostfile at ``path`` (``-``: standard input, named ``<stdin>`` in
    messages); raises :class:`HostfileError`."""
    if str(path) == STDIN:
        import sys

        try:
            data = sys.stdin.buffer.read()
        except (OSError, ValueError, AttributeError) as exc:
            raise HostfileError(f"<stdin>: cannot read the hostfile: {exc}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HostfileError(
                f"<stdin>: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                f"at offset {exc.start}); send the hostfile as UTF-8 JSON"
            ) from None
        return parse(text, "<stdin>")
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a BOM is tolerated
    except UnicodeDecodeError as exc:
        raise HostfileError(
            f"{p}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start}); save the hostfile as UTF-8 JSON"
        ) from None
    except FileNotFoundError:
        raise HostfileError(
            f"{p}: no such file. Pass the mlx.launch hostfile (JSON) with --hostfile."
        ) from None
    except OSError as exc:
        raise HostfileError(f"{p}: cannot read: {exc}") from None
    return parse(text, str(p))


def from_list(hostlist: str) -> Hostfile:
    """A hostfile from ``--hosts a,b,c`` (as mlx.launch: an IP also serves as the ring address)."""
    hosts = []
    for i, name in enumerate(hostlist.split(",")):
        name = name.strip()
        if not name:
            raise HostfileError(f"--hosts {hostlist!r}: entry {i} is empty")
        try:
            ipaddress.ip_address(name)
            ips = [name]
        except ValueError:
            ips = []
        hosts.append(Host(i, name, ips, []))
    hf = Hostfile(hosts, "", [], None, None)
    hf.raw = {"hosts": [{"ssh": h.ssh, "ips": h.ips} for h in hosts]}
    return hf


def problems(hf: Hostfile, names: Optional[Iterable[str]] = None) -> List[Tuple[str, str]]:
    """Every inconsistency of ``hf`` as ``(json_path, message)``; empty when consistent.

    The one hostfile validation of ``check`` (MD401) and ``probe`` (a usage error there).
    ``names``: what means this machine (default :func:`local_names`), for the locality rule.

    Rules (mlx.launch's hostfile format, mlx 0.32.4): hosts present, each with a non-empty ``ssh``; ``ips`` valid addresses;
    ``envs`` are ``K=V``; no duplicate hosts; ring needs IPs on every host; jaccl rows have N
    entries, null on the diagonal, every off-diagonal cell filled (jaccl) or both ring neighbours
    (jaccl-ring); jaccl needs an IP on rank 0 for the coordinator; a jaccl mesh has at most 8 ranks; an entry
    that is this machine lists only addresses of this machine (:func:`locality_problems`). An
    entry that is not an object is reported once, and no other rule looks at it.
    """
    out: List[Tuple[str, str]] = []
    data = hf.raw
    if not isinstance(data, (list, dict)):
        return [("$", 'must be a list of hosts or an object with "hosts"')]
    if isinstance(data, dict):
        if "hosts" not in data:
            return [("hosts", 'missing: the object form needs a "hosts" list')]
        if not isinstance(data["hosts"], list):
            return [("hosts", "must be a list")]
        b = data.get("backend", "")
        if not isinstance(b, str) or (b and b not in BACKENDS):
            out.append(("backend", f"unknown backend {b!r}; expected one of {', '.join(BACKENDS)}"))
        envs = data.get("envs", [])
        if not isinstance(envs, list):
            out.append(("envs", 'must be a list of "KEY=VALUE" strings'))
        else:
            for i, e in enumerate(envs):
                if not isinstance(e, str) or "=" not in e or not is_env_key(e.split("=")[0]):
                    out.append((f"envs[{i}]", f"{e!r} is not KEY=VALUE"))
    raw_hosts = data["hosts"] if isinstance(data, dict) else data
    n = len(raw_hosts)
    if n == 0:
        return out + [("hosts", "is empty: list one entry per rank")]
    not_objects = set()
    for i, h in enumerate(raw_hosts):
        where = f"hosts[{i}]"
        if not isinstance(h, dict):
            out.append((where, f'{_short(h)} must be an object with "ssh", "ips", "rdma"'))
            not_objects.add(i)
            continue
        why = host_name_problem(h.get("ssh") if isinstance(h.get("ssh"), str) else "")
        if why:
            out.append((f"{where}.ssh", why))
        ips = h.get("ips", [])
        if not isinstance(ips, list):
            out.append((f"{where}.ips", "must be a list of IP addresses"))
        else:
            for j, ip in enumerate(ips):
                try:
                    ipaddress.ip_address(ip)
                except (ValueError, TypeError):
                    out.append((f"{where}.ips[{j}]", f"{ip!r} is not an IP address"))
        if "rdma" in h and not isinstance(h["rdma"], list):
            out.append((f"{where}.rdma", "must be a list with one entry per rank"))
    if not_objects:  # the entry itself is wrong: no rule about its fields would add anything
        return out
    backend = hf.effective_backend
    _duplicates(hf, backend, out)
    out.extend(locality_problems(hf, names))
    if backend == "ring" and n > 1:
        for h in hf.hosts:
            if not h.ips:
                out.append(
                    (
                        f"hosts[{h.rank}].ips",
                        "the ring backend needs at least one IP "
                        "per host (it connects to IPs, not host names)",
                    )
                )
    if backend in JACCL_BACKENDS:
        _jaccl_rules(hf, backend, raw_hosts, out)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _duplicates(hf: Hostfile, backend: str, out: List[Tuple[str, str]]) -> None:
    seen: dict = {}
    for h in hf.hosts:
        if h.ssh and h.ssh in seen and backend in JACCL_BACKENDS:
            out.append(
                (
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
                    (f"hosts[{h.rank}].ips[{j}]", f"duplicate IP {ip} (also hosts[{ipseen[ip]}])")
                )
            ipseen.setdefault(ip, h.rank)


def _jaccl_rules(
    hf: Hostfile, backend: str, raw_hosts: Sequence[Any], out: List[Tuple[str, str]]
) -> None:
    n = hf.world_size
    if backend == "jaccl" and n > JACCL_MESH_MAX:
        out.append(
            ("hosts", f"{n} ranks: a JACCL mesh supports at most {JACCL_MESH_MAX}; use jaccl-ring")
        )
    if not hf.hosts[0].ips:
        out.append(
            (
                "hosts[0].ips",
                "JACCL needs an IP on rank 0: it is the coordinator (MLX_JACCL_COORDINATOR)",
            )
        )
    for h in hf.hosts:
        where = f"hosts[{h.rank}].rdma"
        raw = raw_hosts[h.rank] if isinstance(raw_hosts[h.rank], dict) else {}
        if not isinstance(raw.get("rdma"), list):
            out.append(
                (
                    where,
                    f"missing: {backend} needs a row of {n} entries "
                    "(null for itself, a device name per peer)",
                )
            )
            continue
        if len(h.rdma) != n:
            out.append((where, f"has {len(h.rdma)} entries, needs {n} (one per rank)"))
        for j, cell in enumerate(h.rdma):
            cw = f"{where}[{j}]"
            if j == h.rank:
                if cell is not None:
                    out.append((cw, "must be null (a rank has no device to itself)"))
                continue
            needed = backend == "jaccl" or j in ((h.rank - 1) % n, (h.rank + 1) % n)
            if cell is None:
                if needed:
                    peer = hf.hosts[j].ssh if j < n else j
                    out.append(
                        (cw, f"no RDMA device towards rank {j} ({peer}); {backend} needs one")
                    )
            elif isinstance(cell, str):
                if not cell:
                    out.append((cw, "empty device name"))
            elif isinstance(cell, list):
                if not cell or not all(isinstance(c, str) and c for c in cell):
                    out.append((cw, "a list cell must hold one or more device names"))
            else:
                out.append((cw, f"{cell!r} is not a device name, a list of names or null"))


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


def locality_problems(hf: Hostfile, names: Optional[Iterable[str]] = None) -> List[Tuple[str, str]]:
    """Addresses of entries that are this machine (:func:`is_this_machine`) but are not
    assigned here, as ``(json_path, message)``.

    A rank that runs on this machine listens on its addresses (the ring backend on every IP of
    its entry, the JACCL coordinator on rank 0's first IP), so an entry whose ssh name is this
    machine but whose IP belongs elsewhere can never start here: ``check`` (MD401) fails on it
    and ``probe`` refuses the hostfile (exit 2), with the same message."""
    mine = set(names) if names is not None else local_names()
    out: List[Tuple[str, str]] = []
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
                (
                    f"hosts[{h.rank}].ips[{j}]",
                    f"{ip} is not an address of this machine, but rank {h.rank} runs here "
                    f"({why}): the rank "
                    "could not listen on it. Put this machine's own IP in the entry, or the "
                    "ssh name of the host that owns the address",
                )
            )
    return out
