"""MD302 memory: total and available; wired memory on macOS; memlock on Linux.

Sources and thresholds:
* macOS ``vm_stat`` ("Pages wired down" x page size) and ``sysctl hw.memsize iogpu.wired_limit_mb``
  (Apple's and rdma-core's tool output; 0 = system default). Wired memory that stays high while no rank runs is held
  by a dead process and only a reboot frees it: MLX #4192, #4319 ("after the crash
  the node keeps about 140 GB wired"). Threshold: more than
  max(:data:`WIRED_IDLE_FLOOR_BYTES`, :data:`WIRED_IDLE_FRACTION` x RAM) wired with no rank running.
* A wired limit that leaves less than :data:`OS_RESERVE_BYTES` to macOS starves the system.
* Linux: RDMA pins buffers, so the memlock limit (``RLIMIT_MEMLOCK``) should be unlimited when
  RDMA devices exist (rdma-core's guidance); ``Mlocked`` from /proc/meminfo is reported.
* Available memory below :data:`LOW_AVAILABLE_FRACTION` of RAM warns.
"""

from __future__ import annotations

import os
import resource

import psutil

from meshdoctor.check import Check, error, fail, ok, warn
from meshdoctor.context import NodeContext
from meshdoctor.mlxinfo import gather_mlx
from meshdoctor.parsers.macos import parse_sysctl, parse_vm_stat, to_int, wired_bytes
from meshdoctor.ranks import find_ranks

GiB = 1 << 30
MiB = 1 << 20
WIRED_IDLE_FLOOR_BYTES = 16 * GiB
WIRED_IDLE_FRACTION = 0.20
OS_RESERVE_BYTES = 8 * GiB
LOW_AVAILABLE_FRACTION = 0.10


def _gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"


def _mac(ctx: NodeContext, vm: psutil._common.svmem):
    found = []
    res = ctx.command("vm_stat")
    if res.timed_out:
        found.append(fail(f"cannot read wired memory: {res.describe()}",
                          evidence={"vm_stat": res.describe()}, needs_reboot=True,
                          remediation="`vm_stat` hanging means the kernel is wedged: reboot "
                          "this node."))
        return found, {}
    if not res.ok:  # missing or failing tool: this node's memory is not assessed
        found.append(error(f"cannot read wired memory: {res.describe()}",
                             evidence={"vm_stat": res.describe()},
                             remediation="Run `vm_stat` by hand; it ships with macOS."))
        return found, {}
    wired = wired_bytes(parse_vm_stat(res.stdout))
    sc = ctx.command("sysctl", "hw.memsize", "iogpu.wired_limit_mb")
    sysctl = parse_sysctl(sc.stdout) if sc.ok else {}
    memsize = to_int(sysctl.get("hw.memsize")) or vm.total
    limit_mb = to_int(sysctl.get("iogpu.wired_limit_mb"))
    mlx = ctx.fact(gather_mlx)
    ev = {"wired_bytes": wired, "hw_memsize_bytes": memsize, "iogpu_wired_limit_mb": limit_mb,
          "max_recommended_working_set_size": mlx.get("max_recommended_working_set_size")}
    if wired is None:
        found.append(warn("could not read 'Pages wired down' from vm_stat", evidence=ev))
        return found, ev
    idle_limit = max(WIRED_IDLE_FLOOR_BYTES, int(WIRED_IDLE_FRACTION * memsize))
    if wired > idle_limit:
        ranks = find_ranks(skip_descendants=True)
        ev["ranks_running"] = [r.pid for r in ranks]
        if not ranks:
            found.append(fail(
                f"{_gib(wired)} wired with no MLX rank running (more than {_gib(idle_limit)}): "
                "a dead process holds it", evidence=ev, needs_reboot=True,
                remediation="Wired memory left by a crashed rank is only released by a reboot "
                "of this node."))
    if limit_mb and memsize and limit_mb * MiB > memsize - OS_RESERVE_BYTES:
        found.append(warn(
            f"iogpu.wired_limit_mb={limit_mb} leaves less than {_gib(OS_RESERVE_BYTES)} of "
            f"{_gib(memsize)} to macOS", evidence=ev,
            remediation=f"sudo sysctl iogpu.wired_limit_mb={(memsize - OS_RESERVE_BYTES) // MiB}"
            " (or 0 for the default)."))
    return found, ev


def _linux(ctx: NodeContext):
    found = []
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    ev = {"memlock_soft_bytes": None if soft == resource.RLIM_INFINITY else soft,
          "memlock_hard_bytes": None if hard == resource.RLIM_INFINITY else hard}
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
        found.append(warn(
            f"memlock limit is {soft // 1024} KiB with RDMA devices present: memory "
            "registration pins buffers and fails past it", evidence=ev,
            remediation="Raise it for the user that runs the ranks: `ulimit -l unlimited` in "
            "the launching shell, or `<user> - memlock unlimited` in /etc/security/limits.conf "
            "(LimitMEMLOCK=infinity for a systemd service)."))
    return found, ev


def run(ctx: NodeContext):
    vm = psutil.virtual_memory()
    base = {"total_bytes": vm.total, "available_bytes": vm.available}
    found, ev = _mac(ctx, vm) if ctx.is_mac else _linux(ctx)
    ev = dict(base, **ev)
    for f in found:
        f.evidence = dict(ev, **f.evidence)
    if vm.available < LOW_AVAILABLE_FRACTION * vm.total:
        found.append(warn(f"only {_gib(vm.available)} of {_gib(vm.total)} available",
                          evidence=ev, remediation="Stop what holds memory before a launch."))
    if found:
        return found
    summary = f"{_gib(vm.available)} of {_gib(vm.total)} available"
    if ev.get("wired_bytes") is not None:
        summary += f", {_gib(ev['wired_bytes'])} wired"
    return ok(summary, evidence=ev)


CHECK = Check(
    code="MD302", name="mem.memory", title="Memory", run=run,
    explain="""
Reports total and available memory. On macOS it reads wired memory (vm_stat), the GPU wired
limit (sysctl iogpu.wired_limit_mb, 0 = default) against the RAM (hw.memsize) and MLX's
recommended working set. On Linux it reads the memlock limit and locked memory.

Fails (and lists the node in needs_reboot) when more than max(16 GiB, 20 % of RAM) is wired while
no MLX rank runs: a crashed rank's wired memory is only released by a reboot (seen at 140 GB after
a tbt_post_recv crash). Fails when vm_stat does not answer in time (a wedged kernel); a vm_stat
that is missing or fails leaves the node unassessed (error). Warns when the wired limit
leaves macOS less than 8 GiB, when the memlock limit is not unlimited with RDMA devices present,
and when less than 10 % of RAM is available.

What to do: reboot a node holding wired memory with no ranks; raise the memlock limit to
unlimited for RDMA; set iogpu.wired_limit_mb to leave the OS room.
""")
