"""The values a hostfile is made of, frozen: :class:`Host` (one entry), :class:`Problem`,
:class:`BadCell`, the :class:`Document` as read, and :func:`launch_json` (typed values in
mlx.launch's JSON form). The rules and the locality read these; the validated whole is
:class:`meshdoctor.hostfile.model.Hostfile`.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple, Union


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


def is_ip_address(value: Any) -> bool:
    """Whether ``value`` is an IPv4 or IPv6 address as :mod:`ipaddress` reads it
    (``999.1.1.1`` and host names are not)."""
    try:
        ipaddress.ip_address(value)
    except (ValueError, TypeError):
        return False
    return True


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

    def addresses(self) -> List[str]:
        """The entry's ``ips`` that are IP addresses (:func:`is_ip_address`), in order: the
        only ones anything may look up or connect to (MD401 names the others)."""
        return [ip for ip in self.ips if is_ip_address(ip)]

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
class Document:
    """The JSON document a :class:`Hostfile` stands for: its ``text``, the ``problems`` of how
    it is written (found by the loader, or from the typed values), whether the entries are sound
    enough for the rules (``rules``), and the ``hosts``/``envs`` it was read into."""

    text: str
    problems: Tuple[Problem, ...]
    rules: bool
    hosts: Tuple[Host, ...]
    envs: Tuple[str, ...]


def launch_json(hosts: Sequence[Host], backend: str, envs: Sequence[str]) -> str:
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
