"""Each rank's environment: mlx.launch's contract, built as pure data (no processes, no files).

Source: mlx ``_distributed_utils/launch.py`` (mlx 0.32.4):

* every rank: ``MLX_RANK``, the hostfile's ``envs`` (``K=V``), and meshdoctor's own
  ``MESHDOCTOR_PROBE_ID`` (the marker that identifies leftovers), ``MESHDOCTOR_PROBE_PLAN``;
* ring: ``MLX_HOSTFILE`` = a JSON list per rank of ``"ip:port"``, one entry per IP of the host,
  ports laid out as mlx.launch does (:func:`meshdoctor.mlx.ports.ring_ports`);
* jaccl / jaccl-ring: ``MLX_JACCL_COORDINATOR`` = rank 0's first IP and the coordinator port
  (default :data:`meshdoctor.mlx.ports.STARTING_PORT`), ``MLX_IBV_DEVICES`` = the hostfile's
  N x N ``rdma`` matrix as JSON, ``MLX_JACCL_RING=1`` for jaccl-ring, and the guard PR's
  ``JACCL_PROGRESS_TIMEOUT_MS`` set below the launcher's own per-collective deadline with
  ``JACCL_TIMEOUT_ACTION=throw`` (a build with the guard then fails cleanly; one without is
  caught by the launcher's deadline);
* nccl (``launch_nccl``): ``NCCL_HOST_IP`` = rank 0's first IP (rank 0 serves the NCCL unique id
  there), ``NCCL_PORT`` (launcher default :data:`meshdoctor.mlx.ports.NCCL_PORT`),
  ``MLX_WORLD_SIZE``, and per rank ``CUDA_VISIBLE_DEVICES`` = its index among the ranks of its
  host (one GPU each).

Files (``MLX_HOSTFILE``, ``MLX_IBV_DEVICES``) travel as content in ``MESHDOCTOR_PROBE_FILES``;
the worker writes them to temp files on the rank's own host, so remote ranks need no copy step.
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional, Sequence

from meshdoctor.hostfile.locality import is_this_machine
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.mlx.backends import JACCL_BACKENDS, PROBE_BACKENDS, one_of
from meshdoctor.mlx.ports import NCCL_PORT, STARTING_PORT, ring_ports
from meshdoctor.probe.worker import FILES_ENV, MARKER_ENV, PLAN_ENV

GUARD_FRACTION = 0.75  # JACCL progress guard fires at 75 % of our own deadline


class EnvError(ValueError):
    """The hostfile cannot give this backend its environment; the message names the entry."""


def ring_entries(hf: Hostfile, ports: Sequence[int]) -> List[List[str]]:
    """The ring backend's hostfile: for rank r, ``["ip:port", ...]`` for each of its IPs, taking
    ports from ``ports`` in order (one per IP over all ranks). Raises :class:`EnvError` when a
    host has no IP or ``ports`` is too short."""
    out = []
    for h, mine in zip(hf.hosts, ring_ports(hf.hosts, ports=ports)):
        if not h.ips:
            raise EnvError(
                f'hosts[{h.rank}] ({h.ssh or "?"}) has no "ips": the ring backend '
                "connects to IP addresses; add the rank's IP to the hostfile"
            )
        if len(mine) < len(h.ips):
            raise EnvError(
                f"{len(ports)} ports given for more addresses; pass one port per IP of every host"
            )
        out.append([f"{f'[{ip}]' if ':' in ip else ip}:{p}" for ip, p in zip(h.ips, mine)])
    return out


def guard_timeout_ms(deadline_s: float) -> int:
    """``JACCL_PROGRESS_TIMEOUT_MS`` for a launcher deadline of ``deadline_s`` seconds:
    :data:`GUARD_FRACTION` of it, at least 1000 ms (the guard must fire before we kill)."""
    return max(1000, int(deadline_s * 1000 * GUARD_FRACTION))


def backend_env(
    hf: Hostfile,
    backend: str,
    *,
    ports: Sequence[int] = (),
    port: Optional[int] = None,
    deadline_s: float = 30.0,
):
    """``(env, files)`` shared by every rank for ``backend`` (ring, jaccl, jaccl-ring, nccl).

    ``ports`` are the ring ports (see :func:`ring_entries`); ``port`` is the jaccl coordinator
    port (default :data:`~meshdoctor.mlx.ports.STARTING_PORT`) or the NCCL port (default
    :data:`~meshdoctor.mlx.ports.NCCL_PORT`); ``deadline_s`` is the launcher's per-collective
    deadline in seconds.
    Raises :class:`EnvError` for a hostfile the backend cannot use."""
    env: Dict[str, str] = {}
    files: Dict[str, str] = {}
    if backend == "ring":
        files["MLX_HOSTFILE"] = json.dumps(ring_entries(hf, ports))
    elif backend in JACCL_BACKENDS:
        n = hf.world_size
        if not hf.hosts or not hf.hosts[0].ips:
            raise EnvError(
                "hosts[0] has no \"ips\": JACCL's coordinator is rank 0's first IP; "
                "add it to the hostfile"
            )
        bad = [h.rank for h in hf.hosts if len(h.rdma) != n]
        if bad:
            raise EnvError(
                f"hosts[{bad[0]}].rdma has {len(hf.hosts[bad[0]].rdma)} entries, "
                f"needs {n} (one per rank, null for itself); run `meshdoctor check "
                "--hostfile` for every hostfile problem"
            )
        ip = hf.hosts[0].ips[0]
        env["MLX_JACCL_COORDINATOR"] = (
            f"{'[' + ip + ']' if ':' in ip else ip}:{port or STARTING_PORT}"
        )
        if backend == "jaccl-ring":
            env["MLX_JACCL_RING"] = "1"
        env["JACCL_PROGRESS_TIMEOUT_MS"] = str(guard_timeout_ms(deadline_s))
        env["JACCL_TIMEOUT_ACTION"] = "throw"
        files["MLX_IBV_DEVICES"] = json.dumps([h.rdma for h in hf.hosts])
    elif backend == "nccl":
        if not hf.hosts or not hf.hosts[0].ips:
            raise EnvError(
                "hosts[0] has no \"ips\": NCCL's bootstrap server is rank 0's first "
                "IP (NCCL_HOST_IP); add it to the hostfile"
            )
        env["NCCL_HOST_IP"] = hf.hosts[0].ips[0]
        env["NCCL_PORT"] = str(port or NCCL_PORT)
        env["MLX_WORLD_SIZE"] = str(hf.world_size)
    else:
        raise EnvError(
            f"backend {backend!r} is not supported by the probe; use {one_of(PROBE_BACKENDS)}"
        )
    return env, files


def local_rank(hf: Hostfile, rank: int) -> int:
    """How many hostfile entries before ``rank`` are on the same host: the rank's index among
    the ranks of its host. Entries that are this machine (:func:`is_this_machine`: localhost,
    its names and addresses) count as one host; others are told apart by ssh name, else first
    IP."""

    def key(h):
        return "" if is_this_machine(h) else (h.ssh or (h.ips[0] if h.ips else "?"))

    me = key(hf.hosts[rank])
    return sum(1 for h in hf.hosts[:rank] if key(h) == me)


def per_rank_env(hf: Hostfile, backend: str, rank: int) -> Dict[str, str]:
    """Variables that differ between ranks beyond ``MLX_RANK``: for nccl,
    ``CUDA_VISIBLE_DEVICES`` = the rank's local index on its host, one GPU per rank (mlx.launch
    sets ``rank % --repeat-hosts``, which is the same for ranks listed host by host)."""
    if backend == "nccl":
        return {"CUDA_VISIBLE_DEVICES": str(local_rank(hf, rank))}
    return {}


def rank_env(
    hf: Hostfile,
    rank: int,
    *,
    run_id: str,
    plan: dict,
    shared_env: Dict[str, str],
    files: Dict[str, str],
) -> Dict[str, str]:
    """The variables one rank gets on top of its inherited environment: the hostfile's
    ``envs`` first, then the backend's ``shared_env``, then ``MLX_RANK``, the marker, the plan
    and the files (these always win)."""
    env = hf.env_dict()
    env.update(shared_env)
    env.update(per_rank_env(hf, str(plan.get("backend", "")), rank))
    env.update(
        {
            "MLX_RANK": str(rank),
            MARKER_ENV: run_id,
            PLAN_ENV: json.dumps(plan, separators=(",", ":")),
            FILES_ENV: json.dumps(files, separators=(",", ":")),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env
