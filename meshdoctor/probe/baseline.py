"""A healthy run's figures kept as a baseline (``probe --save-baseline FILE``) and a later run
compared with them (``probe --baseline FILE``): per op and size, and per pair of ``--pairs``
with its wire (the RDMA devices of a JACCL cell, else the receiver's address).

The file is JSON: ``{"format": 1, "backend", "world_size", "dtype", "hosts": [ssh names],
"ops": [{"op", "size_bytes", "busbw_gbs"}], "pairs": [{"src", "dst", "size_bytes", "wire",
"busbw_gbs"}]}``. :func:`snapshot` and :func:`compare` are pure; :func:`read` and
:func:`write` are the only file access (a bounded read; a write to a temporary file beside the
target, fsync, rename).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

from meshdoctor.probe.sizes import format_size_exact

FORMAT = 1
MAX_BYTES = 4 << 20  # a baseline is small: anything larger is not one
BELOW = 0.8  # a figure under this fraction of its baseline is reported


class BaselineError(ValueError):
    """The baseline file cannot be read or is not a baseline; the message says which."""


def wire(hostfile: Any, src: int, dst: int) -> str:
    """What carries ``src`` -> ``dst``: the RDMA devices the hostfile lists for that cell
    (JACCL, e.g. ``rdma_en4``), else the receiver's first address, else ``""``."""
    hosts = hostfile.hosts
    try:
        devices = hosts[src].devices_to(dst)
    except (AttributeError, IndexError, TypeError):
        devices = ()
    if devices:
        return ",".join(str(d) for d in devices)
    ips = getattr(hosts[dst], "ips", ()) if dst < len(hosts) else ()
    return str(ips[0]) if ips else ""


def snapshot(cfg: Any, probe: Mapping[str, Any]) -> Dict[str, Any]:
    """The baseline document of a run (``cfg``: its ProbeConfig, ``probe``: the verdict's
    probe section)."""
    ops = [
        {"op": f["op"], "size_bytes": f["size_bytes"], "busbw_gbs": f["busbw_gbs"]}
        for f in probe.get("ops") or []
        if "busbw_gbs" in f
    ]
    pairs = [
        {
            "src": c["src"],
            "dst": c["dst"],
            "size_bytes": int(cfg.size),
            "wire": wire(cfg.hostfile, c["src"], c["dst"]),
            "busbw_gbs": c["busbw_gbs"],
        }
        for c in (probe.get("pairs") or {}).get("cells") or []
    ]
    return {
        "format": FORMAT,
        "backend": cfg.backend,
        "world_size": cfg.world_size,
        "dtype": cfg.dtype,
        "hosts": [h.ssh for h in cfg.hostfile.hosts],
        "ops": ops,
        "pairs": pairs,
    }


def compare(base: Mapping[str, Any], now: Mapping[str, Any]) -> Dict[str, Any]:
    """``now`` (a :func:`snapshot`) against ``base``: ``{"comparable": bool, "why": str,
    "compared": [...], "below": [...]}``; each entry has ``what`` (``all_sum 64MiB`` or ``rank 2
    -> 3``), ``wire`` (pairs), ``busbw_gbs``, ``baseline_gbs`` and ``fraction`` (now / base);
    ``below`` are those under :data:`BELOW`. A baseline of another backend, world size or
    dtype is not comparable (``why`` says which)."""
    for key in ("backend", "world_size", "dtype"):
        if base.get(key) != now.get(key):
            return {
                "comparable": False,
                "why": f"the baseline's {key} is {base.get(key)!r}, this run's {now.get(key)!r}",
                "compared": [],
                "below": [],
            }
    compared: List[Dict[str, Any]] = []
    old_ops = {(o["op"], o["size_bytes"]): o for o in base.get("ops") or []}
    for o in now.get("ops") or []:
        b = old_ops.get((o["op"], o["size_bytes"]))
        if b and b.get("busbw_gbs"):
            compared.append(
                _entry(f"{o['op']} {format_size_exact(int(o['size_bytes']))}", "", o, b)
            )
    old_pairs = {(p["src"], p["dst"], p["size_bytes"]): p for p in base.get("pairs") or []}
    for p in now.get("pairs") or []:
        b = old_pairs.get((p["src"], p["dst"], p["size_bytes"]))
        if b and b.get("busbw_gbs"):
            compared.append(_entry(f"rank {p['src']} -> {p['dst']}", p.get("wire", ""), p, b))
    return {
        "comparable": True,
        "why": "",
        "compared": compared,
        "below": [c for c in compared if c["fraction"] < BELOW],
    }


def _entry(what: str, wire_name: str, now: Mapping[str, Any], base: Mapping[str, Any]):
    frac = float(now["busbw_gbs"]) / float(base["busbw_gbs"])
    return {
        "what": what,
        "wire": wire_name,
        "busbw_gbs": now["busbw_gbs"],
        "baseline_gbs": base["busbw_gbs"],
        "fraction": round(frac, 4),
    }


def read(path: str) -> Dict[str, Any]:
    """The baseline document in ``path`` (at most :data:`MAX_BYTES`); raises
    :class:`BaselineError` naming what is wrong."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise BaselineError(f"{path} is larger than {MAX_BYTES} bytes: not a probe baseline")
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise BaselineError(f"{path} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BaselineError(
            f"{path} is not a probe baseline (format {FORMAT}); write one with "
            "`meshdoctor probe --save-baseline FILE` on a healthy mesh"
        )
    for key in ("ops", "pairs"):
        if not isinstance(doc.get(key, []), list):
            raise BaselineError(f"{path}: {key!r} is not a list")
    return doc


def write(path: str, doc: Mapping[str, Any]) -> Optional[str]:
    """Write ``doc`` to ``path`` (:func:`meshdoctor.receipts.write_path`: a regular file
    replaced atomically, a device or FIFO written in place); returns None, or the reason it
    could not be written."""
    from meshdoctor.receipts import write_path

    try:
        write_path(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    return None
