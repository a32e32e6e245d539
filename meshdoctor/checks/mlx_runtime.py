"""MD102 MLX runtime: installed or not, version, backends, known-bad versions, progress guard.

Known-bad versions and what fixed them come from the MLX release notes (github.com/ml-explore/mlx
releases) and the MLX pull requests and issues named in :data:`KNOWN_BAD`; a defect still open
upstream has no fixed-in version. The JACCL progress guard is the ``JACCL_PROGRESS_TIMEOUT_MS``
setting of builds that carry it: no released MLX has it or any peer liveness (0.32.4's libjaccl
has neither; MLX PR #4530 is open), only forks do.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.model import Export
from meshdoctor.checker.here import slow_not_hung
from meshdoctor.checker.model import Check, Doc, error, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.mlx.backends import JACCL_BACKENDS, core_backend
from meshdoctor.facts.mlx_build import BACKENDS as MLX_BACKENDS, gather_mlx
from meshdoctor.model import Remediation
from meshdoctor.parsers.macos import version_tuple
from meshdoctor.text import shell_line

# (first bad, fixed in, backends concerned, reason): versions as tuples; bad is lo <= v < fixed;
# fixed None: still open upstream (bad from lo on).
KNOWN_BAD: List[Tuple[tuple, Optional[tuple], Tuple[str, ...], str]] = [
    ((0,), (0, 30, 1), JACCL_BACKENDS, "has no JACCL backend"),
    (
        (0, 30, 3),
        (0, 30, 4),
        JACCL_BACKENDS,
        "reads MLX_JACCL_DEVICES only, so it ignores the MLX_IBV_DEVICES that mlx.launch exports",
    ),
    ((0,), (0, 30, 6), ("jaccl-ring",), "has no jaccl-ring and no large buffers"),
    ((0,), (0, 32, 0), JACCL_BACKENDS, "has the local staging race"),
    (
        (0, 31, 2),
        (0, 32, 1),
        JACCL_BACKENDS,
        "uses an uninitialised GID when a port has no IPv4-mapped GID (peer RTR then fails with "
        "errno 22, with no hint why)",
    ),
    (
        (0,),
        (0, 32, 1),
        ("ring",),
        "ring survivors hang forever after a peer dies ('[ring] Too many send/recv errors. "
        "Aborting...')",
    ),
    (
        (0,),
        (0, 32, 1),
        JACCL_BACKENDS,
        "a data-path error aborts the process (libc++abi: terminating ... std::invalid_argument)",
    ),
    (
        (0,),
        (0, 32, 1),
        ("ring",),
        "a single ring transfer of 2 GiB or more fails with errno 22 (MLX PR #4281)",
    ),
    (
        (0, 32, 1),
        (0, 32, 3),
        ("jaccl-ring",),
        "jaccl-ring all_gather returns wrong data without an error: the upper half of each "
        "peer's region is never sent (MLX PR #4443)",
    ),
    (
        (0,),
        (0, 32, 4),
        ("",),
        "a failed non-strict init is cached as a size-1 group that a later strict init returns "
        "(MLX PR #4558; in 0.32.4, unknown whether 0.32.3 has it)",
    ),
]

NO_RELEASED_GUARD = (
    "no released MLX has the JACCL progress guard or peer liveness (0.32.4's libjaccl has "
    "neither; MLX PR #4530 is open): only forks carry it"
)


# What makes each backend available (mlx docs, "Distributed Communication"; mlx 0.30.1 added
# JACCL, MLX's CUDA build ships NCCL).
BACKEND_REMEDY = {
    "jaccl": "JACCL needs macOS >= 26.2 on Apple silicon with RDMA enabled (`rdma_ctl status`) "
    "and mlx >= 0.30.1.",
    "mpi": "The mpi backend needs an MPI library MLX can load (OpenMPI: `brew install "
    "open-mpi` or `apt-get install libopenmpi-dev`) and a launch through mpirun.",
    "nccl": "The nccl backend needs MLX's CUDA build on Linux with NVIDIA GPUs "
    '(pip install "mlx[cuda]").',
    "ring": 'Install an MLX build with distributed support (pip install mlx; on Linux "mlx[cpu]").',
}


def _fmt(v: tuple) -> str:
    return ".".join(map(str, v))


def known_bad(version: tuple, backend: str) -> List[dict]:
    """The known defects of MLX ``version`` that matter to ``backend`` ('' = any backend).

    Each is ``{"reason", "fixed_in" (str), "backends"}`` (``[""]``: every backend). An
    unreadable version (``()``) has none.
    """
    version = tuple(version)
    if not version:
        return []
    return [
        {"reason": reason, "fixed_in": _fmt(fixed), "backends": list(backends)}
        for lo, fixed, backends, reason in KNOWN_BAD
        if fixed is not None
        and lo <= version < fixed
        and (not backend or "" in backends or backend in backends)
    ]


def run(ctx: NodeContext):
    info = ctx.fact(gather_mlx)
    if info.get("cache_refused"):  # the build was inspected anyway; the state dir is the issue
        yield warn(
            "the MLX build cache was not used (MLX was inspected again): " + info["cache_refused"],
            evidence={"cache_refused": info["cache_refused"]},
            remediation="meshdoctor keeps its cache and fix receipts only in a state directory "
            "that is yours and writable by nobody else (MD700 says the same for fix).",
        )
    backend = ctx.hostfile.effective_backend if ctx.hostfile is not None else ""
    needs = core_backend(backend)
    unusable = list(_not_importable(ctx, info))
    if unusable:  # MLX could not be inspected or imported there: nothing more to judge
        yield from unusable
        return
    version = tuple(info.get("version_tuple", ()))
    avail = [b for b, v in (info.get("backends") or {}).items() if v]
    label = f"mlx {info.get('version')} ({', '.join(avail) or 'no distributed backend'})"
    # an unknown backend name is MD401's finding; every known one is checked here
    have = (info.get("backends") or {}).get(needs) if needs in MLX_BACKENDS else True
    if have is not True:  # every backend the hostfile names is checked the same way
        said = (
            "is not available in this build"
            if have is False
            else "could not be confirmed in this build (mx.distributed.is_available did not answer)"
        )
        yield fail(
            f"{label}: the hostfile's backend {backend} {said}",
            evidence=info,
            remediation=BACKEND_REMEDY.get(needs, "Install an MLX build with that backend."),
        )
        return
    bad = known_bad(version, backend)
    if bad:
        worst = max((b["fixed_in"] for b in bad), key=version_tuple)
        reasons = "; ".join(f"{b['reason']} (fixed in {b['fixed_in']})" for b in bad)
        yield warn(
            f"{label}: {reasons}",
            evidence=dict(info, known_bad=bad),
            remediation=f"Upgrade MLX to {worst} or later on every node: pip install -U mlx.",
        )
        return
    guard = info.get("jaccl_guard")
    if guard is False and backend in JACCL_BACKENDS:
        yield warn(
            f"{label}: JACCL has no progress guard, so survivors of a dead peer spin at "
            "100 % CPU forever",
            evidence=info,
            remediation="Gate runs with `meshdoctor probe` (its outer deadline catches "
            "the hang) and kill survivors; a build with the progress guard "
            "(JACCL_PROGRESS_TIMEOUT_MS) fails cleanly instead, but " + NO_RELEASED_GUARD + ".",
        )
        return
    extra = {True: ", JACCL progress guard present", False: ", no JACCL progress guard"}
    yield ok(label + extra.get(guard, ""), evidence=info)


def _not_importable(ctx: NodeContext, info: Dict[str, Any]):
    """The one result for an MLX that could not be judged in ``ctx.python`` (its import hung,
    timed out, crashed, the interpreter would not run, or MLX is not installed there), or
    nothing when it imported."""
    if info["probe"] == "timeout" and not info.get("hung"):  # slow is not hung: not assessed
        yield error(
            f"importing MLX in {ctx.python} did not finish in time (not assessed): "
            f"{info['detail']}",
            evidence=info,
            remediation=slow_not_hung("The MLX import"),
        )
        return
    if info["probe"] == "timeout":
        yield fail(
            f"importing MLX in {ctx.python} did not finish in time: {info['detail']}",
            evidence=info,
            remediation="A hung `import mlx.core` usually means the GPU or "
            "RDMA stack is wedged (look for rank processes in state U); kill leftover "
            "ranks, and reboot if it persists.",
        )
        return
    if info["probe"] == "crashed":
        yield fail(
            f"importing MLX in {ctx.python} crashed: {info['detail']}",
            evidence=info,
            remediation="Reinstall MLX in that environment: pip install --force-reinstall "
            'mlx (on Linux: "mlx[cpu]").',
        )
        return
    if info["probe"] == "unrunnable":
        yield fail(
            f"cannot run the Python that would run the ranks: {info['detail']}",
            evidence=info,
            remediation="Set MESHDOCTOR_PYTHON to the interpreter of the "
            "environment your ranks run in.",
        )
        return
    if not info.get("installed"):
        yield fail(
            f"MLX is not importable from {info.get('executable', ctx.python)}: "
            f"{info.get('import_error', '')}",
            evidence=info,
            remediation=Remediation(
                'pip install mlx (on Linux: pip install "mlx[cpu]") in the environment the '
                "ranks run in, or point MESHDOCTOR_PYTHON at it.",
                shell_line(
                    [
                        info.get("executable") or ctx.python,
                        "-m",
                        "pip",
                        "install",
                        "mlx" if ctx.platform == "darwin" else "mlx[cpu]",
                    ]
                ),
            ),
        )
        return


CHECK = Check(
    code="MD102",
    exports=(Export("mlx_version", "version"),),
    name="mlx.runtime",
    title="MLX runtime",
    run=run,
    doc=Doc(
        meaning="""
