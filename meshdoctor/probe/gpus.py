"""The pre-flight check that every nccl rank launched on this machine has a GPU of its own.

mlx.launch gives each nccl rank one GPU through ``CUDA_VISIBLE_DEVICES`` (MLX v0.32.4,
``mlx/_distributed_utils/launch.py``, ``launch_nccl``), and the probe does the same
(:func:`meshdoctor.probe.env.per_rank_env`). A rank whose index is past the host's GPU count
sees no device at all: its ``import mlx.core`` fails with CUDA's "no CUDA-capable device is
detected", which says nothing about the hostfile. This check says it before anything starts.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from meshdoctor.facts import nvml
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.hostfile.phrases import ranks_phrase
from meshdoctor.probe.env import local_rank
from meshdoctor.probe.ports import PreflightError

NVML_TIMEOUT_S = 5.0


def check_local_gpus(
    hf: Hostfile,
    local: Sequence[bool],
    read: Callable[[], Dict] = lambda: nvml.read_all(NVML_TIMEOUT_S),
) -> None:
    """Raise :class:`PreflightError` when the nccl ranks that run on this machine (``local[i]``
    true for rank ``i``) outnumber its GPUs as NVML counts them (``read()``:
    :func:`meshdoctor.facts.nvml.read_all`'s document). Nothing is raised when no rank is local,
    or NVML cannot count (no driver, NVML unusable): the ranks' own start then says why."""
    ranks = [i for i, here in enumerate(local) if here]
    if not ranks:
        return
    facts = read()
    if not facts.get("nvml"):
        return
    gpus = len(facts.get("gpus") or [])
    short = [r for r in ranks if local_rank(hf, r) >= gpus]
    if not short:
        return
    every = len(ranks) == hf.world_size and hf.path is None  # -n: ranks on this machine only
    if every:
        instead = (
            f"-n {gpus} (one nccl rank per GPU)"
            if gpus >= 2
            else "--backend ring (the ranks share this machine over loopback), or --hostfile "
            "with one entry per GPU host (an nccl probe needs two GPUs)"
        )
        remedy = f"Probe this machine with {instead}."
        fix = f"Probe with {instead}."
    else:
        instead = (
            f"probe with -n {gpus}"
            if gpus >= 2
            else "give --hostfile one entry per GPU host (a probe needs two GPUs)"
        )
        fix = f"Put at most {gpus} rank(s) of the hostfile on this machine, or {instead}."
        remedy = f"{fix[:-1]}; then probe the new hostfile."
    raise PreflightError(
        f"hosts[{short[0]}]",
        f"{len(ranks)} nccl ranks run on this machine but it has {gpus} GPU(s): "
        f"{ranks_phrase(short)} would see no GPU (each nccl rank gets its own GPU through "
        f"CUDA_VISIBLE_DEVICES, as mlx.launch does). {fix}",
        remedy,
    )
