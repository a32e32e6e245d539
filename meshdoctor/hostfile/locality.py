"""Which hostfile entries are this machine: the one rule, for every command.

``check`` runs the node checks of the ranks that are this machine, ``check --hostfile`` and
``fix`` serve this machine in-process instead of over ssh, and ``probe`` starts those ranks
without ssh; all of them ask :func:`is_this_machine` (one entry), :func:`local_ranks` (the
ranks) or :func:`machines` (every entry grouped by the machine it lands on).
:func:`locality_problems` is the rule MD401 and ``probe`` apply to those entries' addresses.

What means this machine (:func:`local_names`) is read once per process; a caller that needs
other names (tests) passes ``names``.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional

from meshdoctor.hostfile.types import Problem

if TYPE_CHECKING:
    from meshdoctor.hostfile.types import Host
    from meshdoctor.hostfile.model import Hostfile


@functools.lru_cache(maxsize=1)
def local_names() -> FrozenSet[str]:
    """Names and addresses that mean this machine: ``localhost``, ``127.0.0.1``, ``::1``, the
    host name, its short name, the FQDN (``socket.gethostname``/``getfqdn``) and the addresses
    of every interface (psutil ``net_if_addrs``, IPv6 zones dropped). Read once per process,
    the first time it is asked."""
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
    return frozenset(names)


def _mine(names: Optional[Iterable[str]]) -> FrozenSet[str]:
    return local_names() if names is None else frozenset(names)


def _loopback(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:
        return False


def is_this_machine(host: "Host", names: Optional[Iterable[str]] = None) -> bool:
    """True when ``host`` is this machine: no ssh name, an ssh name or IP that is one of
    ``names`` (default :func:`local_names`), or a loopback address (127.0.0.0/8, ::1). The one
    rule for "which rank am I" (check) and "which ranks run without ssh" (probe, fix)."""
    mine = _mine(names)
    return (
        not host.ssh
        or host.ssh in mine
        or _loopback(host.ssh)
        or any(ip in mine or _loopback(ip) for ip in host.ips)
    )


def local_ranks(hf: "Hostfile", names: Optional[Iterable[str]] = None) -> List[int]:
    """Ranks of ``hf`` that are this machine (:func:`is_this_machine`), in rank order."""
    mine = _mine(names)
    return [h.rank for h in hf.hosts if is_this_machine(h, mine)]


def machines(hf: "Hostfile", names: Optional[Iterable[str]] = None) -> Dict[str, List[int]]:
    """Which entries land on which machine: ``{host: [rank, ...]}``, hosts in the order of
    their first rank. Every entry that is this machine (:func:`is_this_machine`) is one host,
    named by the first such entry's ssh name; every other entry is the host of its ssh name."""
    here = local_ranks(hf, names)
    this = hf.hosts[here[0]].ssh if here else ""
    local = set(here)
    out: Dict[str, List[int]] = {}
    for h in hf.hosts:
        out.setdefault(this if h.rank in local else h.ssh, []).append(h.rank)
    return out


def locality_problems(hf: "Hostfile", names: Optional[Iterable[str]] = None) -> List[Problem]:
    """Addresses of entries that are this machine (:func:`is_this_machine`) but are not
    assigned here, as ``(json_path, message)``.

    A rank that runs on this machine listens on its addresses (the ring backend on every IP of
    its entry, the JACCL coordinator on rank 0's first IP), so an entry whose ssh name is this
    machine but whose IP belongs elsewhere can never start here: ``check`` (MD401) fails on it
    and ``probe`` refuses the hostfile (exit 2), with the same message."""
    mine = _mine(names)
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
