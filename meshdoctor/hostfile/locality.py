"""Where each hostfile entry's rank runs: the one rule, for every command.

Two questions, kept apart:

* **how mlx.launch reaches the rank** (:func:`launched_here`, :func:`ssh_names`): without ssh
  only when the entry's ssh name is exactly ``127.0.0.1``, else ``ssh NAME`` with the name as
  written (:mod:`meshdoctor.mlx.launch_rules`, MLX 0.32.4 ``mlx/_distributed_utils/launch.py``);
  ``localhost`` and this machine's own name are reached with ssh;
* **which machine the rank lands on** (:func:`is_this_machine`, :func:`local_ranks`,
  :func:`machines`): by its ssh name, else by an address this machine has; a loopback address
  names no machine (every host has one), so an entry ``{"ssh": "ghost1", "ips": ["127.0.0.1"]}``
  lands on ghost1.

``check`` runs the node checks of the ranks that land on this machine, ``check --hostfile`` and
``fix`` serve this machine in-process instead of over ssh; ``probe`` starts ranks the way
mlx.launch would (:func:`launched_here`), and ``triage`` and ``bundle`` read the hosts the same
way (:func:`reached`). Where the answers disagree, :func:`ssh_to_self`
names the entries that land here but are reached with ssh (the fleet check proves that ssh),
and :func:`locality_problems` the entries whose addresses cannot work (MD401 and ``probe``).

What means this machine (:func:`local_names`) is read once per process; a caller that needs
other names (tests) passes ``names``.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional

from meshdoctor.hostfile.types import Problem
from meshdoctor.mlx.launch_rules import runs_without_ssh

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
        from meshdoctor.proctable import psutil

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


def launched_here(host: "Host") -> bool:
    """True when mlx.launch starts ``host``'s rank without ssh: its ssh name is exactly
    ``127.0.0.1`` (:func:`meshdoctor.mlx.launch_rules.runs_without_ssh`), or it has none (a
    hostfile problem MD401 reports; ``--hosts``-less tests). Every other entry is reached with
    ``ssh NAME``, this machine's own names included."""
    return not host.ssh or runs_without_ssh(host.ssh)


def ssh_names(hf: "Hostfile") -> List[str]:
    """The ssh names mlx.launch reaches with ssh (every entry not :func:`launched_here`),
    each once, in rank order."""
    return list(dict.fromkeys(h.ssh for h in hf.hosts if not launched_here(h)))


def reached(hf: "Hostfile") -> Dict[str, bool]:
    """How a command that reads or collects on the hosts of ``hf`` (``triage --hostfile``,
    ``bundle --hostfile``) reaches them, the way mlx.launch reaches their ranks: ``{name:
    here}`` in the order of each name's first rank, ``here`` True for the one name read in this
    process (the first entry :func:`launched_here`, ``127.0.0.1``; every such entry is that
    name), False for each ssh name reached with ``ssh NAME`` (:func:`ssh_names`: ``localhost``
    and this machine's own names included, as the ranks there were)."""
    out: Dict[str, bool] = {}
    here_name: Optional[str] = None
    for h in hf.hosts:
        if launched_here(h):
            here_name = h.ssh if here_name is None else here_name
            out.setdefault(here_name, True)
        else:
            out.setdefault(h.ssh, False)
    return out


def is_this_machine(host: "Host", names: Optional[Iterable[str]] = None) -> bool:
    """True when ``host``'s rank lands on this machine: no ssh name, an ssh name that is one
    of ``names`` (default :func:`local_names`), ``localhost`` or a loopback address, or an IP of the entry
    that is one of this machine's non-loopback addresses (an ssh alias of this machine).
    A loopback IP alone names no machine: ``{"ssh": "ghost1", "ips": ["127.0.0.1"]}`` lands
    on ghost1. The one rule for "which rank am I" (check, fix); how the rank is reached is
    :func:`launched_here`."""
    mine = _mine(names)
    return (
        not host.ssh
        or host.ssh in mine
        or host.ssh == "localhost"
        or _loopback(host.ssh)
        or any(ip in mine and not _loopback(ip) for ip in host.ips)
    )


def ssh_to_self(hf: "Hostfile", names: Optional[Iterable[str]] = None) -> List[str]:
    """ssh names of entries that land on this machine (:func:`is_this_machine`) but that
    mlx.launch reaches with ssh (not :func:`launched_here`: ``localhost``, this machine's host
    name or address): each needs a working ``ssh NAME`` to this machine. Each once, in rank
    order."""
    mine = _mine(names)
    return list(
        dict.fromkeys(h.ssh for h in hf.hosts if not launched_here(h) and is_this_machine(h, mine))
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
    and ``probe`` refuses the hostfile (exit 2), with the same message.

    The other way round, an entry that lands on another machine (:func:`is_this_machine` is
    False: its ssh name is another host) but lists a loopback address is a problem when some
    entry lands on a different machine: the rank would listen on its own host's loopback,
    which peers on other hosts cannot reach."""
    mine = _mine(names)
    out: List[Problem] = []
    several = len(machines(hf, mine)) > 1
    for h in hf.hosts:
        if not is_this_machine(h, mine):
            if several:
                out.extend(_remote_loopback(h))
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


def _remote_loopback(h: "Host") -> List[Problem]:
    """The loopback addresses of ``h``, an entry that lands on another machine."""
    return [
        Problem(
            f"hosts[{h.rank}].ips[{j}]",
            f"{ip} is a loopback address, but rank {h.rank} runs on {h.ssh} (mlx.launch "
            f"reaches it with ssh {h.ssh}), beside ranks on other hosts: peers cannot reach a "
            f"rank on its own loopback. Put {h.ssh}'s own IP in the entry, or the ssh name "
            "127.0.0.1 if the rank is meant to run on this machine",
        )
        for j, ip in enumerate(h.ips)
        if _loopback(ip)
    ]
