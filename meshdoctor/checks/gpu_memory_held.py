"""MD112 GPU memory held: memory on each GPU held by processes that are not ranks of a running
job, the GPU analogue of leftover wired memory on a Mac.

Each compute process NVML lists on a GPU (nvmlDeviceGetComputeRunningProcesses) is matched to
this host's processes: a rank of a running job is fine; an orphaned rank (its launcher gone) or
any other process holds memory the next launch needs and is named with its pid; a pid that no
longer exists while the driver still charges memory to it means the GPU needs a reset
(``nvidia-smi --gpu-reset``, nvidia-smi manual). Inside a container NVML lists host pids, which
this container may not see: those are reported as unknown, not as gone.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from meshdoctor.proctable import psutil

from meshdoctor.checker.model import Check, Doc, Finding, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.model import Remediation
from meshdoctor.checks._gpu import gpus_or_finding
from meshdoctor.ranks import find_ranks
from meshdoctor.text import shell_line

INIT_PID_NS = 0xEFFFFFFC  # PROC_PID_INIT_INO, Linux include/linux/proc_ns.h
UNLISTED_BYTES = 1 << 30  # memory used with no process listed that is worth a warning
MIB = 1 << 20


def in_init_pid_namespace() -> Optional[bool]:
    """True in the host's own pid namespace, False in a container's, None if unknown."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino == INIT_PID_NS
    except OSError:
        return None


def _mib(b: Optional[int]) -> str:
    return "? MiB" if b is None else f"{b / MIB:.0f} MiB"


def _process(gi: Any, p: Dict[str, Any], ranks: Dict[int, Any], host_ns: bool):
    """The finding for one process NVML lists on GPU ``gi`` (``p``: pid, used_bytes), None
    for a rank of a running job: gone but still charged, an orphaned rank, or a process that is
    no rank. ``ranks``: the rank processes by pid; ``host_ns``: in the host's pid namespace."""
    out: List[Finding] = []
    pid, used = p["pid"], p.get("used_bytes")
    where = f"GPU {gi}: pid {pid}"
    try:
        proc = psutil.Process(pid)
        name = proc.name()
    except psutil.NoSuchProcess:
        ev = {"gpu": gi, "pid": pid, "used_bytes": used, "needs_reset": bool(host_ns)}
        if host_ns:
            out.append(
                fail(
                    f"{where} holds {_mib(used)} but that process is gone: the "
                    "driver still charges the memory to it",
                    evidence=ev,
                    remediation=Remediation(
                        "Reset the GPU once nothing else uses it (if the reset "
                        "is refused, reboot the host).",
                        shell_line(["sudo", "nvidia-smi", "--gpu-reset", "-i", gi]),
                    ),
                )
            )
        else:
            out.append(
                warn(
                    f"{where} holds {_mib(used)}; it is not visible from this "
                    "container (another container's, or gone)",
                    evidence=ev,
                    remediation="Look at `nvidia-smi` on the host itself.",
                )
            )
        return out[0]
    except psutil.Error as exc:
        name = f"? ({type(exc).__name__})"
    rank = ranks.get(pid)
    ev = {"gpu": gi, "pid": pid, "name": name, "used_bytes": used}
    if rank is not None and not rank.orphaned:
        return None  # a rank of a running job: its memory is in use, not leftover
    if rank is not None:
        out.append(
            fail(
                f"{where} ({name}, orphaned rank {rank.rank}) holds {_mib(used)}"
                " after its launcher is gone",
                evidence=dict(ev, rank=rank.rank),
                remediation=Remediation(
                    "Stop the leftover rank; its GPU memory is freed when it exits.",
                    "meshdoctor fix stale-ranks --yes",
                ),
            )
        )
    else:
        out.append(
            warn(
                f"{where} ({name}) holds {_mib(used)} and is not a rank of a running MLX job",
                evidence=ev,
                remediation=Remediation(
                    f"Stop it if it is not meant to share GPU {gi} with the "
                    "ranks (it takes memory, and NVLink and SM time, from "
                    "them).",
                    shell_line(["kill", pid]),
                ),
            )
        )
    return out[0]


def run(ctx: NodeContext):
    snap, unusable = gpus_or_finding(ctx)
    if unusable is not None:
        return unusable
    ranks: Dict[int, object] = {r.pid: r for r in find_ranks(skip_descendants=True)}
    host_ns = in_init_pid_namespace()
    out = []
    held = 0
    for g in snap["gpus"]:
        if "unreadable" in g:
            continue
        gi = g["index"]
        for p in g.get("processes", []):
            f = _process(gi, p, ranks, host_ns)
            if f is not None:
                held += 1
                out.append(f)
        used_total = (g.get("memory") or {}).get("used") or 0
        if not g.get("processes") and used_total >= UNLISTED_BYTES:
            held += 1
            out.append(
                warn(
                    f"GPU {gi}: {_mib(used_total)} used but NVML lists no process "
                    "(a process of another container, or memory a gone process left)",
                    evidence={"gpu": gi, "memory": g.get("memory")},
                    remediation="Check `nvidia-smi` on the host; if nothing runs, reset the "
                    f"GPU ({shell_line(['sudo', 'nvidia-smi', '--gpu-reset', '-i', gi])}).",
                )
            )
    if not held:
        per = ", ".join(
            f"GPU {g['index']} {_mib((g.get('memory') or {}).get('used'))}"
            for g in snap["gpus"]
            if "unreadable" not in g
        )
        return ok(
            f"no GPU memory held outside running jobs ({per})",
            evidence={
                "gpus": [
                    {
                        "index": g["index"],
                        "memory": g.get("memory"),
                        "processes": g.get("processes"),
                    }
                    for g in snap["gpus"]
                ]
            },
        )
    return out


CHECK = Check(
    code="MD112",
    name="gpu.memory_held",
    title="GPU memory held outside running jobs",
    run=run,
    platforms=("linux",),
    doc=Doc(
        meaning="""
Lists the compute processes NVML sees on each GPU and matches them to this host's processes.
Memory held by an orphaned MLX rank fails; memory held by any other process that is not a rank
of a running job warns with its name and pid; memory charged to a process that no longer exists
fails. Inside a container, pids the container cannot see are reported as unknown rather than
gone. Skipped without an NVIDIA driver.
""",
        why="""
An orphaned rank (its launcher gone) or any other process holds GPU memory the next launch
needs, the GPU analogue of leftover wired memory on a Mac; memory the driver still charges to a
process that no longer exists is only released by a GPU reset.
""",
        action="""
Stop an orphaned rank: meshdoctor fix stale-ranks --yes. For memory charged to a process that
no longer exists, reset the GPU (sudo nvidia-smi --gpu-reset -i N, a reboot if that is
refused).
""",
        sources=(
            "NVIDIA NVML API reference (nvmlDeviceGetComputeRunningProcesses)",
            "nvidia-smi manual (--gpu-reset)",
        ),
    ),
)
