"""The hostfile as frozen typed data: :class:`Hostfile` (tuples of frozen :class:`Host` entries),
:class:`Problem`, :class:`BadCell`, and the JSON text another meshdoctor reads.

A :class:`Hostfile` finds its ``problems`` once, as it is built: the rules of
:mod:`meshdoctor.hostfile.rules`, with :mod:`meshdoctor.hostfile.locality` saying which entries
are this machine. Build one with :func:`meshdoctor.hostfile.load.load`,
:func:`~meshdoctor.hostfile.load.parse`, :func:`~meshdoctor.hostfile.load.from_list`, or from
typed values; :meth:`Hostfile.to_launch_json` is the JSON text another meshdoctor reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple, Union


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
class Document:
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
    once when the hostfile is built (the rules: :func:`meshdoctor.hostfile.load.parse`); MD401
    reports them and ``probe`` refuses the file over them. Frozen: a variant
    (``dataclasses.replace(hf, backend=...)``) is a new hostfile, checked anew. Build one with
    :mod:`meshdoctor.hostfile.load` (``load``, ``parse``, ``from_list``), or from typed values:
    ``Hostfile((Host(0, "m1", ("10.0.0.1",)), ...), backend="ring")``. ``here`` (default
    :func:`meshdoctor.hostfile.locality.local_names`): the names and addresses that mean this
    machine, for the locality rule."""

    hosts: Tuple[Host, ...]
    backend: str = ""
    envs: Tuple[str, ...] = ()
    path: Optional[str] = None
    problems: Tuple[Problem, ...] = field(init=False, default=())
    here: Optional[FrozenSet[str]] = field(default=None, repr=False, compare=False)
    _document: Optional[Document] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the rules and the locality read these types: imported here, once the types exist
        from meshdoctor.hostfile import locality, rules

        hosts = tuple(self.hosts)
        if any(h.rank != i for i, h in enumerate(hosts)):
            raise ValueError("each Host's rank must be its position in hosts")
        object.__setattr__(self, "hosts", hosts)
        object.__setattr__(self, "envs", tuple(self.envs))
        if self.here is None:
            object.__setattr__(self, "here", locality.local_names())
        doc = self._document
        if doc is None or doc.hosts != hosts or doc.envs != self.envs:
            doc = rules.typed_document(self)  # built from values, or a variant with other entries
            object.__setattr__(self, "_document", doc)
        assert self.here is not None
        found = rules.consistency_problems(self, self.here, doc.problems) if doc.rules else []
        object.__setattr__(self, "problems", doc.problems + tuple(found))

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
        those values (``parse`` of it gives the same hosts, backend, envs and problems). A
        variant with another backend (``probe --backend``) keeps the document it came from."""
        assert self._document is not None  # set by __post_init__
        return self._document.text


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
