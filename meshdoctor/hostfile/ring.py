"""The ring the cables of a JACCL hostfile allow: jaccl-ring's ring is the order of the hosts
(rank i sends to rank i+1, the last to rank 0; MLX's jaccl-ring backend, and MLX PR #4284: "for
jaccl-ring the host order is the ring order"), so a hostfile whose order puts two Macs with no
cable between them side by side cannot form it, even when the devices it lists do form a ring
in another order (MLX #4283: hosts permuted, every rank alone). Pure: reads the hostfile only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Set

if TYPE_CHECKING:
    from meshdoctor.hostfile.model import Hostfile

MAX_STEPS = 100_000  # search steps for a ring (a ring's cable graph has degree 2: a few steps)


def cabled(hf: "Hostfile", i: int, j: int) -> bool:
    """Whether the hostfile lists an RDMA device between ranks ``i`` and ``j`` (either way)."""
    return bool(hf.hosts[i].devices_to(j) or hf.hosts[j].devices_to(i))


def missing_neighbours(hf: "Hostfile") -> List[int]:
    """The ranks ``i`` whose ring neighbour ``i+1`` (the last rank's: rank 0) has no RDMA device
    listed between them, in rank order."""
    n = hf.world_size
    if n < 2:
        return []
    return [i for i in range(n if n > 2 else 1) if not cabled(hf, i, (i + 1) % n)]


def cable_ring(hf: "Hostfile") -> Optional[List[int]]:
    """A host order (rank indices, starting at rank 0) in which every pair of neighbours, the
    last and the first included, has an RDMA device listed between them; None when the
    devices listed form no ring through every host (or the search gives up after
    :data:`MAX_STEPS`)."""
    n = hf.world_size
    if n < 2:
        return None
    nbrs = [[j for j in range(n) if j != i and cabled(hf, i, j)] for i in range(n)]
    path, used = [0], {0}
    steps = 0

    def walk() -> bool:
        nonlocal steps
        steps += 1
        if steps > MAX_STEPS:
            return False
        if len(path) == n:
            return n == 2 or path[0] in nbrs[path[-1]]
        for j in nbrs[path[-1]]:
            if j not in used:
                path.append(j)
                used.add(j)
                if walk():
                    return True
                path.pop()
                used.discard(j)
        return False

    return list(path) if walk() else None


def order_text(hf: "Hostfile", order: List[int]) -> str:
    """``m1, m2, m4, m3``: the hosts of ``order`` by their ssh names (else ``rank N``)."""
    return ", ".join(hf.hosts[i].ssh or f"rank {i}" for i in order)


def names(hf: "Hostfile", ranks: Set[int]) -> str:
    """``rank 0 (m1)``, ... for ``ranks`` in order."""
    return ", ".join(f"rank {r} ({hf.hosts[r].ssh or '?'})" for r in sorted(ranks))
