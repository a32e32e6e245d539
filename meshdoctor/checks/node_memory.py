"""MD302 memory: total and available; wired memory on macOS; memlock on Linux.

Sources and thresholds:
* macOS ``vm_stat`` ("Pages wired down" x page size) and ``sysctl hw.memsize iogpu.wired_limit_mb``
  (0 = system default). Wired memory that stays high while no rank runs is held
  by a dead process and only a reboot frees it (users report about 140 GB left wired after a
  crash in Apple's Thunderbolt RDMA driver, ``tbt_post_recv``: MLX #4192, #4319). Before concluding that, the wired memory is attributed
  to live processes using MLX (ranks or not; :mod:`meshdoctor.facts.mlx_processes`, by pid and resident
  size): fail (reboot) only when what no live process explains is more than
  max(:data:`WIRED_IDLE_FLOOR_BYTES`, :data:`WIRED_IDLE_FRACTION` x RAM); a warning names the
  live processes otherwise.
* A wired limit that leaves less than :data:`OS_RESERVE_BYTES` to macOS starves the system.
* Linux: RDMA pins buffers, so the memlock limit (``RLIMIT_MEMLOCK``) should be unlimited when
  RDMA devices exist (rdma-core's guidance); ``Mlocked`` from /proc/meminfo is reported.
* Available memory below :data:`LOW_AVAILABLE_FRACTION` of RAM warns.
"""

from __future__ import annotations

import os
import resource

from meshdoctor.proctable import psutil

from meshdoctor.model import Export
from meshdoctor.checker.here import slow_not_hung
from meshdoctor.checker.model import Check, Doc, error, fail, ok, warn
from meshdoctor.facts.context import NodeContext, hang_proven
from meshdoctor.facts.mlx_build import gather_mlx
from meshdoctor.parsers.macos import parse_sysctl, parse_vm_stat, to_int, wired_bytes
from meshdoctor.facts.mlx_processes import find_mlx_processes, scope_pids

GiB = 1 << 30
MiB = 1 << 20
WIRED_IDLE_FLOOR_BYTES = 16 * GiB
WIRED_IDLE_FRACTION = 0.20
OS_RESERVE_BYTES = 8 * GiB
LOW_AVAILABLE_FRACTION = 0.10


def _gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"


def _mac(ctx: NodeContext, vm):  # vm: psutil.virtual_memory()
    found = []
    res = ctx.command("vm_stat")
    if res.timed_out and not hang_proven(res):  # slow is not hung: not assessed
        found.append(
            error(
                f"cannot read wired memory (not assessed): {res.describe()}",
                evidence={"vm_stat": res.describe()},
                remediation=slow_not_hung("`vm_stat`"),
            )
        )
        return found, {}
    if res.timed_out:
        found.append(
            fail(
                f"cannot read wired memory: {res.describe()}",
                evidence={"vm_stat": res.describe()},
                needs_reboot=True,
                remediation="`vm_stat` hanging means the kernel is wedged: reboot this node.",
            )
        )
        return found, {}
    if not res.ok:  # missing or failing tool: this node's memory is not assessed
        found.append(
            error(
                f"cannot read wired memory: {res.describe()}",
                evidence={"vm_stat": res.describe()},
                remediation="Run `vm_stat` by hand; it ships with macOS.",
            )
        )
        return found, {}
    wired = wired_bytes(parse_vm_stat(res.stdout))
    sc = ctx.command("sysctl", "hw.memsize", "iogpu.wired_limit_mb")
    sysctl = parse_sysctl(sc.stdout) if sc.ok else {}
    memsize = to_int(sysctl.get("hw.memsize")) or vm.total
    limit_mb = to_int(sysctl.get("iogpu.wired_limit_mb"))
    mlx = ctx.fact(gather_mlx)
    ev = {
        "wired_bytes": wired,
        "hw_memsize_bytes": memsize,
        "iogpu_wired_limit_mb": limit_mb,
        "max_recommended_working_set_size": mlx.get("max_recommended_working_set_size"),
    }
    if wired is None:
        found.append(warn("could not read 'Pages wired down' from vm_stat", evidence=ev))
        return found, ev
    idle_limit = max(WIRED_IDLE_FLOOR_BYTES, int(WIRED_IDLE_FRACTION * memsize))
    if wired > idle_limit:
        found.extend(_attribute(wired, idle_limit, ev))
    if limit_mb and memsize and limit_mb * MiB > memsize - OS_RESERVE_BYTES:
        found.append(
            warn(
                f"iogpu.wired_limit_mb={limit_mb} leaves less than {_gib(OS_RESERVE_BYTES)} of "
                f"{_gib(memsize)} to macOS",
                evidence=ev,
                remediation=f"sudo sysctl iogpu.wired_limit_mb={(memsize - OS_RESERVE_BYTES) // MiB}"
                " (or 0 for the default).",
            )
        )
    return found, ev


