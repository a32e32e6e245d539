"""MD201 RDMA enablement: is RDMA switched on and does the verbs stack list devices?

macOS chain: ``rdma_ctl status`` says ``enabled``
(enabling is only possible from Recovery) -> ``librdma.dylib`` loads (JACCL ``dlopen``s it; only
checkable on a real Mac) -> ``ibv_devices`` lists ``rdma_*`` devices (RDMA disabled = header only)
-> a Thunderbolt 5 link exists (TB5 = link above 40 Gb/s). Hardware capability is checked before
any of these: a Mac with no Thunderbolt 5 receptacle (every port "Up to 40 Gb/s") can never do
RDMA, so it is never told to enable RDMA in Recovery (both public variants: ``ibv_devices``
empty, and ``rdma_enX`` listed but never usable); its advice is the ring backend.

Linux: the verbs inventory (pyverbs, else ``ibv_devinfo``); no RDMA subsystem is a ``skip``, or a
``fail`` when the hostfile needs RDMA.

Severity: ``fail`` when the hostfile uses a JACCL backend; without a hostfile a Mac that cannot do
RDMA only ``warn``s (it may be meant for the ring backend); a wedged stack always fails.
"""

from __future__ import annotations

from typing import Any, Dict

from meshdoctor.checks import _rdma
from meshdoctor.facts import verbs
from meshdoctor.checker.model import Check, Doc, fail, ok, skip, warn
from meshdoctor.facts.context import NodeContext

ENABLE_REMEDY = (
    "Enable RDMA on this Mac from macOS Recovery: shut down, hold the power button "
    "to reach Recovery, open Utilities > Terminal, run `rdma_ctl enable`, then "
    "restart. It cannot be enabled from the running system. Every Mac of the mesh "
    "needs it: a port stays PORT_DOWN until the Mac at the other end has it too."
)
TB4_REMEDY = (
    "RDMA over Thunderbolt needs Thunderbolt 5 ports (MLX's JACCL backend: Thunderbolt 5 "
    "and macOS 26.2 or later). This Mac's ports are Thunderbolt 4, which no setting, "
    "cable or `rdma_ctl enable` in Recovery changes: run the job with the ring "
    "backend over the Thunderbolt network instead (give each Thunderbolt interface an "
    "IPv4 address, e.g. `mlx.distributed_config --backend ring --over thunderbolt "
    '--auto-setup`, and launch with `"backend": "ring"` and those IPs), or use a '
    "Mac with Thunderbolt 5 ports."
)
UNSURE_PREFIX = (
    "First make sure this Mac has Thunderbolt 5 ports (unplug one cable: a free "
    "Thunderbolt 5 port shows 'Up to 120 Gb/s' in System Information > "
    "Thunderbolt/USB4); a Thunderbolt 4 Mac can never do RDMA: use the ring "
    "backend over the Thunderbolt network. On Thunderbolt 5: "
)
NO_ENUM_REMEDY = (
    "RDMA is enabled and the ports are Thunderbolt 5, yet no device is listed: "
    "update macOS to 26.2 or later (26.3 for large buffers) and reboot; if it "
    "persists, disable and re-enable RDMA from Recovery (`rdma_ctl disable`, "
    "`rdma_ctl enable`) and reboot."
)


def _device_summary(inv: verbs.Inventory) -> Dict[str, Any]:
    return {
        d.name: {"transport": d.transport, "ports": {p.num: p.state_name for p in d.ports}}
        for d in inv.devices
    }


def _tb4_summary(ctl: Dict[str, Any], inv: verbs.Inventory, hw: Dict[str, Any]) -> str:
    """The MD201 summary for Thunderbolt 4 hardware, in each of its public variants: RDMA
    disabled, enabled with no device listed, or ``rdma_enX`` devices listed that never work."""
    head = f"this Mac has Thunderbolt 4 hardware ({hw['why']}): it can never do RDMA"
    if ctl["enabled"] is False:
        return (
            f"{head}; RDMA is disabled (`rdma_ctl status`), and enabling it from Recovery "
            "would not help"
        )
    if inv.state == verbs.OK and inv.names:
        # the states the ports that are not active read (PORT_INIT is not PORT_DOWN): one for
        # all of them, else each device's
        idle = [d for d in inv.devices if d.ports and not any(p.active for p in d.ports)]
        states = {d.name: "/".join(dict.fromkeys(p.state_name for p in d.ports)) for d in idle}
        if len(set(states.values())) == 1:
            tail = f" (ports {next(iter(states.values()))})"
        else:
            tail = " (" + ", ".join(f"{n} {st}" for n, st in states.items()) + ")" if states else ""
        return (
            f"{head}; `ibv_devices` lists {', '.join(inv.names)}, but they are never usable "
            f"on Thunderbolt 4{tail}"
        )
    return f"{head}; no RDMA device is listed, as expected on Thunderbolt 4"


