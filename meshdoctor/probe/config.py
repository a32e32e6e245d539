"""What a probe run is: its configuration, deadlines, bus factors and step counts (pure data).

Deadlines (all seconds; the probe's contract):

* per step: ``--timeout``, else :data:`DEADLINE_SLACK_S` + the bytes one rank moves (busbw bytes)
  divided by :data:`BUS_FLOOR_BPS` (20 MB/s, conservative: the loopback ring on a 2-core box
  measured ~300 MB/s busbw with mlx 0.32.4) + :data:`RING_STEP_S` for each of the 2(n-1)
  steps of a ring all-reduce (nccl-tests doc/PERFORMANCE.md), times the oversubscription of
  this host (local ranks per CPU, when above 1: each rank waits for a core); once the warm-up
  ran, at least :data:`WARMUP_DEADLINE_FACTOR` x its slowest call (the launcher measures it;
  an explicit ``--timeout`` is kept as given). A step "hangs" when no rank made progress for
  that long, or one rank sat inside a step that long;
* group formation: ``max(INIT_DEADLINE_S, per-step deadline)`` (the ring backend retries a
  connect for ~32 s before failing, mlx 0.32.4);
* the whole run: formation + every planned step's deadline, a backstop.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.fanout import remote_python
from meshdoctor.hostfile.types import Host
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.locality import launched_here
from meshdoctor.mlx.launch_rules import LOCAL_SSH_NAME
from meshdoctor.probe.figures import bus_factor
from meshdoctor.probe.sizes import mesh_wire_floor
from meshdoctor.probe.worker import BENCH_OPS, OP_SUPPORT, batch_plan

BUS_FLOOR_BPS = 20e6
DEADLINE_SLACK_S = 10.0
RING_STEP_S = 0.05  # per step of a ring all-reduce (2(n-1) of them): 6.3 s at 64 ranks
WARMUP_DEADLINE_FACTOR = 5.0  # the step deadline is at least this x the slowest warm-up call
INIT_DEADLINE_S = 45.0
HB_INTERVAL_S = 0.25
HB_STALE_S = 2.0


@dataclass
class ProbeConfig:
    """What to probe. ``hostfile``: the mesh (see :func:`local_hostfile` for ``-n``);
    ``backend``: ring, jaccl, jaccl-ring or nccl; ``ops``: subset of all_sum, all_gather, send_recv,
    all_max, all_min, sum_scatter (and bare_all_sum for the benchmark); ``size``: bytes per message (all_gather: the gathered
    output, as nccl-tests); ``iters``/``warmup``: timed/untimed iterations per op; ``dtype``;
    ``timeout``: per-step deadline in seconds (None: from the size; for a jaccl mesh whose cells
    list several cables, ``size`` is raised to :func:`meshdoctor.probe.sizes.mesh_wire_floor`
    so every wire carries traffic, MLX PR #4607); ``soak``: repetitions per op
    with relaunch after a hang (0: off); ``pairs``: the N x N send/recv matrix; ``port``: first
    ring port / jaccl coordinator port (None: free ports /
    :data:`meshdoctor.mlx.ports.STARTING_PORT`); ``python``: interpreter for
    local ranks (``MESHDOCTOR_PYTHON``, else this one); ``remote_python``: for ssh ranks
    (:func:`meshdoctor.fanout.remote_python`: ``MESHDOCTOR_REMOTE_PYTHON``, else this
    interpreter's path, as mlx.launch's ``--python``); ``cpus``: the CPUs this process may run
    on (:func:`host_cpus`), against which the local ranks are counted
    (:func:`oversubscription`). The judgement of the figures (MD513): ``min_busbw_gbs``
    (``--min-busbw``, GB/s: below it fails), ``link`` (``--link``, a class of
    :data:`meshdoctor.probe.expected.LINK_CLASSES`: below its fraction warns), ``baseline``
    (``--baseline``: a :mod:`meshdoctor.probe.baseline` document to compare with)."""

    hostfile: Hostfile
    backend: str = "ring"
    ops: List[str] = field(default_factory=lambda: ["all_sum", "all_gather", "send_recv"])
    size: int = 256 << 20
    iters: int = 5
    warmup: int = 1
    dtype: str = "float32"
    timeout: Optional[float] = None
    soak: int = 0
    pairs: bool = False
    port: Optional[int] = None
    python: str = field(
        default_factory=lambda: os.environ.get("MESHDOCTOR_PYTHON") or sys.executable
    )
    remote_python: str = field(default_factory=remote_python)
    hb_interval: float = HB_INTERVAL_S
    hb_stale: float = HB_STALE_S
    cpus: int = field(default_factory=lambda: host_cpus())
    min_busbw_gbs: Optional[float] = None
    link: Optional[str] = None
    baseline: Optional[Dict[str, Any]] = None

    def __post_init__(self) -> None:
        # a JACCL mesh with several cables per peer: every op's message must reach every wire
        if self.backend == "jaccl":
            hosts = self.hostfile.hosts
            wires = max((len(h.devices_to(p)) for h in hosts for p in range(len(hosts))), default=0)
            self.size = max(self.size, mesh_wire_floor(self.ops, len(hosts), wires))

    @property
    def world_size(self) -> int:
        """Number of ranks (the hostfile's entries)."""
        return self.hostfile.world_size


def host_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one, else the CPU
    count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS has no affinity mask
        return max(1, os.cpu_count() or 1)


def oversubscription(cfg: ProbeConfig) -> Optional[Dict[str, Any]]:
    """``{"ranks", "cpus", "factor"}`` when more ranks run on this host (the entries launched
    here, :func:`meshdoctor.hostfile.locality.launched_here`) than it has CPUs, else None.
    Remote hosts are not counted: their CPUs are not known here."""
    local = sum(1 for h in cfg.hostfile.hosts if launched_here(h))
    cpus = max(1, int(cfg.cpus))
    if local <= cpus:
        return None
    return {"ranks": local, "cpus": cpus, "factor": round(local / cpus, 3)}


def collective_deadline(cfg: ProbeConfig) -> float:
    """Per-step deadline in seconds before anything was measured (see module doc)."""
    if cfg.timeout:
        return float(cfg.timeout)
    n = max(2, cfg.world_size)
    ops = list(cfg.ops) + (["send_recv"] if cfg.pairs else [])
    busbytes = max(cfg.size * bus_factor(op, n) for op in ops) if ops else cfg.size
    base = DEADLINE_SLACK_S + busbytes / BUS_FLOOR_BPS + RING_STEP_S * 2 * (n - 1)
    over = oversubscription(cfg)
    return base * (over["factor"] if over else 1.0)


def measured_deadline(cfg: ProbeConfig, warmup_max_s: float) -> float:
    """The per-step deadline in seconds once the warm-up's slowest call took ``warmup_max_s``:
    :func:`collective_deadline`, grown to :data:`WARMUP_DEADLINE_FACTOR` x that call; an
    explicit ``--timeout`` stays as given."""
    base = collective_deadline(cfg)
    if cfg.timeout:
        return base
    return max(base, WARMUP_DEADLINE_FACTOR * float(warmup_max_s or 0.0))


def init_deadline(cfg: ProbeConfig) -> float:
    """Deadline in seconds for start-up plus group formation."""
    return max(INIT_DEADLINE_S, collective_deadline(cfg))


def local_hostfile(n: int, backend: str = "ring") -> Hostfile:
    """The embedded default: ``n`` ranks on this machine over loopback (ring; nccl on a host
    whose MLX is the CUDA build, one GPU per rank), each with the ssh name ``127.0.0.1``, the
    one name mlx.launch runs without ssh (MLX 0.32.4 launch.py: ``--hosts`` defaults to
    ``127.0.0.1``; :mod:`meshdoctor.mlx.launch_rules`)."""
    return Hostfile(tuple(Host(i, LOCAL_SSH_NAME, ("127.0.0.1",)) for i in range(n)), backend)


def plan_pairs(n: int, backend: str) -> Tuple[List[List[int]], List[List[int]]]:
    """``(measured, unsupported)`` ordered pairs [src, dst] for ``--pairs``. The ring backend
    and jaccl-ring only send between ring neighbours (mlx 0.32.4: "[ring] Send only supported
    to direct neighbors"); the jaccl mesh connects every pair; nccl has no send/recv (mlx
    0.32.x), so every pair is unsupported there."""
    measured, unsupported = [], []
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            neighbours = (d - s) % n in (1, n - 1)
            ok = backend != "nccl" and (backend == "jaccl" or neighbours)
            (measured if ok else unsupported).append([s, d])
    return measured, unsupported


def steps_per_rank(cfg: ProbeConfig) -> int:
    """How many steps (init + collectives) each rank runs: the progress total. A warm-up or soak
    iteration is a barrier and a call; the timed iterations are one barrier per batch
    (:func:`meshdoctor.probe.worker.batch_plan`) and a call each; the benchmark's bare loop is
    one step after its barrier."""
    batches = len(batch_plan(cfg.iters, cfg.size))
    if cfg.soak:
        per_op = 2 * (cfg.warmup + cfg.soak)
    else:
        per_op = 2 * cfg.warmup + batches + cfg.iters
    ops = [
        op
        for op in cfg.ops  # an op no MLX version of the backend has is skipped at once
        if OP_SUPPORT.get(op, {}).get(cfg.backend, ()) is not None
    ]
    steps = 1 + sum(cfg.warmup + 2 if op in BENCH_OPS else per_op for op in ops)
    if cfg.pairs:
        per_pair = 2 * cfg.warmup + batches + cfg.iters
        steps += len(plan_pairs(cfg.world_size, cfg.backend)[0]) * per_pair
    return steps
