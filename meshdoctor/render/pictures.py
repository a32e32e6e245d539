"""Pictures of a verdict, for the operator who would rather look than read: the ``probe
--pairs`` bandwidth matrix as a heat map with the figure in each cell (:func:`pairs_heatmap`),
and the mesh a hostfile describes with what ``check`` found on it (:func:`mesh_graph`: a node
per rank, an edge per cable or ring link, failing hosts and edges in red, the ring order for the
ring backends).

Drawn with matplotlib (its Agg and SVG backends, no display), the optional extra
``meshdoctor[plot]``: one package a Python user expects for plots, that writes both SVG and PNG
without a system library, kept out of the base install and imported only when a picture is
asked for. The file's format follows its suffix (``.svg``, ``.png``); the file is replaced
atomically (:func:`meshdoctor.receipts.write_path`). Sources: matplotlib's ``imshow`` and
``annotate`` (the "annotated heatmap" example of its gallery).
"""

from __future__ import annotations

import io
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from meshdoctor.model import Result
from meshdoctor.text import printable

FORMATS = ("svg", "png")
INSTALL = "pip install 'meshdoctor[plot]'"
BAD = ("fail", "error")
RING_BACKENDS = ("ring", "jaccl-ring")


class PictureError(Exception):
    """A picture that cannot be drawn: matplotlib missing, a suffix of no known format."""


def picture_format(path: str) -> str:
    """``svg`` or ``png`` from ``path``'s suffix; raises :class:`PictureError` for another."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise PictureError(f"{path}: the picture's suffix must be .svg or .png")
    return ext


def require(path: str) -> str:
    """The format of ``path`` once matplotlib is known to import (:class:`PictureError`
    otherwise, saying how to install it): what a command checks before it runs anything."""
    fmt = picture_format(path)
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:  # found, not imported (it is slow)
        raise PictureError(f"drawing {path} needs matplotlib, the optional extra: {INSTALL}")
    return fmt


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)  # no display; SVG is written by its own backend
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG (searchable, parsed)
    plt.rcParams["svg.hashsalt"] = "meshdoctor"  # the same drawing gives the same ids
    return plt


def _label(text: object) -> str:
    """Text from outside (a host name) as a plain label: control characters escaped
    (:func:`meshdoctor.text.printable`), ``$`` never read as matplotlib's math."""
    return printable(text).replace("$", r"\$")


def _save(fig, path: str) -> None:
    from meshdoctor.receipts import write_path

    buf = io.BytesIO()
    fmt = picture_format(path)
    meta = {"Date": None} if fmt == "svg" else {}  # the same drawing gives the same file
    fig.savefig(buf, format=fmt, bbox_inches="tight", dpi=120, metadata=meta)
    write_path(path, buf.getvalue())


