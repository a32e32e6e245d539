"""``probe --launcher srun|env``: the ranks come from the launcher that started this process,
not from ssh; this module reads who this process is and where every rank runs (pure reading
of the environment; the run itself: :mod:`meshdoctor.probe.relay`).

* ``srun`` (Slurm, https://slurm.schedmd.com/srun.html, "OUTPUT ENVIRONMENT VARIABLES"):
  ``SLURM_PROCID`` -> this rank, ``SLURM_NTASKS`` (``SLURM_STEP_NUM_TASKS``) -> the world size,
  ``SLURM_STEP_NODELIST`` (else ``SLURM_JOB_NODELIST``; Slurm's host-list syntax,
  :func:`meshdoctor.hostfile.hostlist.expand`) and ``SLURM_STEP_TASKS_PER_NODE`` (else
  ``SLURM_TASKS_PER_NODE``: ``2(x3),1``) -> the node of every rank, in Slurm's ``block``
  distribution (the default) or ``cyclic`` (``SLURM_DISTRIBUTION``); this rank's own
  ``SLURM_NODEID`` must agree. Each node name is resolved to its IPv4 address; the ring's ports
  are laid out from ``--port`` (default :data:`meshdoctor.mlx.ports.STARTING_PORT`) as
  mlx.launch does (one per rank, in rank order).
* ``env`` (any other launcher: a Kubernetes indexed Job, a torchrun-style wrapper, mlx.launch):
  ``MLX_RANK``, ``MLX_HOSTFILE`` (the ring backend's file: a JSON list per rank of
  ``"ip:port"``, as mlx.launch writes it; MLX ``mlx/distributed/ring/ring.cpp`` reads it with
  ``MLX_RANK``; ``MLX_RING_VERBOSE``, present = verbose, passes through untouched) and
  ``MLX_WORLD_SIZE`` when set (it must match the file).

Rank 0 listens for the other ranks' reports on rank 0's first ring address at the port after
the ring's highest one (:attr:`Launched.control`).
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from typing import List, Mapping, Optional, Tuple

from meshdoctor import deadline
from meshdoctor.hostfile.hostlist import HostListError, expand
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.types import Host
from meshdoctor.mlx.ports import STARTING_PORT

__all__ = ["ENV", "LAUNCHERS", "Launched", "LauncherError", "SRUN", "read", "tasks_per_node"]

SRUN, ENV = "srun", "env"
LAUNCHERS = (SRUN, ENV)
MAX_HOSTFILE_BYTES = 4 << 20  # as meshdoctor.hostfile.load's cap
RESOLVE_S = 10.0  # per node name lookup
_COUNT = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


class LauncherError(ValueError):
    """The launcher's environment does not say who this rank is; the message names the
    variable and what it holds."""


@dataclass(frozen=True)
class Launched:
    """This process as one rank of a launcher's job: ``launcher`` (srun, env), ``rank``,
    ``hostfile`` (one entry per rank: its node name or address and its ring IPs), ``ring`` (the
    ring backend's ``MLX_HOSTFILE`` content: ``"ip:port"`` per rank), ``control`` (rank 0's
    address and the port it listens on for the other ranks), ``ring_file``: the launcher's own
    ``MLX_HOSTFILE`` path, used as it is (env), or None (srun: the probe writes it)."""

    launcher: str
    rank: int
    hostfile: Hostfile
    ring: Tuple[Tuple[str, ...], ...]
    control: Tuple[str, int]
    ring_file: Optional[str] = None

    @property
    def world_size(self) -> int:
        """How many ranks the launcher started."""
        return self.hostfile.world_size

    @property
    def host(self) -> str:
        """This rank's node (srun) or first ring address (env)."""
        return self.hostfile.hosts[self.rank].ssh


def _int(env: Mapping[str, str], *names: str) -> int:
    for name in names:
        raw = env.get(name)
        if raw is None:
            continue
        if not raw.strip().isdigit():
            raise LauncherError(f"{name}={raw!r} is not a whole number")
        return int(raw)
    raise LauncherError(
        f"{names[0]} is not set: run this under the launcher (for srun: inside a job step, "
        "`srun ... meshdoctor probe --launcher srun`)"
    )


def tasks_per_node(text: str) -> List[int]:
    """Slurm's tasks-per-node list -> one count per node: ``"2(x3),1"`` -> ``[2, 2, 2, 1]``.
    Raises :class:`LauncherError` for anything else."""
    out: List[int] = []
    for part in text.split(","):
        m = _COUNT.match(part.strip())
        if not m:
            raise LauncherError(f"tasks per node {text!r}: {part!r} is not N or N(xM)")
        out.extend([int(m.group(1))] * int(m.group(2) or 1))
    return out


def task_nodes(nodes: List[str], counts: List[int], distribution: str) -> List[str]:
    """The node of every task, in task order: ``block`` fills each node before the next (Slurm's
    default), ``cyclic`` deals one task per node in turn, skipping full nodes."""
    if distribution.startswith("cyclic"):
        left, out = list(counts), []
        while any(left):
            for i, n in enumerate(nodes):
                if left[i]:
                    out.append(n)
                    left[i] -= 1
        return out
    return [n for n, c in zip(nodes, counts) for _ in range(c)]


