"""MD206 auto-setup and this boot: was this Mac configured by ``mlx.distributed_config
--auto-setup`` in the boot it runs now, or booted since?

The settings auto-setup makes (bridge0 down, one IPv4 /30 per cable) do not survive a reboot on
purpose (MLX PR #1902). ``meshdoctor fix auto-setup`` records, on each host it configures, the
host's boot time and the outcome (:data:`meshdoctor.receipts.HOST_SETUP`, in that host's own state
directory, so a second operator's meshdoctor sees it too). This check compares the newest such
record with the boot time now (:mod:`meshdoctor.facts.boottime`).
"""

from __future__ import annotations

import datetime as _dt

from meshdoctor.checker.model import Check, Doc, ok, skip, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.mlx.backends import JACCL_BACKENDS

SAME_BOOT_S = 2.0  # boot times read twice on one boot differ by less than this
REMEDY = (
    "Run `meshdoctor fix auto-setup --hostfile HOSTFILE` once for the whole fleet (it runs "
    "mlx.distributed_config --auto-setup on every host after a full-fleet reboot)."
)


def _iso(epoch: float) -> str:
    return _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc).isoformat(timespec="seconds")


def _boot(ctx: NodeContext) -> float:
    from meshdoctor.facts.boottime import KERN_BOOTTIME, BootTimeError, parse_kern_boottime

    if ctx.is_mac:
        r = ctx.command(*KERN_BOOTTIME)
        if not r.ok:
            raise BootTimeError(r.describe())
        return parse_kern_boottime(r.stdout)
    from meshdoctor.proctable import psutil

    return float(psutil.boot_time())


def run(ctx: NodeContext):
    from meshdoctor import receipts
    from meshdoctor.facts.boottime import BootTimeError

    if not (receipts.state_path() / "receipts").is_dir():  # never made here: nothing recorded
        last = None
    else:
        try:
            last = receipts.latest(receipts.HOST_SETUP)
        except receipts.StateDirError as exc:
            return warn(f"cannot read this host's auto-setup record: {exc}")
    if last is None:
        return skip("no auto-setup recorded on this host (meshdoctor fix auto-setup records one)")
    try:
        now = _boot(ctx)
    except BootTimeError as exc:
        return warn(f"cannot read this host's boot time: {exc}")
    when = str(last.get("started_at") or "?")
    by = f" by {last['by']}" if last.get("by") else ""
    then = last.get("boot_time")
    ev = {
        "boot_time": now,
        "booted_at": _iso(now),
        "receipt": last.get("path"),
        "receipt_boot_time": then,
        "outcome": last.get("outcome"),
        "configured": last.get("configured"),
    }
    same = then is not None and abs(float(then) - now) < SAME_BOOT_S
    uses_it = ctx.hostfile is None or ctx.hostfile.effective_backend in JACCL_BACKENDS
    if same and last.get("configured"):
        return ok(f"configured by auto-setup in this boot ({when}{by})", evidence=ev)
    if same:
        return warn(
            f"the auto-setup of {when}{by} in this boot left this host unconfigured "
            f"({last.get('outcome')}); a failed or partial run is repaired by a full-fleet "
            "reboot, then one auto-setup",
            evidence=ev,
            remediation=REMEDY,
        )
    summary = (
        f"booted since the last auto-setup ({when}{by}; booted {_iso(now)}): the settings it "
        "made do not survive a reboot (MLX PR #1902)"
    )
    if not uses_it:
        return ok(summary + "; not needed for this hostfile's backend", evidence=ev)
    return warn(summary, evidence=ev, remediation=REMEDY)


CHECK = Check(
    code="MD206",
    name="thunderbolt.setup_boot",
    title="Auto-setup in this boot",
    run=run,
    platforms=("darwin",),
    doc=Doc(
        meaning="""
Tells a Mac configured by `mlx.distributed_config --auto-setup` in the boot it runs now apart
from one booted since: `meshdoctor fix auto-setup` records on each host (in that host's state
directory) its boot time and whether it was configured; this check compares the newest record
with `sysctl -n kern.boottime`. Configured in this boot is ok; booted since warns (for a JACCL
hostfile, or without one); a run in this boot that left the host unconfigured warns.
""",
        why="""
The settings auto-setup makes (bridge0 down, IPv4 per cable) are not persistent across reboots on
purpose (MLX PR #1902): after a reboot the RDMA ports publish only fe80:: GIDs again, and JACCL
cannot connect. Recorded on the host, the answer is the same whoever runs the check.
""",
        action="""
After a full-fleet reboot, run `meshdoctor fix auto-setup --hostfile HOSTFILE` once.
""",
        sources=("MLX PR #1902 (auto-setup settings not persistent across reboots)",),
    ),
)