def _linux(ctx: NodeContext, inv: verbs.Inventory):
    names = inv.names
    return ok(
        f"{len(names)} RDMA device(s) via {inv.reader}: {', '.join(names)}",
        evidence={**inv.evidence(), "devices": _device_summary(inv)},
    )


def _mac(ctx: NodeContext, role: str):
    chain: Dict[str, Any] = {}
    bad = fail if role == verbs.REQUIRED else warn
    ctl = ctx.fact(verbs.gather_rdma_ctl)
    chain["rdma_ctl"] = ctl
    chain["librdma"] = verbs.find_librdma()
    inv: verbs.Inventory = ctx.fact(verbs.gather_verbs)
    if inv.state == verbs.WEDGED:
        return _rdma.wedged_finding(inv, "the RDMA devices")
    chain["ibv_devices"] = inv.listed if inv.listed is not None else inv.detail
    from meshdoctor.facts.thunderbolt import gather_thunderbolt  # macOS tools: loaded when asked

    tb = ctx.fact(gather_thunderbolt)
    tb5 = tb.tb5_links()
    chain["thunderbolt5_links"] = [f"{ln.hardware_port} {ln.speed_text}" for ln in tb5]
    chain["thunderbolt"] = tb.sources
    hw = (
        tb.hardware()
        if tb.readable
        else {"generation": "unknown", "why": "the Thunderbolt ports could not be read"}
    )
    chain["thunderbolt_hardware"] = hw
    ev = {**inv.evidence(), "chain": chain}
    if hw["generation"] == "tb4":  # capability before configuration
        return bad(_tb4_summary(ctl, inv, hw), evidence=ev, remediation=TB4_REMEDY)
    unsure = hw["generation"] != "tb5"  # no port shows Thunderbolt 5 (nor Thunderbolt 4)
    if ctl["enabled"] is False:
        return bad(
            "RDMA is disabled on this Mac (`rdma_ctl status`: disabled); JACCL cannot run"
            + (
                f"; whether its ports are Thunderbolt 5 is not visible ({hw['why']})"
                if unsure
                else ""
            ),
            evidence=ev,
            remediation=(UNSURE_PREFIX + ENABLE_REMEDY) if unsure else ENABLE_REMEDY,
        )
    if inv.state == verbs.UNREADABLE:
        return _rdma.error_finding(f"could not read the RDMA devices: {inv.detail}", ev)
    if inv.state == verbs.ABSENT:
        return bad(
            "no RDMA tools on this Mac (ibv_devinfo not found on PATH): Apple ships them "
            "with macOS 26.2 and later, the first with RDMA over Thunderbolt",
            evidence=ev,
            remediation="Update macOS to 26.2 or later (26.3 for large buffers), then "
            "enable RDMA from Recovery (`rdma_ctl enable`).",
        )
    if chain["librdma"]["found"] is False:
        return bad(
            f"{verbs.LIBRDMA} cannot be found by dyld; JACCL cannot load it",
            evidence=ev,
            remediation="Update macOS to 26.2 or later; librdma ships with the system.",
        )
    state = "enabled" if ctl["enabled"] else f"status unknown ({ctl['detail']})"
    if inv.state in (verbs.NO_DEVICES, verbs.NO_RDMA):
        if ctl["enabled"] is None:
            return bad(
                f"no RDMA devices (`ibv_devices` lists none) and `rdma_ctl status` could "
                f"not be read ({ctl['detail']}): RDMA is probably disabled",
                evidence=ev,
                remediation=ENABLE_REMEDY,
            )
        if unsure:
            return bad(
                f"RDMA {state} but no RDMA devices are listed, and whether the ports are "
                f"Thunderbolt 5 is not visible ({hw['why']}): a Thunderbolt 4 Mac never "
                "lists RDMA devices; on Thunderbolt 5 this macOS build does not "
                "enumerate them",
                evidence=ev,
                remediation=UNSURE_PREFIX + NO_ENUM_REMEDY,
            )
        return bad(
            f"RDMA {state} but no RDMA devices are listed although the Thunderbolt ports "
            "are Thunderbolt 5: this macOS build does not enumerate RDMA devices",
            evidence=ev,
            remediation=NO_ENUM_REMEDY,
        )
    names = inv.names
    if not tb.readable:
        chain["thunderbolt5_links"] = "not assessed: the Thunderbolt links could not be read"
    elif not tb5:
        why = (
            "no Thunderbolt link is connected"
            if not tb.links
            else "no connected Thunderbolt link runs above 40 Gb/s (Thunderbolt 5)"
        )
        return bad(
            f"RDMA {state}, {len(names)} device(s), but {why}",
            evidence=ev,
            remediation="Cable this Mac to its peers with Thunderbolt 5 cables, port to "
            "port (no hubs or docks).",
        )
    links = f"{len(tb5)} Thunderbolt 5 link(s)" if tb.readable else "Thunderbolt links not read"
    return ok(
        f"RDMA {state}: {len(names)} device(s) ({', '.join(names)}), {links}",
        evidence={**ev, "devices": _device_summary(inv)},
    )


