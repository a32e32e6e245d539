"""The figures judged (MD513): against ``--min-busbw`` (below it fails), against what the
``--link`` class should carry (:mod:`meshdoctor.probe.expected`: below its stated fraction
warns), and against a healthy run's baseline (:mod:`meshdoctor.probe.baseline`: below 80 %
warns, naming the op or the pair and its wire). Pure: the config and the probe section in,
results out; the baseline's comparison goes into ``probe["baseline"]``."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from meshdoctor.model import FAIL, OK, SKIP, WARN, Remediation, Result
from meshdoctor.probe import baseline as bl
from meshdoctor.probe import codes as C
from meshdoctor.probe.codes import result
from meshdoctor.probe.config import ProbeConfig
from meshdoctor.probe.expected import judge_class, link_class
from meshdoctor.probe.figures import format_rate
from meshdoctor.probe.report.view import MESH
from meshdoctor.probe.sizes import format_size_exact

LINK_REMEDY = (
    "Check the link named: the cable and port speed (a Thunderbolt 5 cable that trained at 40 "
    "Gb/s), and the path the hostfile routes through (`meshdoctor check --only MD205` on each "
    "Mac); then probe again with the same options."
)


def link_remedy(cfg: ProbeConfig) -> str:
    """What to do about a figure below its mark, for the mesh ``cfg`` probed: every rank on
    this machine measures loopback and the CPU, not a cable; JACCL (Macs over Thunderbolt):
    :data:`LINK_REMEDY`; another backend across hosts: the NIC's speed and the route (MD413)."""
    from meshdoctor.hostfile.locality import local_ranks
    from meshdoctor.mlx.backends import JACCL_BACKENDS
    from meshdoctor.text import shell_line

    hf = cfg.hostfile
    if len(local_ranks(hf)) == hf.world_size:
        return (
            "Every rank ran on this machine: the figures measure loopback and the CPU (other "
            "load on the box, more ranks than cores), not a cable. Probe again on a quiet "
            "machine with the same options, or compare with a baseline saved here."
        )
    if cfg.backend in JACCL_BACKENDS:
        return LINK_REMEDY
    route = (
        ["meshdoctor", "check"]
        + (["--hostfile", hf.path] if hf.path else [])
        + [
            "--only",
            "MD413",
        ]
    )
    return (
        "Check the link named: the NIC's port speed on both hosts (`ethtool IFACE`: a 25 GbE "
        f"port at 10 GbE) and the route the hostfile's IPs take (`{shell_line(route)}`); then "
        "probe again with the same options."
    )


def pct(fraction: float) -> str:
    """``0.38`` -> ``38 %``; under 1 % with its first digits: ``0.0015`` -> ``0.15 %``."""
    return f"{fraction * 100:.2g} %" if fraction < 0.01 else f"{fraction * 100:.0f} %"


def figures_to_judge(probe: Dict[str, Any]) -> List[Tuple[str, float]]:
    """``[(what, busbw_gbs), ...]``: every timed op (``all_sum 64MiB``) and every measured pair
    (``rank 2 -> 3``) of the probe section."""
    out = [
        (f"{f['op']} {format_size_exact(f['size_bytes'])}", float(f["busbw_gbs"]))
        for f in probe.get("ops") or []
        if "busbw_gbs" in f
    ]
    for c in (probe.get("pairs") or {}).get("cells") or []:
        out.append((f"rank {c['src']} -> {c['dst']}", float(c["busbw_gbs"])))
    return out


def _floor(floor: float, figs: List[Tuple[str, float]], remedy: str) -> Result:
    low = [(w, bw) for w, bw in figs if bw < floor]
    if low:
        shown = ", ".join(f"{w} at {format_rate(bw)} ({pct(bw / floor)})" for w, bw in low[:6])
        more = f" and {len(low) - 6} more" if len(low) > 6 else ""
        return result(
            C.JUDGEMENT,
            "probe.min_busbw",
            FAIL,
            f"busbw below --min-busbw {format_rate(floor)}: {shown}{more}",
            evidence={
                "min_busbw_gbs": floor,
                "below": [{"what": w, "busbw_gbs": b} for w, b in low],
            },
            remediation=Remediation(remedy),
            host=MESH,
        )
    lowest = min(figs, key=lambda x: x[1])
    return result(
        C.JUDGEMENT,
        "probe.min_busbw",
        OK,
        f"every figure at or above --min-busbw {format_rate(floor)} (lowest: {lowest[0]} at "
        f"{format_rate(lowest[1])})",
        evidence={"min_busbw_gbs": floor},
        host=MESH,
    )


