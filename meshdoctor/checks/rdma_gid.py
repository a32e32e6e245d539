"""MD203 RDMA GID: every active port in use has an IPv4-mapped GID, at the index JACCL sends from.

MLX JACCL (rdma.cpp, tags v0.30.1-v0.32.1): JACCL advertises the port's first IPv4-mapped GID
(``::ffff:a.b.c.d``; mlx 0.31.2+) but moves the queue pair to RTR with source GID index **1** in
every upstream version. So:

* no mapped GID -> ``fail``: the peer's RTR fails with errno 22 (mlx 0.32.1 throws ``No IPv4-mapped
  GID``). A Thunderbolt port publishes only ``fe80::`` GIDs until its interface has an IPv4
  address.
* the first mapped GID is not at index 1 while the installed MLX has no fix (a build with the
  JACCL progress-guard patch sends from the advertised GID; it contains the string
  ``JACCL_PROGRESS_TIMEOUT_MS``, read by :func:`meshdoctor.facts.mlx_build.gather_mlx`; MLX PR #3389
  proposed the same fix): on a device the jaccl hostfile uses for this node, the launch WILL fail
  (RTR errno 22; MLX PR #3389 reproduced it on a 3-node Thunderbolt 5 mesh with the mapped GID
  at index 2) -> ``fail``. Without a hostfile, or when whether the installed MLX has the fix is
  unknown -> ``warn`` (it may fail).

Ports checked: with a hostfile, the active ports of the devices it names for this node (missing or
down devices are MD202's findings); without one, every active port. InfiniBand ports need no
mapped GID. On Linux, where JACCL is not used, the index rule does not apply and a missing mapped
GID on a RoCE port only warns unless the hostfile needs RDMA.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.checks import _rdma
from meshdoctor.facts import verbs
from meshdoctor.checker.model import Check, Doc, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.facts.mlx_build import gather_mlx
from meshdoctor.parsers.ibv import Device, Port

JACCL_SOURCE_GID_INDEX = 1  # MLX jaccl rdma.cpp: sgid_index = 1 in every upstream version

NO_GID_REMEDY = (
    "Give {iface} an IPv4 address: macOS self-assigns 169.254.x.y once DHCP gives up "
    "(this can take minutes), or set one in System Settings > Network. On a fresh "
    "fleet boot run `mlx.distributed_config --auto-setup` once (after a full-fleet "
    "reboot; a failed auto-setup needs another reboot, not a second run). Make sure "
    "Thunderbolt Bridge (bridge0) is off."
)
INDEX_REMEDY = (
    "Install an MLX whose JACCL sends from the advertised GID (a build with the "
    "JACCL progress-guard patch: its library contains JACCL_PROGRESS_TIMEOUT_MS), or "
    "get the IPv4-mapped GID to index 1: remove extra addresses from {iface} and let "
    "it take its IPv4 address first (reboot, then `mlx.distributed_config "
    "--auto-setup` once)."
)


def _ports(ctx: NodeContext, inv: verbs.Inventory) -> List[Tuple[Device, Port]]:
    named = {n["device"] for n in verbs.named_devices(ctx)}
    out = []
    for dev in inv.devices:
        if named and dev.name not in named:
            continue
        out.extend((dev, p) for p in dev.ports if p.active)
    return out


def _table(port: Port) -> List[Dict[str, Any]]:
    return [g.to_dict() for g in port.gids]


def _guard(ctx: NodeContext) -> Tuple[Optional[bool], Dict[str, Any]]:
    info = ctx.fact(gather_mlx)
    return info.get("jaccl_guard"), {
        "mlx_version": info.get("version"),
        "jaccl_guard": info.get("jaccl_guard"),
        "mlx_probe": info.get("probe"),
    }


def _off_index(ctx: NodeContext, dev, port, first, ev: Dict[str, Any], role, named, iface):
    """A JACCL node's port whose first IPv4-mapped GID ``first`` is not at the index JACCL
    sends from: the port's good entry when the installed JACCL sends from the advertised GID
    (guard build), else a fail when this hostfile's launch is certain to fail at RTR, a warning
    when it may. ``ev``: the port's evidence (updated in place)."""
    guard, mlx_ev = _guard(ctx)
    ev.update(mlx_ev, mapped_gid_index=first.index)
    where = (
        f"{dev.name} port {port.num}: IPv4-mapped GID {first.gid} is at "
        f"GID[{first.index}], but JACCL sends from GID[{JACCL_SOURCE_GID_INDEX}]"
    )
    if guard is True:
        return {
            "device": dev.name,
            "port": port.num,
            "gid_index": first.index,
            "gid": first.gid,
            "note": "installed JACCL sends from the advertised GID (guard build)",
        }
    why = (
        "the installed MLX has no fix for that (no JACCL_PROGRESS_TIMEOUT_MS in its "
        "library; MLX PR #3389)"
        if guard is False
        else "whether the installed MLX has the fix is unknown"
    )
    certain = guard is False and role == verbs.REQUIRED and dev.name in named
    ev["certain"] = certain
    if certain:
        return fail(
            f"{where}; {why}: this hostfile's launch will fail at RTR (errno 22)",
            evidence=ev,
            remediation=INDEX_REMEDY.format(iface=iface),
        )
    return warn(
        f"{where}; {why}: RTR may fail (errno 22/60)",
        evidence=ev,
        remediation=INDEX_REMEDY.format(iface=iface),
    )


