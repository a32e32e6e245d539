"""MD110 MLX CUDA build: on a host with an NVIDIA driver, MLX must be its CUDA build, with NCCL,
for a CUDA major version the driver supports.

Sources: MLX installs its CUDA build as ``pip install "mlx[cuda12]"`` / ``"mlx[cuda13]"``
(packages ``mlx-cuda-12`` / ``mlx-cuda-13``, mlx 0.29+); ``mx.cuda.is_available()`` and
``mx.distributed.is_available("nccl")`` (mlx python API); mlx.launch picks the nccl backend when
``mx.cuda.is_available()`` (``mlx/_distributed_utils/launch.py``, mlx 0.32.4). A driver runs
CUDA builds up to the major version it reports (NVML ``nvmlSystemGetCudaDriverVersion``; CUDA
minor version compatibility, NVIDIA CUDA Compatibility guide).
"""

from __future__ import annotations

from meshdoctor.checker.model import Check, Doc, error, fail, ok, skip, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.facts.mlx_build import cuda_major_of, gather_mlx
from meshdoctor.facts.nvml import VISIBLE_ENV, driver_file, driver_present, gather_gpus, visible

INSTALL = 'pip install "mlx[cuda13]" (or "mlx[cuda12]" for a driver that reports CUDA 12)'


def _hidden_gpus(ctx: NodeContext, info: dict):
    """The finding when this process's CUDA_VISIBLE_DEVICES hides every GPU NVML lists, and MLX
    therefore does not import or sees no CUDA device (the CUDA build is installed; the variable
    is what to fix); None otherwise."""
    cuda = info.get("cuda") or {}
    if info.get("installed") and (cuda.get("available") or not cuda.get("packages")):
        return None  # it sees a GPU, or it is the CPU build (nothing a variable changes)
    if not info.get("installed") and "ModuleNotFoundError" in str(info.get("import_error")):
        return None  # MLX is not installed at all
    gpus = ctx.fact(gather_gpus)
    listed = gpus.get("gpus") or [] if gpus.get("nvml") else []
    seen = visible(listed)
    if not listed or not seen["set"] or seen["indices"]:
        return None
    how = (
        f"MLX does not import ({info.get('import_error')})"
        if not info.get("installed")
        else "mx.cuda.is_available() is False"
    )
    return fail(
        f"{VISIBLE_ENV}={seen['value']!r} hides all {len(listed)} GPU(s) NVML lists from this "
        f"process, so {how}: the ranks started from here would see no GPU",
        evidence={"cuda_visible_devices": seen["value"], "gpus": len(listed), "mlx": info},
        remediation=f"Unset {VISIBLE_ENV} (`unset {VISIBLE_ENV}`), or list the GPUs the ranks "
        "may use; mlx.launch gives each nccl rank the GPU of its local index itself.",
    )


def run(ctx: NodeContext):
    if not driver_present():
        return skip(f"no NVIDIA driver on this host ({driver_file()} does not exist)")
    info = ctx.fact(gather_mlx)
    if info.get("probe") != "ok":
        return error(
            f"could not inspect MLX in {ctx.python}: {info.get('detail', '?')}", evidence=info
        )
    hidden = _hidden_gpus(ctx, info)
    if hidden is not None:
        return hidden
    if not info.get("installed"):
        return fail(
            f"MLX is not importable from {info.get('executable', ctx.python)}",
            evidence=info,
            remediation=INSTALL,
        )
    cuda = info.get("cuda") or {}
    backend = ctx.hostfile.effective_backend if ctx.hostfile is not None else ""
    nccl = (info.get("backends") or {}).get("nccl")
    ev = {"mlx": info.get("version"), "cuda": cuda, "nccl": nccl, "backend": backend}
    if not cuda.get("available"):
        text = (
            f"mlx {info.get('version')} on a host with NVIDIA GPUs is not a CUDA build "
            f"(mx.cuda.is_available() is {cuda.get('available')}"
            + (f": {cuda['error']}" if cuda.get("error") else "")
            + ")"
        )
        fix = (
            f"{INSTALL} in the environment the ranks run in; mlx.launch then picks the nccl "
            "backend by itself."
        )
        return (
            fail(text, evidence=ev, remediation=fix)
            if backend == "nccl"
            else warn(text + "; ranks would run on the CPU", evidence=ev, remediation=fix)
        )
    if not nccl:
        return fail(
            f"mlx {info.get('version')} has CUDA but no nccl distributed backend",
            evidence=ev,
            remediation=f"Reinstall the CUDA build: {INSTALL}.",
        )
    gpus = ctx.fact(gather_gpus)
    build = cuda_major_of(cuda.get("packages") or [])
    drv = gpus.get("cuda_driver_version") if gpus.get("nvml") else None
    ev.update(
        {
            "build_cuda_major": build,
            "driver_cuda_version": drv,
            "driver_version": gpus.get("driver_version"),
        }
    )
    label = (
        f"mlx {info.get('version')} CUDA build"
        + (f" (CUDA {build})" if build else "")
        + ", nccl available"
    )
    if build and drv:
        major = int(drv) // 1000
        if build > major:
            return fail(
                f"{label}, but the driver {gpus.get('driver_version')} supports CUDA up "
                f"to {major}.{int(drv) % 1000 // 10}",
                evidence=ev,
                remediation=f"Upgrade the NVIDIA driver to one that supports CUDA "
                f'{build}, or install the matching MLX build ("mlx[cuda{major}]").',
            )
        return ok(
            f"{label}; driver {gpus.get('driver_version')} supports CUDA "
            f"{major}.{int(drv) % 1000 // 10}",
            evidence=ev,
        )
    return ok(
        label
        + (
            ""
            if drv
            else f"; driver CUDA version unknown ({gpus.get('reason') or 'NVML gave none'})"
        ),
        evidence=ev,
    )


CHECK = Check(
    code="MD110",
    name="gpu.mlx_cuda",
    title="MLX CUDA build",
    run=run,
    platforms=("linux",),
    doc=Doc(
        meaning="""
On a Linux host with an NVIDIA driver, checks that the MLX the ranks import is its CUDA build
(mx.cuda.is_available()), that the build has the nccl distributed backend, and that the CUDA
major version it was built for (the mlx-cuda-12 / mlx-cuda-13 package) is not newer than what the
driver supports (NVML's CUDA driver version). Skipped on hosts without an NVIDIA driver.

Fails when the hostfile's backend is nccl and MLX is the CPU build, when nccl is missing, or when
the driver is too old for the build; warns when the GPUs would go unused by a CPU build.
""",
        why="""
mlx.launch picks the nccl backend only when mx.cuda.is_available(): a CPU build cannot run an
nccl launch and leaves the GPUs unused, and a driver runs CUDA builds only up to the major
version it reports.
""",
        action="""
pip install "mlx[cuda13]" (driver supporting CUDA 13) or "mlx[cuda12]" in the environment the
ranks run in; or upgrade the NVIDIA driver.
""",
        sources=(
            "MLX installation documentation (mlx[cuda12] / mlx[cuda13], packages mlx-cuda-12 / "
            "mlx-cuda-13, mlx 0.29+)",
            "MLX Python API (mx.cuda.is_available, mx.distributed.is_available)",
            "MLX v0.32.4 mlx.launch (mlx/_distributed_utils/launch.py: nccl backend choice)",
            "NVIDIA NVML API reference (nvmlSystemGetCudaDriverVersion)",
            "NVIDIA CUDA Compatibility guide",
        ),
    ),
)
