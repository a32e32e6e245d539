"""The hostfile's consistency rules: each inconsistency as a :class:`~.types.Problem`, found
once as a :class:`~.types.Hostfile` is built; MD401 reports them and ``probe`` refuses the file
over them (exit 2).

Rules (mlx.launch's hostfile format, mlx 0.32.4): hosts present, each with a non-empty ``ssh``
(:func:`host_name_problem`); ``ips`` valid addresses; ``envs`` are ``K=V``; a known backend
(:data:`meshdoctor.mlx.backends.BACKENDS`); no duplicate hosts; ring needs two or more ranks (:data:`ONE_RING_RANK`) and IPs on every host;
jaccl rows have N entries, null on the diagonal, every off-diagonal cell filled (jaccl) or both
ring neighbours (jaccl-ring); jaccl needs an IP on rank 0 for the coordinator; no IPv6 address
where MLX reads "ip:port"; a jaccl mesh has at most :data:`JACCL_MESH_MAX` ranks; an entry that is
this machine lists only addresses of this machine
(:func:`meshdoctor.hostfile.locality.locality_problems`). Also the one rule for the options that
name the hosts (:func:`host_sources_conflict`).
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Sequence, Tuple

from meshdoctor.hostfile.locality import locality_problems
from meshdoctor.hostfile.types import BadCell, Document, Problem, is_ip_address, launch_json
from meshdoctor.mlx.backends import BACKENDS, JACCL_BACKENDS

if TYPE_CHECKING:
    from meshdoctor.hostfile.model import Hostfile

JACCL_MESH_MAX = (
    8  # the JACCL mesh connects every pair of Macs directly: at most 8 ranks (mlx docs)
)
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # whole key: fullmatch (no trailing newline)


def is_env_key(key: str) -> bool:
    """A usable environment variable name (letters, digits, '_', not starting with a digit)."""
    return bool(_ENV_KEY.fullmatch(key))


# A host name meshdoctor will hand to ssh: letters, digits and . _ - (host names, RFC 1123), plus
# @ (user@host), : and % (IPv6 addresses and zones), not starting with '-' (ssh would read an
# option). Everything else (; $ ` ( ) | & < > quotes, spaces, control characters) is refused, so no
# host name can mean anything to a shell, whichever command reaches the host.
_SAFE_HOST = re.compile(r"[A-Za-z0-9_.@:%-]+")  # the whole name: fullmatch, never match + $


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
    if name.startswith("-") or not _SAFE_HOST.fullmatch(name):
        return (
            f"{name!r} cannot be an ssh destination: a host name holds only letters, digits "
            "and . _ - @ : % and does not start with '-'"
        )
    return None


def host_sources_conflict(given: Sequence[str]) -> Optional[str]:
    """The one rule for the options that name the hosts (``--hostfile``, ``--hosts``, and
    ``-n`` for the probe; ``given``: those passed): at most one. Returns the message for two or
    more, None otherwise; never one silently dropped."""
    if len(given) > 1:
        return f"{' and '.join(given)} both name the hosts; pass only one"
    return None


def typed_document(hf: "Hostfile") -> Document:
    """The document of a hostfile built from values: how its values would be written, with the
    problems of how they are written (the same rules the loader applies to a file)."""
    out = _backend_problems(hf.backend) + _env_problems(list(hf.envs))
    if not hf.hosts:
        out.append(Problem("hosts", "is empty: list one entry per rank"))
    for h in hf.hosts:
        out.extend(_entry_problems(h.rank, h.ssh, list(h.ips), True))
    return Document(
        launch_json(hf.hosts, hf.backend, hf.envs), tuple(out), bool(hf.hosts), hf.hosts, hf.envs
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
        why: Optional[str] = f"must be a string (the host name to ssh into), not {short(ssh)}"
    else:
        why = host_name_problem(ssh or "")
    if why:
        out.append(Problem(f"{where}.ssh", why))
    if not isinstance(ips, list):
        out.append(Problem(f"{where}.ips", "must be a list of IP addresses"))
    else:
        for j, ip in enumerate(ips):
            if not is_ip_address(ip):
                out.append(Problem(f"{where}.ips[{j}]", f"{ip!r} is not an IP address"))
    if not rdma_is_list:
        out.append(Problem(f"{where}.rdma", "must be a list with one entry per rank"))
    return out


def written_problems(data: Any) -> Tuple[List[Problem], bool]:
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
                Problem(f"hosts[{i}]", f'{short(h)} must be an object with "ssh", "ips", "rdma"')
            )
            objects = False
            continue
        rdma_is_list = "rdma" not in h or isinstance(h["rdma"], list)
        out += _entry_problems(i, h.get("ssh"), h.get("ips", []), rdma_is_list)
    return out, objects


def consistency_problems(
    hf: "Hostfile", names: Iterable[str], written: Sequence[Problem] = ()
) -> List[Problem]:
    """The consistency rules over the entries (see the module doc), for the effective backend.
    ``names``: what means this machine; ``written``: the problems of how the document is
    written (an entry whose ssh or ips is written wrong is reported for that once, not again)."""
    out: List[Problem] = []
    backend = hf.effective_backend
    paths = {p.path for p in written}
    _duplicates(hf, backend, out)
    out.extend(
        p for p in locality_problems(hf, names) if p.path.split(".")[0] + ".ssh" not in paths
    )
    if backend == "ring" and hf.world_size == 1:
        out.append(Problem("hosts", ONE_RING_RANK))
    if backend == "ring" and hf.world_size > 1:
        for h in hf.hosts:
            if not h.ips and f"hosts[{h.rank}].ips" not in paths:
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


# mlx.launch writes MLX_HOSTFILE for the ring backend only for two or more hosts
# (``json.dumps(ring_hosts) if len(ring_hosts) > 1 else ""`` in launch_ring, MLX 0.32.4
# ``mlx/_distributed_utils/launch.py``): a single rank gets an empty file, and
# ``mx.distributed.init()`` fails reading it ("[json.exception.parse_error.101] ... unexpected end
# of input", run on mlx 0.32.4), the failure triage names MD644.
ONE_RING_RANK = (
    "1 rank with the ring backend: mlx.launch gives a lone ring rank an empty MLX_HOSTFILE, "
    "which mx.distributed.init() fails to parse (MD644); list two or more ranks"
)


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


def _ipv6_rules(hf: "Hostfile", backend: str, out: List[Problem]) -> None:
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


def short(value: Any) -> str:
    """``value`` as JSON, cut to 40 characters for a message."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _duplicates(hf: "Hostfile", backend: str, out: List[Problem]) -> None:
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


