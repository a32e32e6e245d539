"""From command-line options to a :class:`~meshdoctor.probe.config.ProbeConfig`, with every
usage check the probe needs before it starts anything: one source of the
mesh, a size that parses, a hostfile the backend can use; and enough memory on this host right
now (:class:`~meshdoctor.probe.errors.ProbeNotNow`: a state of the machine, exit 3)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional

from meshdoctor.hostfile.load import HostfileError, from_list
from meshdoctor.hostfile.locality import local_ranks
from meshdoctor.hostfile.phrases import n_ranks
from meshdoctor.hostfile.rules import host_sources_conflict
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.mlx.backends import BACKENDS, PROBE_BACKENDS, one_of
from meshdoctor.mlx.ports import port_count
from meshdoctor.probe import env as envmod
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.errors import ProbeNotNow, ProbeSetupError
from meshdoctor.probe.sizes import SizeError, format_size, memory_needed, parse_size
from meshdoctor.probe.worker import DTYPE_BYTES, OPS

if TYPE_CHECKING:
    from meshdoctor.probe.api import ProbeRequest

DEFAULT_RANKS = 2
# Ranks one probe starts at most: a JACCL mesh stops at 8 (MESH_MAX_PEERS in mlx jaccl ``rdma.cpp``); rings of a few
# dozen Macs exist; thousands of entries are a broken hostfile, not a mesh.
MAX_WORLD_SIZE = 256
# the options of a ProbeRequest the ProbeConfig keeps as they were given (checked, not converted)
AS_GIVEN = ("iters", "warmup", "dtype", "timeout", "soak", "pairs", "port")


def available_memory() -> int:
    """Bytes of memory available on this host (psutil ``virtual_memory().available``)."""
    from meshdoctor.proctable import psutil

    return int(psutil.virtual_memory().available)


def default_backend(python: Optional[str] = None) -> str:
    """The backend mlx.launch picks when neither --backend nor the hostfile names one: nccl
    when the ranks' MLX is the CUDA build, else ring (``launch.py``, mlx 0.32.4: ``"nccl" if
    mx.cuda.is_available() else "ring"``). Read from the installed packages of ``python``
    (default ``MESHDOCTOR_PYTHON`` or this interpreter) without importing mlx."""
    import os
    import sys

    from meshdoctor.facts.mlx_build import cuda_packages
    from meshdoctor.facts.nvml import driver_present

    if not driver_present():  # MLX's CUDA build reports no CUDA without an NVIDIA driver
        return "ring"
    py = python or os.environ.get("MESHDOCTOR_PYTHON") or sys.executable
    return "nccl" if cuda_packages(py) else "ring"


def _where(hf: Hostfile) -> str:
    """The prefix naming the hostfile in a usage error (``PATH: ``), empty without a file."""
    return f"{hf.path}: " if hf.path else ""


def _mesh(
    hostfile: Optional[Hostfile],
    hosts: Optional[str],
    nranks: Optional[int],
    backend: Optional[str],
    python: Optional[str],
):
    """``(hostfile, the option it came from)``: ``--hostfile``, ``--hosts`` or ``-n`` ranks on
    this machine over loopback (ring, or nccl when that is the default backend)."""
    if hostfile is not None:
        return hostfile, "--hostfile"
    if hosts is not None:
        try:
            return from_list(hosts), "--hosts"
        except HostfileError as exc:
            raise ProbeSetupError(str(exc), "--hosts") from None
    if backend not in (None, "ring", "nccl"):
        raise ProbeSetupError(
            f"-n starts ranks on this machine over loopback with the ring "
            f"(or nccl) backend; {backend} needs a hostfile with the RDMA "
            "devices (--hostfile)",
            "--backend",
        )
    local_backend = backend or default_backend(python)
    kind = "nccl" if local_backend == "nccl" else "ring"
    return local_hostfile(nranks or DEFAULT_RANKS, kind), "-n"


def _world_size(hf: Hostfile, where: str) -> None:
    """Refuse a hostfile of no usable host, of one rank, or of more than
    :data:`MAX_WORLD_SIZE` ranks."""
    if hf.world_size == 0:
        bad = hf.problems
        raise ProbeSetupError(
            _where(hf) + ("; ".join(f"{p}: {m}" for p, m in bad[:4]) or "no hosts"), where
        )
    if hf.world_size < 2:
        also = "; ".join(f"{p}: {m}" for p, m in hf.problems[:4])
        raise ProbeSetupError(
            _where(hf)
            + f"{n_ranks(hf.world_size)}: a probe needs at least 2"
            + (f"; also {also}" if also else ""),
            where,
        )
    if hf.world_size > MAX_WORLD_SIZE:
        raise ProbeSetupError(
            f"{hf.world_size} ranks: the probe starts at most "
            f"{MAX_WORLD_SIZE}; probe a subset of the hosts",
            where,
        )


def _backend(hf: Hostfile, backend: Optional[str], python: Optional[str], where: str):
    """``(hostfile, backend)``: the backend the probe runs (the option's, the hostfile's, else
    the default), refused when the probe does not run it; the hostfile as that backend reads
    it, refused on any problem."""
    chosen = hf.launched_backend(backend, cuda=lambda: default_backend(python) == "nccl")
    if chosen not in PROBE_BACKENDS:
        if backend:  # the option named it
            raise ProbeSetupError(
                f"backend {chosen!r} is not supported by the probe; pass --backend "
                f"{one_of(PROBE_BACKENDS)}",
                "--backend",
            )
        what = (
            "an unknown backend" if chosen not in BACKENDS else "a backend the probe does not run"
        )
        raise ProbeSetupError(
            _where(hf) + f'"backend": {chosen!r} is {what}; write {one_of(PROBE_BACKENDS)} '
            "there, or pass --backend",
            where,
        )
    if chosen != hf.effective_backend:  # another backend: a variant, checked for that backend
        hf = dataclasses.replace(hf, backend=chosen)
    bad = hf.problems
    if bad:
        listed = "; ".join(f"{p}: {m}" for p, m in bad[:4])
        raise ProbeSetupError(
            _where(hf) + listed + (f" (and {len(bad) - 4} more)" if len(bad) > 4 else ""),
            where,
        )
    return hf, chosen


def _size_and_ports(
    hf: Hostfile, chosen: str, size: str, nbytes: int, dtype: str, port: Optional[int], where
) -> None:
    """Refuse a size that is not whole elements of ``dtype`` with one per rank, a ``--port``
    whose consecutive ports pass 65535, and an environment the backend cannot be given."""
    item = DTYPE_BYTES[dtype]
    if nbytes % item or nbytes < item * hf.world_size:
        raise ProbeSetupError(
            f"--size {size}: must be a whole number of {dtype} elements ({item} bytes each) and "
            f"at least one per rank ({item * hf.world_size} bytes for {hf.world_size} ranks)",
            "--size",
        )
    count = port_count(hf.hosts) if chosen == "ring" else 1
    if port is not None and port + count - 1 > 65535:
        raise ProbeSetupError(
            f"--port {port}: {count} consecutive port(s) from it would pass "
            f"65535; use at most {65536 - count}",
            "--port",
        )
    try:
        envmod.backend_env(hf, chosen, ports=list(range(port_count(hf.hosts))))
    except envmod.EnvError as exc:
        raise ProbeSetupError(str(exc), where) from None


def _memory(hf: Hostfile, nbytes: int, iters: int, available: Optional[int]) -> None:
    """Raise :class:`ProbeNotNow` when this host's ranks need more memory than is available
    now (:func:`meshdoctor.probe.sizes.memory_needed`; ``available`` in bytes, default
    :func:`available_memory`)."""
    local_count = len(local_ranks(hf))
    need = memory_needed(nbytes, local_count, iters)
    have = available if available is not None else available_memory()
    if local_count and need > have:  # a state of this machine now, not a usage error
        raise ProbeNotNow(
            f"not started: {format_size(nbytes)} with {local_count} rank(s) on this host needs "
            f"about {format_size(need)} (4 buffers of the message size, the outputs of a timed "
            f"batch kept for checking, and 256MiB per rank) but only {format_size(have)} is "
            "available right now",
            "--size",
            need,
            have,
        )


def make_config(
    request: "ProbeRequest",
    hostfile: Optional[Hostfile] = None,
    *,
    available: Optional[int] = None,
    python: Optional[str] = None,
) -> ProbeConfig:
    """The checked config of ``request`` (a :class:`meshdoctor.probe.api.ProbeRequest`: each
    probe option is declared there once; the ones the config keeps as given are
    :data:`AS_GIVEN`); raises :class:`ProbeSetupError` naming the option and the fix, or
    :class:`ProbeNotNow` when this host lacks the memory the run needs right now.

    ``hostfile``: the request's hostfile, read (:func:`meshdoctor.probe.api.config` reads a
    path; default: ``request.hostfile`` when it is already loaded). ``available``: bytes of
    free memory (default: psutil's figure for this host). ``python``: the ranks' interpreter,
    asked for the default backend (:func:`default_backend`)."""
    given, size, backend, dtype = request.given, str(request.size), request.backend, request.dtype
    port = request.port
    if hostfile is None and not isinstance(request.hostfile, str):
        hostfile = request.hostfile  # a loaded Hostfile, or none
    why = host_sources_conflict(given)
    if why:
        raise ProbeSetupError(why, "/".join(given))
    try:
        nbytes = parse_size(size)
    except SizeError as exc:
        raise ProbeSetupError(str(exc), "--size") from None
    hf, where = _mesh(hostfile, request.hosts, request.nranks, backend, python)
    _world_size(hf, where)
    hf, chosen = _backend(hf, backend, python, where)
    _size_and_ports(hf, chosen, size, nbytes, dtype, port, where)
    _memory(hf, nbytes, request.iters, available)
    ops = list(OPS) if request.op == "all" else [request.op]
    return ProbeConfig(
        hostfile=hf,
        backend=chosen,
        ops=ops,
        size=nbytes,
        **{name: getattr(request, name) for name in AS_GIVEN},
    )