def _address(name: str) -> str:
    """The IPv4 address of node ``name`` (an address stays as it is), looked up under
    :data:`RESOLVE_S` seconds."""
    try:
        done, infos = deadline.call(
            lambda: socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM),
            RESOLVE_S,
            name="probe-resolve",
        )
    except OSError as exc:
        raise LauncherError(
            f"node {name!r} has no IPv4 address here ({exc}); the ring connects to addresses"
        ) from None
    if not done:
        raise LauncherError(f"looking up node {name!r} took more than {RESOLVE_S:.0f} s")
    return infos[0][4][0]


def _split_addr(entry: str) -> Tuple[str, int]:
    host, _, port = entry.rpartition(":")
    if not host or not port.isdigit():
        raise LauncherError(f"MLX_HOSTFILE entry {entry!r} is not ip:port")
    return host.strip("[]"), int(port)


def from_srun(env: Mapping[str, str], port: Optional[int] = None) -> Launched:
    """This rank of a Slurm job step (see module doc); ``port``: the first ring port."""
    rank = _int(env, "SLURM_PROCID")
    world = _int(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
    nodelist_var = "SLURM_STEP_NODELIST" if env.get("SLURM_STEP_NODELIST") else "SLURM_JOB_NODELIST"
    if not env.get(nodelist_var, "").strip():
        raise LauncherError(f"{nodelist_var} is not set or empty: run this inside a job step")
    try:
        nodes = expand(env[nodelist_var])
    except HostListError as exc:
        raise LauncherError(f"{nodelist_var}: {exc}") from None
    per_var = next(
        (v for v in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE") if env.get(v)), None
    )
    counts = tasks_per_node(env[per_var]) if per_var else [world // len(nodes)] * len(nodes)
    if len(counts) != len(nodes) or sum(counts) != world:
        raise LauncherError(
            f"{per_var}={env.get(per_var or '', '')!r} does not spread {world} tasks over the "
            f"{len(nodes)} nodes of {nodelist_var}"
        )
    dist = env.get("SLURM_DISTRIBUTION", "block")
    where = task_nodes(nodes, counts, dist)
    if rank >= world:
        raise LauncherError(f"SLURM_PROCID={rank} is not below the {world} tasks of the step")
    node_id = env.get("SLURM_NODEID")
    if node_id is not None and node_id.isdigit() and int(node_id) < len(nodes):
        if nodes[int(node_id)] != where[rank]:
            raise LauncherError(
                f"SLURM_DISTRIBUTION={dist!r} places tasks otherwise than block or cyclic "
                f"(task {rank} runs on {nodes[int(node_id)]}, not {where[rank]}); "
                "run the step with --distribution=block"
            )
    address = {n: _address(n) for n in dict.fromkeys(where)}
    base = port or STARTING_PORT
    ring = tuple((f"{address[n]}:{base + r}",) for r, n in enumerate(where))
    hf = Hostfile(
        tuple(Host(r, n, (address[n],)) for r, n in enumerate(where)), backend="ring", envs=()
    )
    return Launched(SRUN, rank, hf, ring, (address[where[0]], base + world))


def from_env(env: Mapping[str, str]) -> Launched:
    """This rank as ``MLX_RANK``/``MLX_HOSTFILE``/``MLX_WORLD_SIZE`` say (see module doc)."""
    rank = _int(env, "MLX_RANK")
    path = env.get("MLX_HOSTFILE")
    if not path:
        raise LauncherError(
            "MLX_HOSTFILE is not set: --launcher env needs the ring backend's hostfile (a JSON "
            'list per rank of "ip:port", as mlx.launch writes it) and MLX_RANK'
        )
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(MAX_HOSTFILE_BYTES + 1)[:MAX_HOSTFILE_BYTES])
    except (OSError, ValueError) as exc:
        raise LauncherError(f"MLX_HOSTFILE={path!r} cannot be read as JSON: {exc}") from None
    if not isinstance(data, list) or not all(
        isinstance(r, list) and r and all(isinstance(a, str) for a in r) for r in data
    ):
        raise LauncherError(f'MLX_HOSTFILE={path!r} is not a JSON list per rank of "ip:port"')
    parsed = [[_split_addr(a) for a in r] for r in data]
    world = len(data)
    if "MLX_WORLD_SIZE" in env and _int(env, "MLX_WORLD_SIZE") != world:
        raise LauncherError(
            f"MLX_WORLD_SIZE={env['MLX_WORLD_SIZE']} but MLX_HOSTFILE={path!r} lists {world} ranks"
        )
    if rank >= world:
        raise LauncherError(f"MLX_RANK={rank} is not below the {world} ranks of MLX_HOSTFILE")
    hf = Hostfile(
        tuple(Host(r, ips[0][0], tuple(ip for ip, _ in ips)) for r, ips in enumerate(parsed)),
        backend="ring",
        envs=(),
    )
    top = max(p for ips in parsed for _, p in ips)
    ring = tuple(tuple(r) for r in data)
    return Launched(ENV, rank, hf, ring, (parsed[0][0][0], top + 1), ring_file=path)


def read(
    launcher: str, env: Optional[Mapping[str, str]] = None, port: Optional[int] = None
) -> Launched:
    """This process as a rank of ``launcher`` (:data:`LAUNCHERS`), from ``env`` (default this
    process's environment); raises :class:`LauncherError`."""
    env = os.environ if env is None else env
    if launcher == SRUN:
        return from_srun(env, port)
    if launcher == ENV:
        return from_env(env)
    raise LauncherError(f"launcher {launcher!r} is not one of {', '.join(LAUNCHERS)}")


def ring_text(launched: Launched) -> str:
    """The ring's ``MLX_HOSTFILE`` content for this run (JSON)."""
    return json.dumps([list(r) for r in launched.ring])
