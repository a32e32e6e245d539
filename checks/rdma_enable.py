"""MD201 RDMA enablement: is RDMA switched on and does the verbs stack list devices?

macOS chain (JACCL dlopens librdma.dylib; Apple ships ibv_devices, ibv_devinfo and rdma_ctl): ``rdma_ctl status`` says ``enabled``
(enabling is only possible from Recovery) -> ``librdma.dylib`` loads (JACCL ``dlopen``s it; only
checkable on a real Mac) -> ``ibv_devices`` lists ``rdma_*`` devices (RDMA disabled = header only)
-> a Thunderbolt 5 link exists (TB5 = link above 40 Gb/s, Apple's and rdma-core's tool output). "Enabled but no
devices" is explained: Thunderbolt 4 hardware, or a macOS build that does not enumerate RDMA.

Linux: the verbs inventory (pyverbs, else ``ibv_devinfo``); no RDMA subsystem is a ``skip``, or a
``fail`` when the hostfile needs RDMA.

Severity: ``fail`` when the hostfile uses a JACCL backend; without a hostfile a Mac that cannot do
RDMA only ``warn``s (it may be meant for the ring backend); a wedged stack always fails.
"""

from __future__ import annotations

from typing import Any, Dict

from meshdoctor import verbs
from meshdoctor.check import Check, fail, ok, skip, warn
from meshdoctor.context import NodeContext
from meshdoctor.parsers.thunderbolt import is_tb5_speed
from meshdoctor.thunderbolt import gather_thunderbolt

ENABLE_REMEDY = ("Enable RDMA on this Mac from macOS Recovery: shut down, hold the power button "
                 "to reach Recovery, open Utilities > Terminal, run `rdma_ctl enable`, then "
                 "restart. It cannot be enabled from the running system. Every Mac of the mesh "
                 "needs it: a port stays PORT_DOWN until the Mac at the other end has it too.")
TB4_REMEDY = ("JACCL needs Thunderbolt 5 on both ends (macOS 26.2 or later). This Mac's ports are "
              "Thunderbolt 4 or older, so it cannot join a JACCL mesh: use the ring backend "
              "(TCP) for it, or a Mac with Thunderbolt 5.")
NO_ENUM_REMEDY = ("RDMA is enabled and the ports are Thunderbolt 5, yet no device is listed: "
                  "update macOS to 26.2 or later (26.3 for large buffers) and reboot; if it "
                  "persists, disable and re-enable RDMA from Recovery (`rdma_ctl disable`, "
                  "`rdma_ctl enable`) and reboot.")


def _device_summary(inv: verbs.Inventory) -> Dict[str, Any]:
    return {d.name: {"transport": d.transport,
                     "ports": {p.num: p.state or "unknown" for p in d.ports}}
            for d in inv.devices}


def _linux(ctx: NodeContext, inv: verbs.Inventory):
    names = inv.names
    return ok(f"{len(names)} RDMA device(s) via {inv.reader}: {', '.join(names)}",
              evidence={**inv.evidence(), "devices": _device_summary(inv)})


