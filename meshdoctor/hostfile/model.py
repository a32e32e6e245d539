"""The hostfile as frozen typed data: :class:`Hostfile` (tuples of frozen
:class:`~meshdoctor.hostfile.types.Host` entries) finds its ``problems`` once, as it is built:
the rules of :mod:`meshdoctor.hostfile.rules`, with :mod:`meshdoctor.hostfile.locality` saying
which entries are this machine. Build one with :func:`meshdoctor.hostfile.load.load`,
:func:`~meshdoctor.hostfile.load.parse`, :func:`~meshdoctor.hostfile.load.from_list`, or from
typed values; :meth:`Hostfile.to_launch_json` is the JSON text another meshdoctor reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Optional, Tuple, Union

from meshdoctor.hostfile import locality, rules
from meshdoctor.hostfile.types import Document, Host, Problem


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

    def launched_backend(
        self, option: Optional[str] = None, cuda: Union[bool, Callable[[], bool]] = False
    ) -> str:
        """The backend mlx.launch starts this hostfile with (MLX 0.32.4
        ``mlx/_distributed_utils/launch.py``): its ``--backend`` (``option``), else the
        hostfile's ``"backend"``, else ``nccl`` when the ranks' MLX is the CUDA build
        (``mx.cuda.is_available()``; ``cuda``, or a function asked only then), else ``ring``. A hostfile that names no backend
        but lists ``rdma`` rows is taken as ``jaccl`` (:attr:`effective_backend`): that is what
        it was written for."""
        if option:
            return option
        if self.backend:
            return self.backend
        if self.effective_backend != "ring":
            return self.effective_backend
        return "nccl" if (cuda() if callable(cuda) else cuda) else "ring"

    def to_launch_json(self) -> str:
        """The hostfile as JSON text in mlx.launch's format, for another meshdoctor to read
        (``check --hostfile`` sends it to every host on stdin): the document as read, so every
        host validates what the user wrote, or for a hostfile built from values (``--hosts``),
        those values (``parse`` of it gives the same hosts, backend, envs and problems). A
        variant with another backend (``probe --backend``, ``launch --backend``) is the
        document it came from with that ``"backend"``: every host checks the backend that will
        run."""
        assert self._document is not None  # set by __post_init__
        text = self._document.text
        try:
            data = json.loads(text)
        except ValueError:
            return text
        written = data.get("backend", "") if isinstance(data, dict) else ""
        if written == self.backend or not isinstance(data, (dict, list)):
            return text
        doc = dict(data) if isinstance(data, dict) else {"hosts": data}
        doc["backend"] = self.backend
        return json.dumps(doc)
