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

# Metal tuning variables every rank should share (MLX ``mlx/utils.h`` and
# ``mlx/backend/metal/resident.h``, 0.32.x; the refresh interval is new in 0.32.4): how large a
# command buffer grows (the GPU waits a collective inside one buffer, so larger buffers wait
# longer: GPU timeouts) and how wired memory is spread over residency sets. Values that differ
# across ranks make ranks behave differently under the same load.
METAL_TUNING = {
    "MLX_MAX_OPS_PER_BUFFER": "the most operations in one Metal command buffer (GPU timeouts)",
    "MLX_MAX_MB_PER_BUFFER": "the most megabytes one Metal command buffer holds (GPU timeouts)",
    "MLX_RESIDENCY_SET_MAX_PCT": "the size of each Metal residency set, in percent of the "
    "working set (how wired memory is spread)",
    "MLX_METAL_RESIDENCY_REFRESH_INTERVAL_MS": "how often Metal residency is refreshed, in ms "
    "(MLX 0.32.4; wired memory)",
}
