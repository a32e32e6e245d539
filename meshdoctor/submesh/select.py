"""Which hosts and cables of a hostfile passed: a fleet check's results or a ``probe --pairs``
matrix in, a :class:`Split` out. Pure: data in, data out.

A host fails when a result names it (its own node check, or a cross-node check tagged with it)
with status fail or error (also warn under ``--strict``), or when it did not answer (MD402). An
RDMA edge that is down (MD404's ``bad`` devices, a device MD202 finds missing or not active)
costs only its cables: a cable is kept when the
device at each end is active, and a pair of hosts whose every cable is down cannot both stay in
a JACCL mesh (it connects every pair: MLX distributed documentation, "JACCL"): the host with the
most such pairs goes first, then the later rank. A result about the whole mesh that names no
host (the hostfile's own problems, MD401) leaves no sub-mesh to vouch for (``blocked``).

Operators ask for the passing and failing node lists (AMD Primus PR #712) and pairs below a
floor filtered out (ROCm cvs PR #280).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from meshdoctor.codes.engine import HEALTHY_SUBMESH
from meshdoctor.discover import exported, exporters
from meshdoctor.hostfile.locality import machines
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.model import ERROR, FAIL, WARN, Result

SUBMESH_CODE = HEALTHY_SUBMESH.code  # this split's own result (meshdoctor.submesh.write)

Pair = Tuple[int, int]  # (rank, peer rank), ordered


@dataclass
class Split:
    """The hosts of a hostfile split by a verdict: ``passing`` (ssh names, rank order),
    ``failing`` (host -> why, one line per reason), ``cables`` ((rank, peer) -> the devices kept
    of that rdma cell, only for cells that lost a cable), ``blocked`` (why no sub-mesh can be
    vouched for; empty when one can) and ``ranks`` (host -> its ranks in the hostfile)."""

    passing: List[str]
    failing: Dict[str, List[str]]
    cables: Dict[Pair, Tuple[str, ...]] = field(default_factory=dict)
    blocked: List[str] = field(default_factory=list)
    ranks: Dict[str, List[int]] = field(default_factory=dict)

    @property
    def hosts(self) -> List[str]:
        return list(self.ranks)


def _bad(status: str, strict: bool) -> bool:
    return status in (FAIL, ERROR) or (strict and status == WARN)


def _cells(hf: Hostfile, i: int, j: int) -> Tuple[List[str], List[str]]:
    return hf.hosts[i].devices_to(j), hf.hosts[j].devices_to(i)


def _cut_cables(
    hf: Hostfile, owner: Mapping[int, str], down: Mapping[str, Set[str]]
) -> Tuple[Dict[Pair, Tuple[str, ...]], List[Tuple[str, str]]]:
    """The rdma cells that lose a cable (a device listed ``down`` on its host) and the host pairs
    left without any cable. Cable k of an edge is device k of each end's cell (mlx.launch's
    rdma matrix lists one device per cable, in the same order at both ends); cells of unequal
    length keep each end's active devices."""
    cut: Dict[Pair, Tuple[str, ...]] = {}
    dead: List[Tuple[str, str]] = []
    n = hf.world_size
    for i in range(n):
        for j in range(i + 1, n):
            hi, hj = owner[i], owner[j]
            if hi == hj:
                continue
            a, b = _cells(hf, i, j)
            if not a and not b:
                continue
            bad_i, bad_j = down.get(hi, set()), down.get(hj, set())
            if len(a) == len(b):
                keep = [k for k in range(len(a)) if a[k] not in bad_i and b[k] not in bad_j]
                ka, kb = [a[k] for k in keep], [b[k] for k in keep]
            else:
                ka, kb = [d for d in a if d not in bad_i], [d for d in b if d not in bad_j]
            if (ka, kb) != (a, b):
                cut[(i, j)], cut[(j, i)] = tuple(ka), tuple(kb)
            if not ka or not kb:
                dead.append((hi, hj))
    return cut, dead


def _drop_conflicts(
    candidates: List[str], dead: Iterable[Tuple[str, str]], failing: Dict[str, List[str]], why: str
) -> List[str]:
    """``candidates`` less the fewest hosts (greedy: most conflicts first, then the later one)
    so that no pair of ``dead`` is left; each host dropped gets ``why`` and its peers in
    ``failing``."""
    keep = list(candidates)
    pairs = [p for p in dead if p[0] in keep and p[1] in keep]
    while pairs:
        count: Dict[str, int] = {}
        for a, b in pairs:
            count[a] = count.get(a, 0) + 1
            count[b] = count.get(b, 0) + 1
        worst = max(keep, key=lambda h: (count.get(h, 0), keep.index(h)))
        peers = sorted({b if a == worst else a for a, b in pairs if worst in (a, b)})
        failing.setdefault(worst, []).append(f"{why} {', '.join(peers)}")
        keep.remove(worst)
        pairs = [p for p in pairs if worst not in p]
    return keep


