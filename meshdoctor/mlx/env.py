"""The environment mlx.launch gives each rank, one list for every check that reads it.

Source: MLX's launcher (``mlx/distributed_run.py``, mlx.launch, MLX 0.29.3-0.32.x) exports
``MLX_RANK``, ``MLX_HOSTFILE``, ``MLX_WORLD_SIZE`` and, for JACCL, ``MLX_IBV_DEVICES``,
``MLX_JACCL_COORDINATOR`` (and ``MLX_JACCL_RING=1`` for jaccl-ring) per rank; JACCL's own
``JACCL_*`` variables win over those (MLX's jaccl sources), so a stray one overrides the launch.
These differ from rank to rank by design: a fleet comparison ignores them, and one left in an
operator's shell leaks into every process started from it.
"""

from __future__ import annotations

PER_RANK_MLX = (
    "MLX_RANK",
    "MLX_HOSTFILE",
    "MLX_IBV_DEVICES",
    "MLX_JACCL_COORDINATOR",
    "MLX_JACCL_RING",
    "MLX_WORLD_SIZE",
)
JACCL_OVERRIDES = ("JACCL_IBV_DEVICES", "JACCL_COORDINATOR", "JACCL_RANK", "JACCL_RING")
PER_RANK = PER_RANK_MLX + JACCL_OVERRIDES
# present = on, whatever the value (MLX 0.29.3+): MLX_JACCL_RING=0 still selects the ring
RING_SWITCHES = ("MLX_JACCL_RING", "JACCL_RING")