def pairs_heatmap(pairs: Dict[str, Any], path: str, labels: Optional[Sequence[str]] = None) -> None:
    """Draw the ``probe --pairs`` section (``busbw_gbs[src][dst]`` in GB/s, ``wrong``, the
    ``slowest`` pair; the verdict's ``$defs/probe_pairs``) as an N x N heat map at ``path``:
    rows the sending rank, columns the receiving one, each measured cell holding its busbw
    (``12.3``), a cell with wrong values marked ``wrong N``, one not measured ``-``, the slowest
    pair outlined. ``labels``: one per rank (``rank 0 m1``), default ``rank i``."""
    plt = _pyplot()
    m = pairs.get("busbw_gbs") or []
    wrong = pairs.get("wrong") or []
    n = len(m)
    labels = [_label(x) for x in labels] if labels else [f"rank {i}" for i in range(n)]
    vals = [[(m[i][j] if m[i][j] is not None else math.nan) for j in range(n)] for i in range(n)]
    finite = [v for row in vals for v in row if not math.isnan(v)]
    top = max(finite) if finite else 1.0
    side = max(3.0, 0.9 * n + 1.5)
    fig, ax = plt.subplots(figsize=(side + 1.2, side))
    im = ax.imshow(vals, cmap="viridis", vmin=0, vmax=top or 1.0)
    fig.colorbar(im, ax=ax, label="busbw (GB/s)", shrink=0.8)
    ax.set_xticks(range(n), labels=labels, rotation=45, ha="right")
    ax.set_yticks(range(n), labels=labels)
    ax.set_xlabel("receiving rank (dst)")
    ax.set_ylabel("sending rank (src)")
    for i in range(n):
        for j in range(n):
            w = wrong[i][j] if i < len(wrong) and j < len(wrong[i]) else None
            v = vals[i][j]
            if w:
                text, colour = f"wrong {w}", "red"
            elif math.isnan(v):
                text, colour = "-", "grey"
            else:
                text = f"{v:.2f}" if v < 10 else f"{v:.1f}"
                colour = "white" if v < 0.6 * (top or 1.0) else "black"
            ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=9)
    slow = pairs.get("slowest")
    if slow:
        import matplotlib.patches as patches

        s, d = slow["src"], slow["dst"]
        ax.add_patch(
            patches.Rectangle((d - 0.5, s - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5)
        )
        ax.set_title(f"probe --pairs: busbw per pair, slowest {s}->{d} (outlined)")
    else:
        ax.set_title("probe --pairs: busbw per pair")
    _save(fig, path)
    plt.close(fig)


def _failing(results: Sequence[Result]) -> Tuple[Set[str], Set[frozenset]]:
    """The hosts and the edges (``frozenset({a, b})``) that a failing or erroring result
    names: its ``host``, its evidence's ``edge`` or a ``hosts`` list of two."""
    hosts: Set[str] = set()
    edges: Set[frozenset] = set()
    for r in results:
        if r.status not in BAD:
            continue
        ev = r.evidence or {}
        edge = ev.get("edge")
        named = ev.get("hosts")
        if isinstance(edge, (list, tuple)) and len(edge) == 2:
            edges.add(frozenset(map(str, edge)))
        elif isinstance(named, (list, tuple)) and len(named) == 2:
            edges.add(frozenset(map(str, named)))
        elif isinstance(named, (list, tuple)) and len(named) == 1:
            hosts.add(str(named[0]))
        else:
            hosts.add(r.host)
    return hosts, edges


def mesh_links(hostfile) -> Tuple[List[Tuple[int, int, str]], bool]:
    """``([(rank a, rank b, label), ...], ring)`` of a hostfile
    (:class:`meshdoctor.hostfile.model.Hostfile`): for the ring backends each rank to the next
    and the last to the first (the ring order, as MLX's ring backend connects them), labelled
    ``1``, ``2``... in ring order; otherwise one edge per pair whose rdma matrix names a device
    on either end (a cable), labelled with the devices (``rdma_en3 / rdma_en5``)."""
    hosts = hostfile.hosts
    n = len(hosts)
    if hostfile.effective_backend in RING_BACKENDS:
        if n < 2:
            return [], True
        pairs = [(i, (i + 1) % n) for i in range(n if n > 2 else 1)]
        return [(a, b, str(k + 1)) for k, (a, b) in enumerate(pairs)], True
    out = []
    for i in range(n):
        for j in range(i + 1, n):
            a, b = hosts[i].devices_to(j), hosts[j].devices_to(i)
            if a or b:
                out.append((i, j, f"{'+'.join(a) or '-'} / {'+'.join(b) or '-'}"))
    return out, False


def mesh_graph(hostfile, results: Sequence[Result], path: str) -> None:
    """Draw the mesh of ``hostfile`` at ``path``: a node per rank on a circle (``m1`` and its
    rank), an edge per cable or ring link (:func:`mesh_links`), failing hosts and edges (a
    ``fail`` or ``error`` result naming them, :func:`_failing`) in red with a cross on the host,
    the ring order numbered on its links; the title says the backend and how many are failing."""
    plt = _pyplot()
    hosts = hostfile.hosts
    n = len(hosts)
    names = [h.ssh or (h.ips[0] if h.ips else f"rank {h.rank}") for h in hosts]
    shown = [_label(x) for x in names]
    bad_hosts, bad_edges = _failing(results)
    links, ring = mesh_links(hostfile)
    pos = [
        (
            math.cos(math.pi / 2 - 2 * math.pi * i / max(n, 1)),
            math.sin(math.pi / 2 - 2 * math.pi * i / max(n, 1)),
        )
        for i in range(n)
    ]
    side = max(4.0, 1.2 * math.sqrt(max(n, 1)) + 3.5)
    fig, ax = plt.subplots(figsize=(side, side))
    ax.set_aspect("equal")
    ax.axis("off")
    failing_links = 0
    for a, b, label in links:
        broken = frozenset({names[a], names[b]}) in bad_edges
        failing_links += broken
        (xa, ya), (xb, yb) = pos[a], pos[b]
        colour = "red" if broken else "#4a7"
        if ring:
            ax.annotate(
                "",
                xy=(xb, yb),
                xytext=(xa, ya),
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": colour,
                    "lw": 2.5 if broken else 1.8,
                    "shrinkA": 22,
                    "shrinkB": 22,
                },
            )
        else:
            ax.plot(
                [xa, xb],
                [ya, yb],
                color=colour,
                lw=2.5 if broken else 1.5,
                ls="--" if broken else "-",
                zorder=1,
            )
        ax.text(
            (xa + xb) / 2,
            (ya + yb) / 2,
            label,
            fontsize=8,
            ha="center",
            va="center",
            color=colour,
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"},
        )
    for i, (x, y) in enumerate(pos):
        broken = names[i] in bad_hosts
        ax.scatter(
            [x],
            [y],
            s=1400,
            color="#fdd" if broken else "#def",
            edgecolors="red" if broken else "#357",
            linewidths=2.5 if broken else 1.5,
            zorder=2,
        )
        ax.text(
            x,
            y,
            f"{shown[i]}\nrank {hosts[i].rank}",
            ha="center",
            va="center",
            fontsize=9,
            zorder=3,
            color="red" if broken else "black",
        )
        if broken:
            ax.text(x + 0.17, y + 0.17, "x", color="red", fontsize=14, fontweight="bold", zorder=3)
    backend = hostfile.effective_backend
    what = "ring order" if ring else "cables (rdma devices of each end)"
    ax.set_title(
        f"{n} hosts, backend {backend}: {what}; failing: {len(bad_hosts & set(names))} hosts, "
        f"{failing_links} links",
        fontsize=10,
    )
    lim = 1.45
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    _save(fig, path)
    plt.close(fig)
