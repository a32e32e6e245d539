"""Ring ports for a probe run, and the pre-flight check that local ranks' addresses are ours."""

from __future__ import annotations

import errno
import random
import socket
from typing import List, Optional, Sequence

from meshdoctor.hostfile.model import Hostfile
from meshdoctor.mlx.ports import port_count

# Ports for remote ranks, below the kernels' ephemeral ranges (Linux ip_local_port_range default
# 32768-60999; macOS and IANA dynamic ports 49152-65535), so an outgoing connection on a host
# never holds the port a rank is about to bind.
REMOTE_PORT_RANGE = (20000, 32000)


class PreflightError(Exception):
    """The run cannot start as configured; ``where`` is a hostfile path like ``hosts[1].ips[0]``,
    the message says what is wrong and what to do; ``remedy``: what the result's remedy says
    (None: fix the hostfile entry named, then probe again)."""

    def __init__(self, where: str, message: str, remedy: Optional[str] = None) -> None:
        super().__init__(message)
        self.where = where
        self.remedy = remedy


def choose_ports(hf: Hostfile, local: Sequence[bool], port: Optional[int]) -> List[int]:
    """Ring ports, one per IP of every host (in rank order). ``port`` given: consecutive from it,
    as mlx.launch ``--starting-port``. Otherwise, when every rank is local, ports the kernel
    hands out (bind to port 0, then close); with remote ranks, a random consecutive block.

    Also checks that each local rank's IP is assigned on this machine (bind to it), so the
    probe never sends a connect to an address that is not ours; raises :class:`PreflightError`.
    """
    held: List[socket.socket] = []
    ports: List[int] = []
    try:
        for h, loc in zip(hf.hosts, local):
            for j, ip in enumerate(h.ips):
                if not loc:
                    continue
                s = _bind_own(
                    ip,
                    f"hosts[{h.rank}].ips[{j}]",
                    h.rank,
                    h.ssh,
                    "the ring backend would fail to listen there. Put this machine's "
                    "own IP in the hostfile, or the right ssh name for the host that "
                    "owns it.",
                )
                held.append(s)
                if port is None and all(local):
                    ports.append(s.getsockname()[1])
    finally:
        for s in held:
            s.close()
    count = port_count(hf.hosts)
    if port is not None:
        return list(range(port, port + count))
    if all(local):
        return ports
    if count >= REMOTE_PORT_RANGE[1] - REMOTE_PORT_RANGE[0]:
        raise PreflightError(
            "hosts",
            f"{count} ring addresses need more ports than the range "
            f"{REMOTE_PORT_RANGE[0]}-{REMOTE_PORT_RANGE[1]}; list fewer IPs",
        )
    base = random.randrange(REMOTE_PORT_RANGE[0], REMOTE_PORT_RANGE[1] - count)
    return list(range(base, base + count))


def nccl_port(hf: Hostfile, local: Sequence[bool], port: Optional[int]) -> int:
    """The NCCL_PORT rank 0 serves the NCCL unique id on: ``port`` when given; when rank 0 runs
    here, a port the kernel hands out on rank 0's address (which also checks that the address
    is assigned on this machine; raises :class:`PreflightError`); else a random port in
    :data:`REMOTE_PORT_RANGE` (mlx.launch would use 12345, which a second job on the same host
    would collide with)."""
    if port is not None:
        return port
    ip = hf.hosts[0].ips[0]
    if not local[0]:
        return random.randrange(*REMOTE_PORT_RANGE)
    with _bind_own(
        ip,
        "hosts[0].ips[0]",
        0,
        hf.hosts[0].ssh,
        "NCCL's bootstrap server (NCCL_HOST_IP) would fail to listen there. Put "
        "this machine's own IP first in the hostfile.",
    ) as s:
        return s.getsockname()[1]


def _bind_own(
    ip: str, where: str, rank: int, ssh: Optional[str], consequence: str
) -> socket.socket:
    """A TCP socket bound to ``ip`` port 0 (the caller closes it): proof that the address of a
    rank that runs here is this machine's. Raises :class:`PreflightError` at ``where`` saying
    why not and ``consequence`` (what would fail, what to do)."""
    s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((ip, 0))
    except OSError as exc:
        s.close()
        why = (
            "is not assigned on this machine"
            if exc.errno == errno.EADDRNOTAVAIL
            else f"cannot be bound ({exc})"
        )
        raise PreflightError(
            where,
            f"rank {rank} runs on this machine ({ssh or 'localhost'}) "
            f"but its address {ip} {why}: {consequence}",
        ) from None
    return s
