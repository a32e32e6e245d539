"""MD204 RDMA capacity: queue pairs and memory regions per device, from MLX's resource model.

What JACCL opens (MLX ``mlx/distributed/jaccl`` sources, tags v0.30.1 to v0.32.4): each
connection has its own device context, protection domain, completion queue and one UC queue pair;
its buffers are registered as memory regions (``ibv_reg_mr``). Per device, with N = world size
and C = cables per direction (:func:`resource_model`):

=================================  ===============  ==========================================
backend, MLX version               QPs per device   MRs per device
=================================  ===============  ==========================================
jaccl mesh 0.30.1-0.30.5           1                4
jaccl mesh 0.30.6                  1                32
jaccl mesh 0.31.0-0.32.0           1                32; 64 to the left/right neighbours (N > 2);
                                                    96 when N = 2
jaccl mesh 0.32.1+ (MLX PR #3901)  1                64
jaccl-ring, N >= 3                 1                32 (64 C per rank)
jaccl-ring, N = 2                  2                64 (each device opened twice: the left and
                                                    the right neighbour are the same rank)
=================================  ===============  ==========================================

Cables per peer, by version: before MLX 0.32.4 the mesh uses ONE device per peer (the first of a
cell that lists several); from 0.32.4 (MLX PR #4607: ``MeshGroup(const
vector<vector<string>>&)``, one ``MeshImpl`` per wire) it uses every device of the cell, each
wire with its own queue pair and the same buffers as one 0.32.1+ connection (1 QP, 64 MRs per
device); messages under ``MESH_MULTI_WIRE_MIN_BYTES`` (512 KiB, ``jaccl/mesh_impl.h``) use the
first wire only. How 0.32.4 treats cells of unequal length (2 cables to one peer, 1 to another,
or a different count on the two ends) is not stated in its headers: the model counts the
devices listed and reports that treatment as "unknown". jaccl-ring uses several cables per
direction (at most 4) in every version. A mesh has at most 8 ranks.

Limits per device: what verbs reports (``max_qp``/``max_mr``), and on Thunderbolt the lower
measured limits: 10 queue pairs (the 11th ``ibv_create_qp`` fails with errno 16 EBUSY; MLX PR
#4209, macOS 26.5.1 on M5 Max and M4 Pro) and about 100 memory regions (the next registration
returns NULL, "[jaccl] Register memory region failed"; MLX issue #3162, macOS 26.3). Because the
memory-region limit is approximate, a need within 10 % of it warns. Whether two processes on one
device share these budgets is not established publicly: the evidence says "unknown".

The memlock limit that RDMA registration needs on Linux is MD302's (memory).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.checks import _rdma
from meshdoctor.facts import verbs
from meshdoctor.checker.model import Check, Doc, Finding, fail, ok, skip, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.hostfile.rules import JACCL_MESH_MAX
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.facts.mlx_build import gather_mlx
from meshdoctor.parsers.ibv import Device

APPLE_MAX_QP = 10  # measured: the 11th QP fails with errno 16 EBUSY (MLX PR #4209)
APPLE_MAX_MR = 100  # measured: about 100 MRs per device (MLX issue #3162)
QP_SOURCE = (
    "10 queue pairs per device, measured: the 11th ibv_create_qp fails with errno 16 "
    "(MLX PR #4209, macOS 26.5.1, M5 Max and M4 Pro)"
)
MR_SOURCE = (
    "about 100 memory regions per device, measured: the next ibv_reg_mr returns NULL "
    "(MLX issue #3162, macOS 26.3, 512 KB regions)"
)
SHARING = (
    "unknown: whether two processes on one device share the queue-pair and memory-region "
    "budgets is not established (no public measurement)"
)
NEAR_FRACTION = 0.9  # an approximate limit: a need within 10 % of it warns
RING_MAX_PER_DIRECTION = 4  # MLX jaccl ring: RING_MAX_CONNS = 4 devices per direction
LATEST = (0, 32, 1)  # the model used when the installed MLX version is unknown
MULTI_WIRE_MESH = (0, 32, 4)  # the mesh uses every cable of a cell (MLX PR #4607)
UNEQUAL_WIRES = (
    "unknown: how MLX 0.32.4 treats mesh cells of unequal length is not stated in its headers "
    "(MLX PR #4607 takes one device list per wire)"
)


def mesh_wires(version: Tuple[int, ...]) -> bool:
    """Whether the JACCL mesh of MLX ``version`` uses every device of a cell (0.32.4+, MLX PR
    #4607) rather than the first one only. An unknown version (``()``) is read as
    :data:`LATEST`."""
    return (tuple(version[:3]) if version else LATEST) >= MULTI_WIRE_MESH


def resource_model(backend: str, n: int, version: Tuple[int, ...]) -> Dict[str, Any]:
    """MLX's per-connection resources for ``backend`` at world size ``n`` in MLX ``version``.

    Returns ``{"qps": int, "mrs": int, "mrs_neighbour": int, "source": str}``: queue pairs and
    memory regions one connection takes on its device (``mrs_neighbour``: towards the left/right
    neighbour of a mesh, which differs in 0.31.0-0.32.0). For jaccl-ring with ``n == 2`` the
    figures are per device (it is opened twice). Source: MLX ``jaccl`` sources per tag.
    """
    v = tuple(version[:3]) if version else LATEST
    if backend == "jaccl-ring":
        if n == 2:
            return {
                "qps": 2,
                "mrs": 64,
                "mrs_neighbour": 64,
                "source": "MLX jaccl ring (0.30.6+): with 2 ranks the left and right "
                "neighbour are the same, each device is opened twice: 2 QPs and "
                "64 MRs per device",
            }
        return {
            "qps": 1,
            "mrs": 32,
            "mrs_neighbour": 32,
            "source": "MLX jaccl ring (0.30.6+): one QP and 32 MRs per device per direction",
        }
    if v < (0, 30, 6):
        return {
            "qps": 1,
            "mrs": 4,
            "mrs_neighbour": 4,
            "source": "MLX 0.30.1-0.30.5 jaccl mesh: one 4 KiB buffer size, 4 MRs per peer",
        }
    if v < (0, 31, 0):
        return {
            "qps": 1,
            "mrs": 32,
            "mrs_neighbour": 32,
            "source": "MLX 0.30.6 jaccl mesh: 8 buffer sizes x 2 x send/recv, 32 MRs per peer",
        }
    if v < (0, 32, 1):
        nb = 96 if n == 2 else 64
        return {
            "qps": 1,
            "mrs": 32,
            "mrs_neighbour": nb,
            "source": "MLX 0.31.0-0.32.0 jaccl mesh: 32 MRs per peer, 64 to the left and "
            "right neighbours (96 when the world size is 2: both are one peer)",
        }
    return {
        "qps": 1,
        "mrs": 64,
        "mrs_neighbour": 64,
        "source": "MLX 0.32.1+ jaccl mesh (scatter buffers, MLX PR #3901): 64 MRs per peer",
    }


def plan(
    hf: Hostfile, ranks: List[int], version: Tuple[int, ...] = LATEST
) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """QPs and MRs each device of ``ranks`` needs under ``hf``'s backend in MLX ``version``.

    Returns ``({device: {"qps": int, "mrs": int, "peers": [rank, ...], "local_ranks": [rank,
    ...]}}, notes)``; a device opened by several of ``ranks`` (processes) has their needs added
    up, the conservative reading since sharing between processes is unknown; notes say
    which listed devices JACCL will not use (extra cables in a mesh cell before MLX 0.32.4, more
    than 4 per ring direction) and, from 0.32.4, where a rank's mesh cells differ in length
    (their treatment is :data:`UNEQUAL_WIRES`).
    """
    backend, n = hf.effective_backend, hf.world_size
    model = resource_model(backend, n, version)
    use: Dict[str, Dict[str, Any]] = {}
    notes: List[str] = []

    def add(dev: str, peer: int, qps: int, mrs: int) -> None:
        u = use.setdefault(dev, {"qps": 0, "mrs": 0, "peers": [], "local_ranks": []})
        u["qps"] += qps
        u["mrs"] += mrs
        if peer not in u["peers"]:
            u["peers"].append(peer)
        if r not in u["local_ranks"]:
            u["local_ranks"].append(r)

    for r in ranks:
        host = hf.hosts[r]
        if backend == "jaccl":
            neighbours = {(r - 1) % n, (r + 1) % n}
            every = mesh_wires(version)
            counts = set()
            for p in range(n):
                devs = host.devices_to(p) if p != r else []
                if p != r:
                    counts.add(len(devs))
                for d in devs if every else devs[:1]:
                    add(
                        d,
                        p,
                        model["qps"],
                        model["mrs_neighbour"] if p in neighbours else model["mrs"],
                    )
                if len(devs) > 1 and not every:
                    notes.append(
                        f"rank {r} -> rank {p}: the mesh uses one device per peer "
                        f"({devs[0]}); {', '.join(devs[1:])} unused (this MLX; from 0.32.4 "
                        "the mesh uses every cable listed, MLX PR #4607)"
                    )
            if every and len(counts) > 1:
                notes.append(
                    f"rank {r}: its mesh cells list {'/'.join(map(str, sorted(counts)))} "
                    f"cables: {UNEQUAL_WIRES}"
                )
        elif backend == "jaccl-ring" and n > 1:
            sides = [(r + 1) % n] if n == 2 else [(r - 1) % n, (r + 1) % n]
            for p in sides:
                devs = host.devices_to(p)
                for d in devs[:RING_MAX_PER_DIRECTION]:
                    add(d, p, model["qps"], model["mrs"])
                if len(devs) > RING_MAX_PER_DIRECTION:
                    notes.append(
                        f"rank {r} -> rank {p}: the ring uses at most "
                        f"{RING_MAX_PER_DIRECTION} cables per direction; "
                        f"{', '.join(devs[RING_MAX_PER_DIRECTION:])} unused"
                    )
    return use, notes


def limits(dev: Optional[Device], is_mac: bool) -> Dict[str, Any]:
    """Effective ``max_qp``/``max_mr`` of ``dev`` and where each came from."""
    out: Dict[str, Any] = {}
    apple = is_mac or (dev is not None and dev.is_thunderbolt)
    for key, measured, source in (
        ("max_qp", APPLE_MAX_QP, QP_SOURCE),
        ("max_mr", APPLE_MAX_MR, MR_SOURCE),
    ):
        reported = dev.limits.get(key) if dev is not None else None
        if apple:
            value = measured if reported is None else min(reported, measured)
            src = (
                f"Apple's measured limit {measured} on Thunderbolt (reported {reported}): {source}"
                if reported is not None and reported > measured
                else f"reported by verbs ({reported})"
                if reported is not None
                else f"Apple's measured limit {measured} (not reported): {source}"
            )
        else:
            value = reported
            src = f"reported by verbs ({reported})" if reported is not None else "not reported"
        out[key] = value
        out[key + "_source"] = src
    return out


def _binding(row: Dict[str, Any]) -> Optional[str]:
    """The limit closest to being reached on one device: ``"queue pairs"`` or ``"memory
    regions"`` (None when neither limit is known)."""
    shares = []
    if row["max_qp"]:
        shares.append((row["qps"] / row["max_qp"], "queue pairs"))
    if row["max_mr"]:
        shares.append((row["mrs"] / row["max_mr"], "memory regions"))
    return max(shares)[1] if shares else None


def _mlx_version(ctx: NodeContext) -> Tuple[Tuple[int, ...], Dict[str, Any]]:
    info = ctx.fact(gather_mlx)
    vt = tuple(info.get("version_tuple") or ()) if info.get("installed") else ()
    if len(vt) >= 2:
        return vt, {"mlx_version": info.get("version"), "mlx_version_assumed": False}
    why = info.get("import_error") or info.get("detail") or "MLX not found"
    return LATEST, {
        "mlx_version": None,
        "mlx_version_assumed": True,
        "mlx_version_note": f"installed MLX unknown ({why}): figures assume "
        f"{'.'.join(map(str, LATEST))} or later",
    }


def _fmt(row: Dict[str, Any]) -> str:
    q = row["max_qp"] if row["max_qp"] is not None else "?"
    m = row["max_mr"] if row["max_mr"] is not None else "?"
    return f"{row['device']} {row['qps']}/{q} QPs {row['mrs']}/{m} MRs"


def _launch_rules(ctx: NodeContext, version, mlx_ev: Dict[str, Any], base) -> List[Finding]:
    """The rules about the launch as a whole, before any device is sized: a JACCL mesh over its
    peer limit, a jaccl-ring hostfile on an MLX without that backend, and (for this node's
    ranks) a cell listing several devices on an MLX that does not take its first."""
    hf = ctx.hostfile
    assert hf is not None
    backend, n = hf.effective_backend, hf.world_size
    out: List[Finding] = []
    if backend == "jaccl" and n > JACCL_MESH_MAX:
        out.append(
            fail(
                f"{n} ranks: a JACCL mesh supports at most {JACCL_MESH_MAX}",
                evidence=base,
                remediation="Use the jaccl-ring backend for more than 8 ranks, or fewer "
                "ranks (MLX jaccl: 'The JACCL mesh supports up to 8 peers').",
            )
        )
    known = not mlx_ev["mlx_version_assumed"]
    if known and backend == "jaccl-ring" and version < (0, 30, 6):
        out.append(
            fail(
                f"MLX {mlx_ev['mlx_version']} has no jaccl-ring backend (it first shipped "
                "in MLX 0.30.6): this hostfile's launch cannot form a group",
                evidence=base,
                remediation="Upgrade MLX to 0.30.6 or later on every "
                "node (0.32.1 or later recommended).",
            )
        )
    if not ctx.ranks:
        return out
    if (
        known
        and backend == "jaccl"
        and version < (0, 31, 2)
        and any(
            len(h.devices_to(p)) > 1 for h in (hf.hosts[r] for r in ctx.ranks) for p in range(n)
        )
    ):
        out.append(
            warn(
                f"MLX {mlx_ev['mlx_version']} does not take the first device of a cell "
                "that lists several (MLX 0.31.2 does): init may fall back to the ring "
                "or fail",
                evidence=base,
                remediation="List one device per peer in a mesh hostfile, or upgrade "
                "MLX to 0.31.2 or later (from 0.32.4 the mesh uses every cable listed, "
                "MLX PR #4607).",
            )
        )
    return out


# each limit a device row is held against: (need, limit key, what, what exceeding it does, source)
LIMITS = (
    ("qps", "max_qp", "queue pairs", "the next queue pair fails with errno 16 (EBUSY)", QP_SOURCE),
    ("mrs", "max_mr", "memory regions", "'[jaccl] Register memory region failed'", MR_SOURCE),
)


def _row_findings(row: Dict[str, Any], ev: Dict[str, Any], where: str) -> List[Finding]:
    """A device row held against each of its limits (:data:`LIMITS`): a fail over one, a
    warning near the memory-region ceiling. ``where``: ``backend, N ranks, MLX version``."""
    out: List[Finding] = []
    peers = f"ranks {', '.join(map(str, row['peers']))}"
    for need, key, what, effect, source in LIMITS:
        lim = row[key]
        if lim is None:
            continue
        rev = {
            **ev,
            "device": row["device"],
            "need": row[need],
            "limit": lim,
            "limit_source": row[key + "_source"],
        }
        if row[need] > lim:
            out.append(
                fail(
                    f"{row['device']} needs {row[need]} {what} ({where}, "
                    f"towards {peers}) but allows {lim}: {effect}",
                    evidence=rev,
                    remediation="Give each peer its own cable and device in the hostfile (a "
                    "mesh uses one device per peer before MLX 0.32.4 and every listed "
                    "cable from 0.32.4), or use jaccl-ring; kill stale "
                    "ranks that still hold queue pairs (`meshdoctor check --only "
                    f"MD301` lists them). Limit: {source}.",
                )
            )
        elif key == "max_mr" and row[need] >= NEAR_FRACTION * lim:
            out.append(
                warn(
                    f"{row['device']} needs {row[need]} memory regions ({where}, "
                    f"towards {peers}): within {100 - int(NEAR_FRACTION * 100)} % of "
                    f"the measured ceiling of about {lim}; registration may fail",
                    evidence=rev,
                    remediation="Upgrade MLX to 0.32.1 or later (64 memory regions per peer "
                    "device, MLX PR #3901), or spread the connections over more "
                    f"devices. Limit: {source}.",
                )
            )
    return out


def _sized(ctx: NodeContext, rows: List[Dict[str, Any]], ev: Dict[str, Any], where: str):
    """The one ok finding when every device fits: each device's queue pairs and memory
    regions against its limits, and the limit that binds per device."""
    total_qps, total_mrs = ev["total_qps"], ev["total_mrs"]
    per_rank = (
        f"{total_qps} QPs and {total_mrs} MRs per rank"
        if len(ctx.ranks) == 1
        else f"{total_qps} QPs and {total_mrs} MRs for {ctx.rank_label}"
    )
    by_limit: Dict[str, List[str]] = {}
    for r in rows:
        if r["binding_limit"]:
            by_limit.setdefault(r["binding_limit"], []).append(r["device"])
    binds = "; ".join(f"{what} on {', '.join(devs)}" for what, devs in by_limit.items())
    spread = f" over {len(rows)} device(s)" if len(rows) > 1 else ""
    return ok(
        f"{where}: {per_rank}{spread}: "
        + ", ".join(_fmt(r) for r in rows)
        + (f"; the limit that binds per device: {binds}" if binds else ""),
        evidence=ev,
    )


def _capacity(ctx: NodeContext, inv: verbs.Inventory) -> List[Finding]:
    """Size this node's RDMA devices for the hostfile's launch: the launch rules, then each
    device's queue pairs and memory regions (:func:`plan`) against its limits
    (:func:`limits`), then devices shared by several local ranks; one ok when all fit."""
    hf = ctx.hostfile
    assert hf is not None
    backend, n = hf.effective_backend, hf.world_size
    version, mlx_ev = _mlx_version(ctx)
    model = resource_model(backend, n, version)
    base = {
        **inv.evidence(),
        "backend": backend,
        "world_size": n,
        "ranks": ctx.ranks,
        **mlx_ev,
        "model": model,
        "limit_sources": {"max_qp": QP_SOURCE, "max_mr": MR_SOURCE},
        "shared_between_processes": SHARING,
    }
    out = _launch_rules(ctx, version, mlx_ev, base)
    if not ctx.ranks:
        out.append(skip("this node is not in the hostfile; nothing to size", evidence=base))
        return out
    use, notes = plan(hf, ctx.ranks, version)
    rows = []
    for name, u in use.items():
        row = {"device": name, **u, **limits(inv.device(name), ctx.is_mac)}
        row["binding_limit"] = _binding(row)
        rows.append(row)
    total_qps = sum(r["qps"] for r in rows)
    total_mrs = sum(r["mrs"] for r in rows)
    ev = {**base, "devices": rows, "notes": notes, "total_qps": total_qps, "total_mrs": total_mrs}
    vtext = (
        f"MLX {mlx_ev['mlx_version']}"
        if mlx_ev["mlx_version"]
        else f"MLX assumed {'.'.join(map(str, LATEST))}+"
    )
    where = f"{backend}, {n} ranks, {vtext}"
    for row in rows:
        out.extend(_row_findings(row, ev, where))
    if any(f.status == "fail" for f in out):
        return [f for f in out if f.status != "ok"]
    shared = [r for r in rows if len(r["local_ranks"]) > 1]
    if shared:
        out.append(
            warn(
                "; ".join(
                    f"{r['device']} is opened by ranks "
                    f"{', '.join(map(str, r['local_ranks']))} on this node"
                    for r in shared
                )
                + f": their needs are added up, but {SHARING}",
                evidence=ev,
            )
        )
    if out:
        return out
    if not use:
        return [ok(f"the hostfile names no RDMA device for {ctx.rank_label}", evidence=ev)]
    return [_sized(ctx, rows, ev, where)]


def run(ctx: NodeContext):
    inv, finding = _rdma.inventory_or_finding(ctx, "the device limits")
    if finding is not None:
        return finding
    out = []
    if verbs.rdma_role(ctx) == verbs.REQUIRED:
        out.extend(_capacity(ctx, inv))
    else:
        out.append(
            skip(
                "no jaccl hostfile: the queue pairs and memory regions needed depend on "
                "its backend and world size (pass --hostfile)",
                evidence={
                    **inv.evidence(),
                    "devices": {d.name: limits(d, ctx.is_mac) for d in inv.devices},
                },
            )
        )
    return out


CHECK = Check(
    code="MD204",
    name="rdma.capacity",
    title="RDMA queue pairs and memory regions",
    run=run,
    doc=Doc(
        meaning="""
Counts the queue pairs (QPs) and memory regions (MRs) that the hostfile's backend opens on each
RDMA device of this node, for the world size and the installed MLX version, and compares them
with the device limits.

JACCL mesh (jaccl): one QP per peer on the first device of that peer's cell before MLX 0.32.4;
from 0.32.4 one QP on every device of the cell, one wire each (MLX PR #4607; messages under
512 KiB use one wire); at most 8 ranks. MRs per peer device: 4 (MLX 0.30.1-0.30.5), 32 (0.30.6),
32 and 64 to the left/right neighbours, 96 with 2 ranks (0.31.0-0.32.0), 64 (0.32.1+, MLX PR
#3901). How 0.32.4 treats cells of unequal length is unknown (not stated in its headers). jaccl-ring: one QP and 32 MRs per cable per direction, at most 4 cables per
direction; with 2 ranks each device is opened twice (2 QPs, 64 MRs).

Limits: max_qp/max_mr as verbs reports them; on Thunderbolt the measured limits apply: 10 QPs per
device and about 100 MRs. A need above a limit fails; within 10 % of the approximate MR ceiling
warns. Whether processes on one device share these budgets is unknown.
""",
        why="""
Past a limit the group cannot form: the 11th QP fails with errno 16 EBUSY (MLX PR #4209), the
MR beyond the ceiling with "[jaccl] Register memory region failed" (MLX issue #3162).
""",
        action="""
Give each peer its own cable and device in the hostfile (from MLX 0.32.4 the mesh opens every
cable listed, so count them all), use jaccl-ring beyond 8 ranks, upgrade
MLX (0.32.1 uses fewer MRs per neighbour with 2 ranks), and kill stale ranks that still hold
queue pairs.
""",
        sources=(
            "MLX PR #3901 (MRs per neighbour)",
            "MLX PR #4607 (0.32.4: the mesh uses every cable of a cell, 512 KiB multi-wire minimum)",
            "MLX PR #4209 (10 QPs per device)",
            "MLX issue #3162 (about 100 MRs per device)",
        ),
    ),
)