def _mac(ctx: NodeContext, role: str):
    chain: Dict[str, Any] = {}
    bad = fail if role == verbs.REQUIRED else warn
    ctl = ctx.fact(verbs.gather_rdma_ctl)
    chain["rdma_ctl"] = ctl
    chain["librdma"] = verbs.find_librdma()
    inv: verbs.Inventory = ctx.fact(verbs.gather_verbs)
    if inv.state == verbs.WEDGED:
        return verbs.wedged_finding(inv, "the RDMA devices")
    chain["ibv_devices"] = inv.listed if inv.listed is not None else inv.detail
    tb = ctx.fact(gather_thunderbolt)
    tb5 = tb.tb5_links()
    chain["thunderbolt5_links"] = [f"{ln.hardware_port} {ln.speed_text}" for ln in tb5]
    chain["thunderbolt"] = tb.sources
    ev = {**inv.evidence(), "chain": chain}
    if ctl["enabled"] is False:
        return bad("RDMA is disabled on this Mac (`rdma_ctl status`: disabled); JACCL cannot run",
                   evidence=ev, remediation=ENABLE_REMEDY)
    if inv.state == verbs.UNREADABLE:
        return verbs.error_finding(f"could not read the RDMA devices: {inv.detail}", ev)
    if inv.state == verbs.ABSENT:
        return bad("no RDMA tools on this Mac (ibv_devinfo not found on PATH): Apple ships them "
                   "with macOS 26.2 and later, the first with RDMA over Thunderbolt", evidence=ev,
                   remediation="Update macOS to 26.2 or later (26.3 for large buffers), then "
                               "enable RDMA from Recovery (`rdma_ctl enable`).")
    if chain["librdma"]["found"] is False:
        return bad(f"{verbs.LIBRDMA} cannot be found by dyld; JACCL cannot load it", evidence=ev,
                   remediation="Update macOS to 26.2 or later; librdma ships with the system.")
    state = "enabled" if ctl["enabled"] else f"status unknown ({ctl['detail']})"
    if inv.state in (verbs.NO_DEVICES, verbs.NO_RDMA):
        cap = tb.max_capability_gbps()
        if cap is not None and not is_tb5_speed(cap):
            return bad(f"RDMA {state} but no RDMA devices: this Mac's Thunderbolt ports are "
                       f"Thunderbolt 4 (up to {cap:g} Gb/s); RDMA needs Thunderbolt 5",
                       evidence=ev, remediation=TB4_REMEDY)
        if ctl["enabled"] is None:
            return bad(f"no RDMA devices (`ibv_devices` lists none) and `rdma_ctl status` could "
                       f"not be read ({ctl['detail']}): RDMA is probably disabled",
                       evidence=ev, remediation=ENABLE_REMEDY)
        return bad(f"RDMA {state} but no RDMA devices are listed although the Thunderbolt ports "
                   "are Thunderbolt 5: this macOS build does not enumerate RDMA devices",
                   evidence=ev, remediation=NO_ENUM_REMEDY)
    names = inv.names
    if not tb.readable:
        chain["thunderbolt5_links"] = "not assessed: the Thunderbolt links could not be read"
    elif not tb5:
        why = ("no Thunderbolt link is connected" if not tb.links else
               "no connected Thunderbolt link runs above 40 Gb/s (Thunderbolt 5)")
        return bad(f"RDMA {state}, {len(names)} device(s), but {why}", evidence=ev,
                   remediation="Cable this Mac to its peers with Thunderbolt 5 cables, port to "
                               "port (no hubs or docks).")
    links = (f"{len(tb5)} Thunderbolt 5 link(s)" if tb.readable
             else "Thunderbolt links not read")
    return ok(f"RDMA {state}: {len(names)} device(s) ({', '.join(names)}), {links}",
              evidence={**ev, "devices": _device_summary(inv)})


def run(ctx: NodeContext):
    role = verbs.rdma_role(ctx)
    if role == verbs.UNUSED:
        return skip(verbs.unused_skip_reason(ctx))
    if ctx.is_mac:
        return _mac(ctx, role)
    inv, finding = verbs.inventory_or_finding(ctx, "the RDMA devices")
    return finding if finding is not None else _linux(ctx, inv)


CHECK = Check(
    code="MD201", name="rdma.enable", title="RDMA enabled and devices listed", run=run,
    explain="""
Follows the chain that must hold before JACCL can open a device.

On macOS: `rdma_ctl status` says enabled; librdma.dylib is present (JACCL dlopens it); `ibv_devices`
lists rdma_* devices (when RDMA is disabled it prints only its header); and a Thunderbolt 5 link
(above 40 Gb/s) is connected. "Enabled but no devices" has two known causes, told apart here:
Thunderbolt 4 hardware (ports up to 40 Gb/s cannot do RDMA), or a macOS build that does not
enumerate RDMA devices. An `ibv_devinfo` that does not answer in time means the RDMA stack is
wedged (this follows JACCL errors): a critical finding that needs a reboot.

On Linux: the verbs devices read through pyverbs (python3-pyverbs) or `ibv_devinfo`. No RDMA
subsystem is reported as skip, unless the hostfile needs RDMA.

It fails when the hostfile uses jaccl or jaccl-ring; without a hostfile it only warns.

What to do: enable RDMA from macOS Recovery (Terminal: `rdma_ctl enable`, restart) on every Mac;
use Thunderbolt 5 Macs and cables; update macOS to 26.2 or later; reboot a wedged node (after JACCL
failures usually the whole fleet), then run `mlx.distributed_config --auto-setup` once.
""")
