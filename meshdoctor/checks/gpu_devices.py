"""MD111 GPUs: enough GPUs for the ranks the hostfile puts on this host, and the device settings
that stop a rank from using one (compute mode, MIG) or slow every start (persistence).

Sources: mlx.launch gives each rank of the nccl backend one GPU through CUDA_VISIBLE_DEVICES
(``mlx/_distributed_utils/launch.py``, mlx 0.32.4); compute modes, MIG and persistence mode: NVML
API reference (nvmlDeviceGetComputeMode, nvmlDeviceGetMigMode, nvmlDeviceGetPersistenceMode) and
the nvidia-smi manual ("Exclusive_Process: only one context is allowed per device";
"Prohibited: no contexts"); NCCL does not support communication between MIG instances (NVIDIA
MIG user guide, "CUDA ... P2P not supported"); persistence mode keeps the driver initialised
between processes (NVIDIA driver persistence documentation).
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.checker.model import Check, Doc, Finding, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.checks._gpu import gpus_or_finding
from meshdoctor.facts.mlx_build import gather_mlx
from meshdoctor.facts.nvml import COMPUTE_MODES, VISIBLE_ENV, visible
from meshdoctor.text import shell_line


def _backend(ctx: NodeContext) -> str:
    """The backend mlx.launch starts this hostfile with
    (:meth:`meshdoctor.hostfile.model.Hostfile.launched_backend`): only nccl gives each rank a
    GPU of its own (``CUDA_VISIBLE_DEVICES``); ring and mpi ranks share the host's GPUs."""
    hf = ctx.hostfile
    if hf is None:
        return ""
    return hf.launched_backend(
        cuda=lambda: bool((ctx.fact(gather_mlx).get("cuda") or {}).get("available"))
    )


def _modes(g: Dict[str, Any]) -> List[Finding]:
    """The rules on one readable GPU's modes: compute mode, MIG, persistence."""
    out: List[Finding] = []
    tag = f"GPU {g['index']} ({g.get('name')})"
    ev = {k: g.get(k) for k in ("index", "name", "uuid", "compute_mode", "mig", "persistence")}
    mode = g.get("compute_mode")
    default_mode = shell_line(["sudo", "nvidia-smi", "-i", g["index"], "-c", "DEFAULT"])
    if mode == 2:
        out.append(
            fail(
                f"{tag} is in compute mode Prohibited: no process may use it",
                evidence=ev,
                remediation=default_mode,
            )
        )
    elif mode in (1, 3):
        out.append(
            warn(
                f"{tag} is in compute mode {COMPUTE_MODES[mode]}: a second process "
                "(a leftover rank, another job) on it is refused with 'all CUDA-"
                "capable devices are busy or unavailable'",
                evidence=ev,
                remediation=f"{default_mode}, or make sure nothing else runs on it",
            )
        )
    mig = g.get("mig") or {}
    if mig.get("current") == 1 or mig.get("pending") == 1:
        out.append(
            fail(
                f"{tag} has MIG mode {'on' if mig.get('current') else 'pending'}: "
                "NCCL cannot communicate between MIG instances",
                evidence=ev,
                remediation=f"{shell_line(['sudo', 'nvidia-smi', '-i', g['index'], '-mig', 0])} "
                "(then reset "
                "the GPU), or run the mesh on GPUs without MIG",
            )
        )
    if g.get("persistence") == 0:
        out.append(
            warn(
                f"{tag} has persistence mode off: the driver tears the GPU down "
                "when the last process exits, so every rank start pays the "
                "initialisation again",
                evidence=ev,
                remediation="sudo nvidia-smi -pm 1 (or run nvidia-persistenced)",
            )
        )
    return out