def run(ctx: NodeContext):
    role = verbs.rdma_role(ctx)
    if role == verbs.UNUSED:
        return skip(verbs.unused_skip_reason(ctx))
    if ctx.is_mac:
        return _mac(ctx, role)
    inv, finding = _rdma.inventory_or_finding(ctx, "the RDMA devices")
    return finding if finding is not None else _linux(ctx, inv)


CHECK = Check(
    code="MD201",
    name="rdma.enable",
    title="RDMA enabled and devices listed",
    run=run,
    doc=Doc(
        meaning="""
Follows the chain that must hold before JACCL can open a device.

On macOS: `rdma_ctl status` says enabled; librdma.dylib is present (JACCL dlopens it); `ibv_devices`
lists rdma_* devices (when RDMA is disabled it prints only its header); and a Thunderbolt 5 link
(above 40 Gb/s) is connected. Hardware capability comes first: a Mac whose ports show "Up to 40
Gb/s" and no Thunderbolt 5 receptacle can never do RDMA, whether RDMA is disabled, enabled with
no device, or enabled with rdma_enX devices listed that never come up; it is never told to enable
RDMA in Recovery, and the advice is the ring backend over the Thunderbolt network. On Thunderbolt
5 hardware, "enabled but no devices" means a macOS build that does not enumerate RDMA devices.

On Linux: the verbs devices read through pyverbs (python3-pyverbs) or `ibv_devinfo`. No RDMA
subsystem is reported as skip, unless the hostfile needs RDMA.
""",
        why="""
Without an enabled RDMA device JACCL cannot start. It fails when the hostfile uses jaccl or
jaccl-ring; without a hostfile it only warns. An `ibv_devinfo` that overruns a deadline of 20 s
or more means the RDMA stack is wedged (this follows JACCL errors): a critical finding that needs
a reboot; a shorter overrun cannot tell a loaded machine from a hang and leaves the node
unassessed (error, with the --timeout that would tell).
""",
        action="""
On Thunderbolt 4 hardware, use the ring backend over the Thunderbolt network; on Thunderbolt 5,
enable RDMA from macOS Recovery (Terminal: `rdma_ctl enable`, restart) on every Mac; use
Thunderbolt 5 cables; update macOS to 26.2 or later; reboot a wedged node (after JACCL failures
usually the whole fleet), then run `mlx.distributed_config --auto-setup` once.
""",
        sources=(
            "MLX distributed documentation (RDMA over Thunderbolt: rdma_ctl enable)",
            "rdma_ctl(8), ibv_devices(1)",
            "exo PR #1467 (boot-time driver state)",
        ),
    ),
)
