"""The ports mlx.launch gives a launch, and the ring backend's port layout.

Source: MLX's launcher, ``mlx/_distributed_utils/launch.py`` (mlx 0.32.4): ``--starting-port``
(default :data:`STARTING_PORT`) is the JACCL coordinator's port on rank 0 (``launch_jaccl``:
``MLX_JACCL_COORDINATOR={ip}:{starting_port}``) and the ring's first port (``launch_ring``: one
port per IP of every rank, counting up by one in rank order, then IP order); ``--nccl-port``
(default :data:`NCCL_PORT`) is NCCL's bootstrap port on rank 0 (``launch_nccl``). meshdoctor
assumes ``--connections-per-ip`` 1, its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence

if TYPE_CHECKING:
    from meshdoctor.hostfile.types import Host

STARTING_PORT = 32323  # mlx.launch --starting-port default
NCCL_PORT = 12345  # mlx.launch --nccl-port default


def port_count(hosts: Sequence["Host"]) -> int:
    """How many ring ports ``hosts`` need: one per IP of every host."""
    return sum(len(h.ips) for h in hosts)


def ring_ports(
    hosts: Sequence["Host"], start: int = STARTING_PORT, ports: Optional[Sequence[int]] = None
) -> List[List[int]]:
    """The ring port of each IP, per rank (``[[p, ...] per rank]``, one port per IP), laid out
    as ``launch_ring`` does: in rank order, then IP order, consecutive from ``start``, or taken
    in that order from ``ports`` when given (ports chosen one by one). A rank that ``ports`` no
    longer covers in full gets the ones left, possibly none."""
    given = iter(range(start, start + port_count(hosts)) if ports is None else ports)
    out: List[List[int]] = []
    for h in hosts:
        out.append([p for _, p in zip(h.ips, given)])
    return out