Imports MLX in a child process under a deadline (an import that hangs or crashes cannot take the
doctor with it), using the interpreter in MESHDOCTOR_PYTHON or meshdoctor's own. Reports the
version, which distributed backends are available (ring, jaccl, mpi, nccl), and for JACCL builds
whether the progress guard is compiled in (the JACCL_PROGRESS_TIMEOUT_MS string in the library).

Fails when MLX is missing, its import hangs (overruns a deadline of 20 s or more; a shorter
overrun leaves the node unassessed: error) or crashes, or the hostfile's backend is not in the
build. Warns on known-bad versions for the backend in use, with the version that fixed each,
and when a JACCL mesh runs without the progress guard. No released MLX has the progress guard
or peer liveness (0.32.4's libjaccl has neither; MLX PR #4530 is open): only forks carry it.

Known-bad, by MLX version: no JACCL before 0.30.1; MLX_IBV_DEVICES ignored in 0.30.3; no
jaccl-ring before 0.30.6; the local staging race before 0.32.0; an uninitialised GID
0.31.2-0.32.0; ring survivors hang after a peer dies, a JACCL data-path error aborts the
process, and a single ring transfer of 2 GiB or more fails with errno 22 (MLX PR #4281), all
before 0.32.1; jaccl-ring all_gather returns wrong data in 0.32.1-0.32.2 (MLX PR #4443, fixed in
0.32.3); a failed non-strict init is cached as a size-1 group (MLX PR #4558: in 0.32.4, unknown
whether 0.32.3 has it). Open upstream: from 0.32.2, JACCL completions are lost when NAX (M5) and
non-NAX ranks share a tensor-parallel group, and wired memory stays until reboot (MLX issue
#4403).
""",
        why="""
Every rank imports the same MLX: a missing backend fails the launch, and a known-bad version
fails in known ways (e.g. ring survivors hang forever after a peer dies before 0.32.1). Without
the progress guard a JACCL rank whose peer died spins forever.
""",
        action="""
Install or upgrade MLX to the same version on every node (pip install -U mlx; on Linux
"mlx[cpu]"); point MESHDOCTOR_PYTHON at the interpreter the ranks use.
""",
        sources=(
            "mlx #4060 (ring survivors hang, fixed in 0.32.1)",
            "MLX PR #4281 (ring transfers of 2 GiB or more, fixed in 0.32.1)",
            "MLX PR #4443 (jaccl-ring all_gather, fixed in 0.32.3)",
            "MLX PR #4558 (failed non-strict init cached)",
            "MLX issue #4403 (NAX and non-NAX ranks lose JACCL completions, open)",
            "MLX PR #4530 (JACCL peer liveness, open)",
            "MLX installation documentation (pip install mlx, mlx[cpu])",
            "JACCL progress guard PR (JACCL_PROGRESS_TIMEOUT_MS)",
        ),
    ),
)