def _attribute(wired: int, idle_limit: int, ev: dict) -> list:
    """Who holds ``wired`` bytes (above ``idle_limit``): live MLX processes first (ranks or not,
    by pid and resident size); while one lives, what their resident size does not explain may
    still be theirs (GPU-wired buffers): stop and measure again; with none while processes of
    other users could not be inspected, not proven (one may be a live server); with none at
    all, a dead one holds it."""
    scope = scope_pids()
    unreadable: list = []
    live = find_mlx_processes(scope, unreadable)
    explained = sum(p.rss_bytes for p in live)
    unexplained = wired - explained
    ev.update(
        mlx_processes=[p.to_dict() for p in live],
        explained_bytes=explained,
        unexplained_bytes=max(0, unexplained),
        idle_limit_bytes=idle_limit,
        ranks_running=[p.pid for p in live if p.rank is not None],
        attribution_scope=(sorted(scope) if scope is not None else "every process"),
        uninspected_pids=unreadable[:50],
    )
    names = "; ".join(p.label() for p in live[:5]) + (
        f"; {len(live) - 5} more" if len(live) > 5 else ""
    )
    if unexplained > idle_limit and live:  # resident size need not count GPU-wired buffers
        return [
            warn(
                f"{_gib(wired)} wired; live MLX processes explain at most {_gib(explained)} "
                f"by resident size ({names}), which need not include the GPU buffers they "
                f"wired: not proven to be a dead process",
                evidence=ev,
                remediation="Stop those processes (an `mlx_lm.server`, another job; MD301 "
                "lists stale ranks among them) and run `meshdoctor check --only MD302` again: "
                "memory that stays wired with no MLX process left is held by a dead one and "
                "only a reboot of this node releases it.",
            )
        ]
    if unexplained > idle_limit and unreadable and not live:
        # another user's process (a server under launchd) may be the live holder: unproven
        return [
            warn(
                f"{_gib(wired)} wired and no process this check could inspect uses MLX, but "
                f"{len(unreadable)} process(es) of other users could not be inspected: not "
                "proven to be a dead process",
                evidence=ev,
                remediation="Run the check as root (`sudo meshdoctor check --only MD302`) so "
                "every process is inspected (a single-node MLX server of another user may "
                "hold it); memory that stays wired with no MLX process left is held by a dead "
                "one and only a reboot of this node releases it.",
            )
        ]
    if unexplained > idle_limit:  # every process inspected, none uses MLX
        held = "no live process uses MLX"
        return [
            fail(
                f"{_gib(wired)} wired and {held} (more than {_gib(idle_limit)}): a dead "
                "process holds it",
                evidence=ev,
                needs_reboot=True,
                remediation="Wired memory left by a crashed rank (for example after a "
                "tbt_post_recv crash in Apple's Thunderbolt RDMA driver, MLX #4192, #4319) "
                "is only released by a reboot of this node.",
            )
        ]
    return [
        warn(
            f"{_gib(wired)} wired, held by live MLX process(es): {names}; not a leak, no "
            "reboot needed",
            evidence=ev,
            remediation="Stop those processes (an `mlx_lm.server` or another job) if the "
            "launch needs their memory; MD301 lists stale ranks among them.",
        )
    ]