def _link(name: str, figs: List[Tuple[str, float]], remedy: str) -> Result:
    cls = link_class(name)
    if cls.rate_gbs is None:
        return result(
            C.JUDGEMENT,
            "probe.link_class",
            SKIP,
            f"--link {name}: {cls.what} has no line rate to compare with ({cls.source})",
            host=MESH,
        )
    low = [(w, bw, judge_class(bw, cls)) for w, bw in figs]
    low = [(w, bw, j) for w, bw, j in low if j]
    ev = {
        "link": name,
        "rate_gbs": cls.rate_gbs,
        "warn_below": cls.warn_below,
        "source": cls.source,
    }
    if low:
        shown = ", ".join(f"{w} at {format_rate(bw)} ({pct(j[0])})" for w, bw, j in low[:6])
        more = f" and {len(low) - 6} more" if len(low) > 6 else ""
        return result(
            C.JUDGEMENT,
            "probe.link_class",
            WARN,
            f"below {pct(cls.warn_below)} of a {cls.what} ({format_rate(cls.rate_gbs)}): "
            f"{shown}{more}",
            evidence=dict(ev, below=[{"what": w, "busbw_gbs": b} for w, b, _ in low]),
            remediation=Remediation(remedy),
            host=MESH,
        )
    return result(
        C.JUDGEMENT,
        "probe.link_class",
        OK,
        f"every figure at or above {pct(cls.warn_below)} of a {cls.what} "
        f"({format_rate(cls.rate_gbs)})",
        evidence=ev,
        host=MESH,
    )


def _baseline(cfg: ProbeConfig, probe: Dict[str, Any]) -> Result:
    remedy = link_remedy(cfg)
    cmp = bl.compare(cfg.baseline, bl.snapshot(cfg, probe))
    probe["baseline"] = cmp
    if not cmp["comparable"]:
        return result(
            C.JUDGEMENT,
            "probe.baseline",
            WARN,
            f"the baseline is not comparable with this run: {cmp['why']}",
            evidence=cmp,
            remediation=Remediation(
                "Compare with a baseline saved with the same backend, world size and dtype "
                "(--save-baseline FILE on a healthy run)."
            ),
            host=MESH,
        )
    if not cmp["compared"]:
        return result(
            C.JUDGEMENT,
            "probe.baseline",
            WARN,
            "no figure of this run has one in the baseline (another op, size or pair)",
            evidence=cmp,
            remediation=Remediation("Probe with the options the baseline was saved with."),
            host=MESH,
        )
    if cmp["below"]:
        shown = ", ".join(
            f"{c['what']} at {pct(c['fraction'])} of its baseline"
            + (f" (wire {c['wire']})" if c["wire"] else "")
            for c in cmp["below"][:6]
        )
        more = f" and {len(cmp['below']) - 6} more" if len(cmp["below"]) > 6 else ""
        return result(
            C.JUDGEMENT,
            "probe.baseline",
            WARN,
            f"{shown}{more}",
            evidence=cmp,
            remediation=Remediation(remedy),
            host=MESH,
        )
    low = min(cmp["compared"], key=lambda c: c["fraction"])
    return result(
        C.JUDGEMENT,
        "probe.baseline",
        OK,
        f"{len(cmp['compared'])} figure(s) at or above {pct(bl.BELOW)} of their baseline "
        f"(lowest: {low['what']} at {pct(low['fraction'])})",
        evidence=cmp,
        host=MESH,
    )


def judgement_results(cfg: ProbeConfig, probe: Dict[str, Any]) -> List[Result]:
    """The MD513 results for the judgements ``cfg`` asks for; none without figures."""
    figs = figures_to_judge(probe)
    if not figs:
        return []
    res = []
    if cfg.min_busbw_gbs:
        res.append(_floor(float(cfg.min_busbw_gbs), figs, link_remedy(cfg)))
    if cfg.link and link_class(cfg.link) is not None:
        res.append(_link(cfg.link, figs, link_remedy(cfg)))
    if cfg.baseline is not None:
        res.append(_baseline(cfg, probe))
    return res
