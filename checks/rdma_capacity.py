"""MD204 RDMA capacity: queue pairs and memory regions the hostfile needs per device vs the limits.

Needs (mlx jaccl ``rdma.cpp``, mlx 0.30.1-0.32.1):

* ``jaccl`` (mesh): one UC queue pair per peer, on the first device of that peer's cell (the
  first cable only); at most :data:`~meshdoctor.hostfile.JACCL_MESH_MAX` (8) ranks.
* ``jaccl-ring``: one queue pair per cable per neighbour (left and right), at most
  :data:`RING_MAX_PER_DIRECTION` (4) cables per direction. With 2 ranks both directions go to the
  same peer and are counted twice (conservative).
* memory regions: about :data:`MRS_PER_CONNECTION` (64) per connection, measured for mesh peer
  connections in mlx 0.32.1; applied to every connection (an estimate for the ring).

Limits per device: ``max_qp``/``max_mr`` as the verbs reader reports them; on Thunderbolt (Apple)
the measured limits are lower than what ``ibv_devinfo`` reports, so min(reported,
:data:`APPLE_MAX_QP` = 10 QPs, :data:`APPLE_MAX_MR` = ~100 MRs) applies (the 11th QP fails with
errno 16 EBUSY; "Register memory region failed" past ~100 MRs). The evidence names which limit
applied and why.

The memlock limit that RDMA registration needs on Linux is MD302's (memory).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from meshdoctor import verbs
from meshdoctor.check import Check, Finding, fail, ok, skip
from meshdoctor.context import NodeContext
from meshdoctor.hostfile import JACCL_MESH_MAX, Hostfile
from meshdoctor.parsers.ibv import Device

APPLE_MAX_QP = 10     # MLX PR #4209: measured, 11th QP -> errno 16 (EBUSY)
APPLE_MAX_MR = 100    # MLX #3162: measured, about 100 memory regions per device
MRS_PER_CONNECTION = 64  # mlx 0.32.1 (#3901 scatter buffers): 64 MRs per peer connection
RING_MAX_PER_DIRECTION = 4  # mlx jaccl RING_MAX_CONNS: at most 4 cables per direction


def plan(hf: Hostfile, ranks: List[int]) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """QPs and MRs each device of ``ranks`` needs under ``hf``'s backend.

    Returns ``({device: {"qps": int, "mrs": int, "peers": [rank, ...]}}, notes)``; notes say
    which listed devices JACCL will not use (extra cables in a mesh cell, more than 4 per ring
    direction).
    """
    backend, n = hf.effective_backend, hf.world_size
    use: Dict[str, Dict[str, Any]] = {}
    notes: List[str] = []

    def add(dev: str, peer: int) -> None:
        u = use.setdefault(dev, {"qps": 0, "mrs": 0, "peers": []})
        u["qps"] += 1
        u["mrs"] += MRS_PER_CONNECTION
        u["peers"].append(peer)

    for r in ranks:
        host = hf.hosts[r]
        if backend == "jaccl":
            for p in range(n):
                devs = host.devices_to(p) if p != r else []
                if devs:
                    add(devs[0], p)
                if len(devs) > 1:
                    notes.append(f"rank {r} -> rank {p}: a mesh uses only the first cable "
                                 f"({devs[0]}); {', '.join(devs[1:])} unused")
        elif backend == "jaccl-ring" and n > 1:
            for p in ((r - 1) % n, (r + 1) % n):
                devs = host.devices_to(p)
                for d in devs[:RING_MAX_PER_DIRECTION]:
                    add(d, p)
                if len(devs) > RING_MAX_PER_DIRECTION:
                    notes.append(f"rank {r} -> rank {p}: the ring uses at most "
                                 f"{RING_MAX_PER_DIRECTION} cables per direction; "
                                 f"{', '.join(devs[RING_MAX_PER_DIRECTION:])} unused")
    return use, notes


def limits(dev: Optional[Device], is_mac: bool) -> Dict[str, Any]:
    """Effective ``max_qp``/``max_mr`` of ``dev`` and where each came from."""
    out: Dict[str, Any] = {}
    apple = is_mac or (dev is not None and dev.is_thunderbolt)
    for key, measured in (("max_qp", APPLE_MAX_QP), ("max_mr", APPLE_MAX_MR)):
        reported = dev.limits.get(key) if dev is not None else None
        if apple:
            value = measured if reported is None else min(reported, measured)
            src = (f"Apple's measured limit {measured} on Thunderbolt (reported {reported})"
                   if reported is not None and reported > measured else
                   f"reported by verbs ({reported})" if reported is not None else
                   f"Apple's measured limit {measured} (not reported)")
        else:
            value = reported
            src = f"reported by verbs ({reported})" if reported is not None else "not reported"
        out[key] = value
        out[key + "_source"] = src
    return out


def _capacity(ctx: NodeContext, inv: verbs.Inventory) -> List[Finding]:
    hf = ctx.hostfile
    assert hf is not None
    backend, n = hf.effective_backend, hf.world_size
    base = {**inv.evidence(), "backend": backend, "world_size": n, "ranks": ctx.ranks,
            "mrs_per_connection": MRS_PER_CONNECTION}
    out: List[Finding] = []
    if backend == "jaccl" and n > JACCL_MESH_MAX:
        out.append(fail(f"{n} ranks: a JACCL mesh supports at most {JACCL_MESH_MAX}", evidence=base,
                        remediation="Use the jaccl-ring backend for more than 8 ranks, or fewer "
                                    "ranks."))
    if not ctx.ranks:
        out.append(skip("this node is not in the hostfile; nothing to size", evidence=base))
        return out
    use, notes = plan(hf, ctx.ranks)
    rows = []
    for name, u in use.items():
        lim = limits(inv.device(name), ctx.is_mac)
        row = {"device": name, **u, **lim}
        rows.append(row)
        for need, key, what, errno in (("qps", "max_qp", "queue pairs",
                                        "the next QP fails with errno 16 (EBUSY)"),
                                       ("mrs", "max_mr", "memory regions",
                                        "'[jaccl] Register memory region failed'")):
            if lim[key] is not None and u[need] > lim[key]:
                out.append(fail(
                    f"{name} needs {u[need]} {what} for {len(u['peers'])} connection(s) "
                    f"(ranks {', '.join(map(str, u['peers']))}) but allows {lim[key]}: {errno}",
                    evidence={**base, **row, "notes": notes},
                    remediation="Spread the peers over more devices (one cable per peer in the "
                                "hostfile), or use jaccl-ring; kill stale ranks that still hold "
                                "queue pairs (see MD301: `meshdoctor check --only MD301` lists them)."))
    if out:
        return out
    ev = {**base, "devices": rows, "notes": notes}
    if not use:
        return [ok(f"the hostfile names no RDMA device for {ctx.rank_label}", evidence=ev)]
    return [ok(f"{backend}, {n} ranks: " + ", ".join(
        f"{r['device']} {r['qps']}/{r['max_qp'] if r['max_qp'] is not None else '?'} QPs "
        f"{r['mrs']}/{r['max_mr'] if r['max_mr'] is not None else '?'} MRs" for r in rows),
        evidence=ev)]


def run(ctx: NodeContext):
    inv, finding = verbs.inventory_or_finding(ctx, "the device limits")
    if finding is not None:
        return finding
    out = []
    if verbs.rdma_role(ctx) == verbs.REQUIRED:
        out.extend(_capacity(ctx, inv))
    else:
        out.append(skip("no jaccl hostfile: the queue pairs and memory regions needed depend on "
                        "its backend and world size (pass --hostfile)",
                        evidence={**inv.evidence(), "devices": {
                            d.name: limits(d, ctx.is_mac) for d in inv.devices}}))
    return out


CHECK = Check(
    code="MD204", name="rdma.capacity", title="RDMA queue pairs and memory regions", run=run,
    explain="""
Counts the queue pairs (QPs) and memory regions (MRs) the hostfile's backend needs on each RDMA
device of this node and compares them with the device limits.

JACCL mesh (jaccl): one QP per peer on the first device of that peer's cell, at most 8 ranks.
jaccl-ring: one QP per cable per neighbour, at most 4 cables per direction. About 64 MRs per
connection (mlx 0.32.1). Limits: max_qp/max_mr as verbs reports them; on Thunderbolt Apple's
measured limits apply (10 QPs per device, the 11th fails with errno 16 EBUSY; about 100 MRs,
beyond which "[jaccl] Register memory region failed"), because ibv_devinfo reports more than the
driver really gives. (The memlock limit on Linux is MD302's.)

What to do: give each peer its own cable and device in the hostfile, use jaccl-ring beyond 8
ranks, and kill stale ranks that still hold queue pairs.
""")