def run(ctx: NodeContext):
    snap, unusable = gpus_or_finding(ctx, "Check the driver (`nvidia-smi`); install nvidia-ml-py.")
    if unusable is not None:
        return unusable
    gpus = [g for g in snap["gpus"] if "unreadable" not in g]
    out = []
    ranks = len(ctx.ranks)
    if not snap["gpus"]:
        return fail(
            "the NVIDIA driver is loaded but NVML lists no GPU",
            evidence=snap,
            remediation="Check `nvidia-smi`; a GPU that fell off the bus needs a reboot.",
        )
    backend = _backend(ctx) if ranks > 1 else ""
    if ranks and ranks > len(snap["gpus"]) and backend == "nccl":
        out.append(
            fail(
                f"the hostfile puts {ranks} ranks on this host but it has "
                f"{len(snap['gpus'])} GPU(s): each nccl rank needs its own GPU",
                evidence={"ranks": ctx.ranks, "gpus": len(snap["gpus"]), "backend": backend},
                remediation="List this host once per GPU at most in the hostfile.",
            )
        )
    for g in snap["gpus"]:
        if "unreadable" in g:
            out.append(
                fail(
                    f"GPU {g['index']} cannot be read through NVML: {g['unreadable']}",
                    evidence=g,
                    remediation=f"`{shell_line(['nvidia-smi', '-q', '-i', g['index']])}`; a GPU "
                    "that is lost needs a reset or a reboot.",
                )
            )
    for g in gpus:
        out += _modes(g)
    seen = visible(snap["gpus"])
    if seen["set"] and len(seen["indices"]) < len(snap["gpus"]):  # the ranks see fewer
        shown = ", ".join(str(i) for i in seen["indices"]) or "none"
        out.append(
            warn(
                f"{VISIBLE_ENV}={seen['value']!r} in this environment: processes started "
                f"here see {len(seen['indices'])} of the {len(snap['gpus'])} GPU(s) "
                f"(GPU {shown})",
                evidence={"cuda_visible_devices": seen["value"], "visible": seen["indices"]},
                remediation=f"Unset {VISIBLE_ENV} where the ranks start, or list the GPUs "
                "they may use; mlx.launch gives each nccl rank the GPU of its local index.",
            )
        )
    if not any(f.status in ("fail", "warn") for f in out):
        names = sorted({str(g.get("name")) for g in gpus})
        out.append(
            ok(
                f"{len(gpus)} GPU(s) ({', '.join(names)}), compute mode Default, MIG off"
                + (f"; {ranks} rank(s) here" if ranks else "")
                + (
                    f" (the {backend} backend: ranks share the GPUs)"
                    if backend and backend != "nccl" and ranks > len(snap["gpus"])
                    else ""
                )
                + (f"; {VISIBLE_ENV}={seen['value']!r} shows all of them" if seen["set"] else ""),
                evidence={"gpus": [{k: g.get(k) for k in ("index", "name", "uuid")} for g in gpus]},
            )
        )
    return out


CHECK = Check(
    code="MD111",
    name="gpu.devices",
    title="GPUs: count, compute mode, MIG, persistence",
    run=run,
    platforms=("linux",),
    doc=Doc(
        meaning="""
Reads every GPU through NVML. Fails when the hostfile puts more nccl ranks on this host than it
has GPUs (ring and mpi ranks share a host's GPUs), when a GPU is in compute mode Prohibited, when MIG is on or pending, or when a GPU cannot
be read. Warns on an exclusive compute mode and on persistence mode off. Skipped without an
NVIDIA driver.
""",
        why="""
Each nccl rank gets its own GPU through CUDA_VISIBLE_DEVICES; mlx.launch sets nothing of the
kind for ring or mpi ranks. NCCL does not communicate between
MIG instances. Under an exclusive compute mode a second process, such as a leftover rank, is
refused with 'all CUDA-capable devices are busy or unavailable'. With persistence mode off every
start initialises the GPU again.
""",
        action="""
sudo nvidia-smi -i N -c DEFAULT; sudo nvidia-smi -i N -mig 0 then reset the GPU;
sudo nvidia-smi -pm 1.
""",
        sources=(
            "MLX v0.32.4 mlx.launch (mlx/_distributed_utils/launch.py: one GPU per nccl rank "
            "through CUDA_VISIBLE_DEVICES)",
            "NVIDIA NVML API reference (nvmlDeviceGetComputeMode, nvmlDeviceGetMigMode, "
            "nvmlDeviceGetPersistenceMode)",
            "nvidia-smi manual (compute modes Exclusive_Process, Prohibited)",
            "NVIDIA MIG user guide (CUDA P2P between MIG instances not supported)",
            "NVIDIA driver persistence documentation",
        ),
    ),
)
