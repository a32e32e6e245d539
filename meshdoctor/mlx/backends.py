"""The backends mlx.launch starts, as one table: every list of backend names derives from it.

Source: MLX's launcher, ``mlx/_distributed_utils/launch.py`` (mlx 0.32.4): ``--backend`` (or the
hostfile's ``"backend"``) is one of ring, jaccl, jaccl-ring, mpi, nccl; ``launch_jaccl`` starts
both jaccl and jaccl-ring (jaccl-ring adds ``MLX_JACCL_RING=1``), so a rank initialises
``mx.distributed.init(backend="jaccl")`` for either. ``meshdoctor probe`` runs every backend but
mpi.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Sequence, Tuple


class Backend(NamedTuple):
    """One mlx.launch backend: ``name`` (``--backend``, the hostfile's ``"backend"``), ``core``
    (the name ``mx.distributed.init``/``is_available`` take for it), ``probe`` (whether
    ``meshdoctor probe`` runs it)."""

    name: str
    core: str
    probe: bool


#: The table, in mlx.launch's order of the hostfile rule's message.
TABLE: Tuple[Backend, ...] = (
    Backend("ring", "ring", True),
    Backend("jaccl", "jaccl", True),
    Backend("jaccl-ring", "jaccl", True),
    Backend("mpi", "mpi", False),
    Backend("nccl", "nccl", True),
)

#: Every name mlx.launch accepts for ``--backend``: ring, jaccl, jaccl-ring, mpi, nccl.
BACKENDS: Tuple[str, ...] = tuple(b.name for b in TABLE)
#: The backends that run JACCL (an ``rdma`` matrix, a coordinator on rank 0): jaccl, jaccl-ring.
JACCL_BACKENDS: Tuple[str, ...] = tuple(b.name for b in TABLE if b.core == "jaccl")
#: The backends the probe runs: ring, jaccl, jaccl-ring, nccl.
PROBE_BACKENDS: Tuple[str, ...] = tuple(b.name for b in TABLE if b.probe)
#: MLX's own backend names (``mx.distributed.is_available(backend=...)``): ring, jaccl, mpi, nccl.
CORE_BACKENDS: Tuple[str, ...] = tuple(dict.fromkeys(b.core for b in TABLE))

_CORE: Dict[str, str] = {b.name: b.core for b in TABLE}


def core_backend(name: str) -> str:
    """The MLX backend mlx.launch's ``name`` initialises (``jaccl-ring`` -> ``jaccl``); a name
    not in the table is returned as it is."""
    return _CORE.get(name, name)


def one_of(names: Sequence[str]) -> str:
    """Names for a message: ``"ring, jaccl, jaccl-ring or nccl"`` (one name: itself)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