def from_results(hf: Hostfile, results: Sequence[Result], strict: bool = False) -> Split:
    """The split a fleet check's ``results`` give (:func:`meshdoctor.checker.fleet.check_fleet`;
    the probe's gate copies them into its verdict). ``strict``: warnings fail a host too."""
    order = machines(hf)
    owner = {r: h for h, rs in order.items() for r in rs}
    failing: Dict[str, List[str]] = {}
    down: Dict[str, Set[str]] = {}
    blocked: List[str] = []
    jaccl = hf.effective_backend in JACCL_BACKENDS
    cable_checks = exporters("cables_down")  # what they find costs cables, not hosts
    for r in results:
        if r.code == SUBMESH_CODE or not _bad(r.status, strict):
            continue
        ev = r.evidence or {}
        device = exported(r, "device_down")  # a device the hostfile names, missing or down
        if jaccl and r.status == FAIL and device:
            down.setdefault(r.host, set()).add(str(device))
            continue
        cables = exported(r, "cables_down")
        if cables:  # an edge down: its cables, not its hosts
            for b in cables:
                down.setdefault(str(b.get("host")), set()).add(str(b.get("device")))
            continue
        named = [h for h in (ev.get("hosts") or [r.host]) if h in order]
        if r.code in cable_checks and len(named) > 1:
            continue  # "not assessed": the host that did not answer fails on its own (MD402)
        if not named:
            blocked.append(f"{r.code} {r.summary}")
            continue
        for h in named:
            failing.setdefault(h, []).append(f"{r.code} {r.summary}")
    cut: Dict[Pair, Tuple[str, ...]] = {}
    candidates = [h for h in order if h not in failing]
    if jaccl:
        cut, dead = _cut_cables(hf, owner, down)
        candidates = _drop_conflicts(candidates, dead, failing, "no working cable to")
    return Split(candidates, failing, cut, blocked, dict(order))


def from_pairs(hf: Hostfile, pairs: Mapping[str, Any]) -> Split:
    """The split a ``probe --pairs`` matrix gives (``probe.pairs`` of the verdict,
    :func:`meshdoctor.probe.figures.pair_figures`): a pair of ranks with wrong values or no
    figure is a pair that cannot both stay; the fewest hosts are dropped (greedy, as for cables)."""
    order = machines(hf)
    owner = {r: h for h, rs in order.items() for r in rs}
    bad: List[Tuple[str, str]] = []
    for c in pairs.get("cells") or []:
        if c.get("wrong"):
            bad.append((owner[int(c["src"])], owner[int(c["dst"])]))
    for s, d in pairs.get("missing") or []:
        bad.append((owner[int(s)], owner[int(d)]))
    failing: Dict[str, List[str]] = {}
    dead = [(a, b) for a, b in bad if a != b]
    blocked = [f"ranks of {a} fail between themselves" for a, b in bad if a == b]
    for a in {a for a, b in bad if a == b}:
        failing.setdefault(a, []).append("send/recv between its own ranks failed")
    candidates = [h for h in order if h not in failing]
    keep = _drop_conflicts(candidates, dead, failing, "send/recv failed with")
    return Split(keep, failing, {}, blocked if not keep else [], dict(order))


def passing_ranks(split: Split) -> int:
    """How many ranks the passing hosts hold."""
    return sum(len(split.ranks.get(h, ())) for h in split.passing)


def restrict(hf: Hostfile, split: Split) -> Optional[Hostfile]:
    """``hf`` restricted to ``split.passing``: their entries in rank order, ranks renumbered
    from 0, each rdma row cut to the kept ranks' columns and to the kept cables; ``backend`` and
    ``envs`` as written. None when the passing hosts hold fewer than two ranks (nothing worth
    launching; one host with three ring ranks is a mesh)."""
    from meshdoctor.hostfile.types import Host

    if passing_ranks(split) < 2:
        return None
    keep = [r for h in split.passing for r in split.ranks[h]]
    keep.sort()
    hosts = []
    for new, old in enumerate(keep):
        h = hf.hosts[old]
        row: List[Any] = []
        if h.rdma_row:
            for peer in keep:
                cell = h.rdma[peer] if peer < len(h.rdma) else None
                if (old, peer) in split.cables:
                    devs = split.cables[(old, peer)]
                    cell = devs[0] if len(devs) == 1 and isinstance(cell, str) else tuple(devs)
                row.append(cell)
        hosts.append(Host(new, h.ssh, h.ips, tuple(row), h.rdma_row))
    return Hostfile(tuple(hosts), backend=hf.backend, envs=hf.envs)