def run(ctx: NodeContext):
    inv, finding = _rdma.inventory_or_finding(ctx, "the GID tables")
    if finding is not None:
        return finding
    role = verbs.rdma_role(ctx)
    jaccl = ctx.is_mac or role == verbs.REQUIRED  # JACCL's rules apply to this node
    missing_status = fail if jaccl else warn
    ports = _ports(ctx, inv)
    named = {n["device"] for n in verbs.named_devices(ctx)}
    if not ports:
        return ok(
            "no active RDMA port to check"
            + (" among the devices the hostfile names" if verbs.named_devices(ctx) else "")
            + (" (some devices could not be read: see evidence)" if inv.warnings else ""),
            evidence=inv.evidence(),
        )
    out = []
    good = []
    for dev, port in ports:
        iface = verbs.interface_of(dev.name) or "the port's network interface"
        ev = {
            **inv.evidence(),
            "device": dev.name,
            "port": port.num,
            "link_layer": port.link_layer,
            "gid_tbl_len": port.gid_tbl_len,
            "gids": _table(port),
        }
        if port.link_layer == "InfiniBand":
            good.append(
                {
                    "device": dev.name,
                    "port": port.num,
                    "gid_index": None,
                    "note": "InfiniBand: no IPv4-mapped GID needed",
                }
            )
            continue
        mapped = port.mapped_gids()
        if not mapped:
            shown = ", ".join(f"GID[{g.index}] {g.gid}" for g in port.gids) or "no GIDs"
            out.append(
                missing_status(
                    f"{dev.name} port {port.num} has no IPv4-mapped GID ({shown}): the queue pair "
                    "cannot reach RTR (errno 22)",
                    evidence=ev,
                    remediation=NO_GID_REMEDY.format(iface=iface),
                )
            )
            continue
        first = mapped[0]
        if jaccl and first.index != JACCL_SOURCE_GID_INDEX:
            got = _off_index(ctx, dev, port, first, ev, role, named, iface)
            (good if isinstance(got, dict) else out).append(got)
            continue
        good.append(
            {"device": dev.name, "port": port.num, "gid_index": first.index, "gid": first.gid}
        )
    if out:
        return out
    return ok(
        f"{len(good)} active port(s) have an IPv4-mapped GID: "
        + ", ".join(
            f"{g['device']} port {g['port']} GID[{g['gid_index']}]"
            if g["gid_index"] is not None
            else f"{g['device']} port {g['port']}"
            for g in good
        ),
        evidence={
            **inv.evidence(),
            "ports": good,
            "tables": {f"{d.name}/{p.num}": _table(p) for d, p in ports},
        },
    )


CHECK = Check(
    code="MD203",
    name="rdma.gid",
    title="IPv4-mapped GID on each active RDMA port",
    run=run,
    doc=Doc(
        meaning="""
JACCL finds the peer through an IPv4-mapped GID (::ffff:a.b.c.d) of each port it uses. A
Thunderbolt port publishes only fe80:: GIDs until its network interface (enX for rdma_enX) has
an IPv4 address; without one this check fails.

Upstream JACCL moves the queue pair to RTR from GID index 1 whatever index the mapped GID is at.
When the mapped GID sits at another index (index 2 is seen on some Macs, MLX PR #3389) and the
installed MLX has no fix (the guard build's fix is detected by the string
JACCL_PROGRESS_TIMEOUT_MS in its library): with a jaccl hostfile that uses the device this
fails; without a hostfile, or when the MLX build could not be inspected, it warns. Evidence:
device, port, and the GID table with indexes.

With --hostfile only the devices named for this node are checked; InfiniBand ports are exempt; on
Linux the index rule does not apply.
""",
        why="""
Without the mapped GID the queue pair cannot reach RTR ("Changing queue pair to RTR failed with
errno 22"; mlx 0.32.1 says "No IPv4-mapped GID for this device"), and a launch over a device
whose mapped GID sits at another index fails the same way.
""",
        action="""
Give each Thunderbolt interface an IPv4 address (macOS self-assigns 169.254.x.y after DHCP gives
up) or run `mlx.distributed_config --auto-setup` once after a full-fleet reboot; turn
Thunderbolt Bridge off; for the index warning install an MLX with the advertised-GID fix.
""",
        sources=(
            "MLX PR #3389 (GID index)",
            "mlx #4530 (RTR errno 22)",
            "MLX v0.31.2-v0.32.1 jaccl GID selection",
        ),
    ),
)