def _ring_order(hf: "Hostfile") -> Optional[Problem]:
    """jaccl-ring's ring is the order of the hosts: when ring neighbours have no RDMA device
    listed between them but the devices listed form a ring in another order, one problem that
    says so and gives that order (:mod:`meshdoctor.hostfile.ring`); None otherwise (then each
    missing cell is named, as for any row)."""
    from meshdoctor.hostfile import ring

    gaps = ring.missing_neighbours(hf)
    order = ring.cable_ring(hf) if gaps else None
    if not gaps or order is None or not all(h.rdma_row for h in hf.hosts):
        return None
    n = hf.world_size
    pairs = "; ".join(f"{ring.names(hf, {i})} and {ring.names(hf, {(i + 1) % n})}" for i in gaps)
    return Problem(
        "hosts",
        "jaccl-ring's ring is the order of the hosts (rank i sends to rank i+1, the last to "
        f"rank 0), but these ring neighbours have no RDMA device listed between them: {pairs}. "
        f"The devices listed form a ring in the order {ring.order_text(hf, order)}: list the "
        "hosts in that order (each rdma row and its columns moved with its host), or regenerate "
        "the hostfile with `mlx.distributed_config --backend jaccl-ring` (MLX PR #4284)",
    )


def _jaccl_rules(hf: "Hostfile", backend: str, out: List[Problem]) -> None:
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
    reordered = _ring_order(hf) if backend == "jaccl-ring" else None
    if reordered is not None:
        out.append(reordered)
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
                if needed and reordered is None:
                    peer = hf.hosts[j].ssh if j < n else j
                    why = (
                        f", its ring neighbour: {backend}'s ring is the order of the hosts, and "
                        "the devices listed form no ring through every host in any order (a "
                        "cable missing, or a device not listed)"
                        if backend == "jaccl-ring"
                        else f"; {backend} needs one"
                    )
                    out.append(Problem(cw, f"no RDMA device towards rank {j} ({peer}){why}"))
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
                    twice = sorted({d for d in cell if cell.count(d) > 1})
                    if twice:
                        out.append(
                            Problem(
                                cw,
                                f"names {', '.join(twice)} twice: each entry is one cable (from "
                                "MLX 0.32.4 the mesh opens one wire per entry, MLX PR #4607)",
                            )
                        )
            else:
                value = cell.value if isinstance(cell, BadCell) else cell
                out.append(Problem(cw, f"{value!r} is not a device name, a list of names or null"))