def _linux(ctx: NodeContext):
    found = []
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    ev = {
        "memlock_soft_bytes": None if soft == resource.RLIM_INFINITY else soft,
        "memlock_hard_bytes": None if hard == resource.RLIM_INFINITY else hard,
    }
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("Mlocked:"):
                    ev["mlocked_bytes"] = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    rdma = os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))
    ev["rdma_devices_present"] = rdma
    if rdma and soft != resource.RLIM_INFINITY:
        found.append(
            warn(
                f"memlock limit is {soft // 1024} KiB with RDMA devices present: memory "
                "registration pins buffers and fails past it",
                evidence=ev,
                remediation="Raise it for the user that runs the ranks: `ulimit -l unlimited` in "
                "the launching shell, or `<user> - memlock unlimited` in /etc/security/limits.conf "
                "(LimitMEMLOCK=infinity for a systemd service).",
            )
        )
    return found, ev


def run(ctx: NodeContext):
    vm = psutil.virtual_memory()
    base = {"total_bytes": vm.total, "available_bytes": vm.available}
    found, ev = _mac(ctx, vm) if ctx.is_mac else _linux(ctx)
    ev = dict(base, **ev)
    for f in found:
        f.evidence = dict(ev, **f.evidence)
    if vm.available < LOW_AVAILABLE_FRACTION * vm.total:
        found.append(
            warn(
                f"only {_gib(vm.available)} of {_gib(vm.total)} available",
                evidence=ev,
                remediation="Stop what holds memory before a launch.",
            )
        )
    if found:
        return found
    summary = f"{_gib(vm.available)} of {_gib(vm.total)} available"
    if ev.get("wired_bytes") is not None:
        summary += f", {_gib(ev['wired_bytes'])} wired"
    return ok(summary, evidence=ev)


CHECK = Check(
    code="MD302",
    exports=(Export("wired_bytes", "wired_bytes"),),
    name="node.memory",
    title="Memory",
    run=run,
    doc=Doc(
        meaning="""
Reports total and available memory. On macOS it reads wired memory (vm_stat), the GPU wired
limit (sysctl iogpu.wired_limit_mb, 0 = default) against the RAM (hw.memsize) and MLX's
recommended working set. On Linux it reads the memlock limit and locked memory.

When more than max(16 GiB, 20 % of RAM) is wired, it is first attributed to live processes
that use MLX (ranks or not, such as a single-node mlx_lm.server; named with pid and resident
size): if they explain it, it warns (not a leak, no reboot). While any live MLX process exists
it only warns, since a resident size need not include the GPU buffers it wired: stop it and
measure again. A process uses MLX when it maps libmlx, or, when its map cannot be read, when its
command line names an MLX program (any word with "mlx": mlx_lm, vllm-mlx, omlx; or exo). It
fails (and lists the node in needs_reboot) only when more than that threshold is wired and no
live process uses MLX, every process inspected; when processes of other users could not be
inspected it warns (not proven: run it as root). MESHDOCTOR_ATTRIBUTE_PIDS=pid,... limits the attribution
to those process trees. Fails when vm_stat overruns a deadline long enough to prove a hang (a
wedged kernel); a shorter overrun, or a vm_stat that is missing or fails, leaves the node
unassessed (error). Warns when the wired limit leaves macOS less than 8 GiB, when the
memlock limit is not unlimited with RDMA devices present, and when less than 10 % of RAM is
available.
""",
        why="""
A crashed rank's wired memory is only released by a reboot (seen at 140 GB after a
tbt_post_recv crash): the next launch then runs out of memory. RDMA registers memory, which a
limited memlock refuses.
""",
        action="""
Reboot a node whose wired memory no live process explains; stop the live MLX processes named if
the launch needs their memory; raise the memlock limit to unlimited for RDMA; set
iogpu.wired_limit_mb to leave the OS room.
""",
        sources=(
            "mlx #4192, #4319 (tbt_post_recv crash, wired memory held)",
            "MLX mx.metal.device_info() recommendedMaxWorkingSetSize",
            "vm_stat(1), sysctl(8) on macOS",
        ),
    ),
)
