"""The probe's measures: per-op correctness and bandwidth (a value mismatch is a correctness
failure), GPU clocks held back while it ran, the --pairs matrix and the --soak hang rate, put
into the ``probe`` section and the results by :func:`add_measures`. The numbers come from
:mod:`meshdoctor.probe.figures` (algbw, busbw, medians, nccl-tests doc/PERFORMANCE.md) and
:func:`meshdoctor.probe.soak.figures`."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from meshdoctor.model import ERROR, FAIL, OK, WARN, Remediation, Result
from meshdoctor.probe.codes import result  # a Result titled with its probe code's entry
from meshdoctor.probe import codes as C
from meshdoctor.probe import figures, soak
from meshdoctor.mlx.defects import hang_note
from meshdoctor.probe.config import ProbeConfig, oversubscription, plan_pairs
from meshdoctor.probe.outcome import LaunchOutcome, ProbeRun
from meshdoctor.probe.report.judgement import judgement_results
from meshdoctor.probe.report.view import MESH
from meshdoctor.probe.sizes import format_size_exact


WRONG_REMEDY = (
    "Silent corruption: do not run jobs on this mesh. Re-seat cables, reboot the nodes involved, "
    "probe again."
)


def _correctness_result(f: Dict[str, Any]) -> Optional[Result]:
    """One op's #wrong (and all_gather's digests): a value mismatch fails; None for an op with
    no timed iteration (bare_all_sum always has its result)."""
    op = f["op"]
    bad_digest = f.get("digests_ok") is False
    if f["wrong"] or bad_digest:
        txt = (
            f"{op}: #wrong {f['wrong']} of {f['checked']} elements checked (all ranks, "
            "all iterations)"
        )
        if bad_digest:
            mm = f["digest_mismatches"]
            txt += (
                f"; {len(mm)} gathered slice(s) arrived with a different digest than "
                f"sent (first: rank {mm[0]['slice_of_rank']}'s slice at rank "
                f"{mm[0]['received_at_rank']})"
            )
        return result(
            C.WRONG,
            f"probe.{op}",
            FAIL,
            txt,
            evidence={k: f.get(k) for k in ("wrong", "checked", "digest_mismatches")},
            remediation=Remediation(WRONG_REMEDY),
            host=MESH,
        )
    if f.get("iters") or op == "bare_all_sum":
        return result(
            C.WRONG,
            f"probe.{op}",
            OK,
            f"{op}: #wrong 0 of {f['checked']} elements checked (all ranks, "
            "all iterations)" + (", digests match" if op == "all_gather" else ""),
            evidence={"checked": f["checked"]},
            host=MESH,
        )
    return None


def _rounded_note(f: Dict[str, Any], asked: int, n: int, dtype: str) -> str:
    """Why an op moved another size than ``asked`` bytes (``""`` when it did not): all_gather and
    sum_scatter split the message into ``n`` equal shares of whole ``dtype`` elements, so the
    size is rounded down to a multiple of ``n`` elements."""
    got = f.get("size_bytes")
    if not isinstance(got, int) or got == asked:
        return ""
    return (
        f"; size rounded from {format_size_exact(asked)} to {format_size_exact(got)}: "
        f"{f['op']} splits the message into {n} equal shares of whole {dtype} elements"
    )


def _bandwidth_result(f: Dict[str, Any], note: str = "") -> Result:
    """One timed op's algbw, busbw and times (:func:`figures.bandwidth_line`), and ``note``
    (:func:`_rounded_note`) when the size moved is not the one asked for."""
    ev = {k: f[k] for k in ("size_bytes", "time_s", "algbw_gbs", "busbw_gbs", "iters")}
    if note:
        ev["size_note"] = note[2:]
    return result(
        C.BANDWIDTH,
        f"probe.{f['op']}",
        OK,
        figures.bandwidth_line(f) + note,
        evidence=ev,
        host=MESH,
    )


def _op_results(
    figs: List[Dict[str, Any]], asked: Optional[int] = None, n: int = 1, dtype: str = ""
) -> List[Result]:
    res: List[Result] = []
    for f in figs:
        if f.get("skipped"):
            res.append(
                result(C.WRONG, f"probe.{f['op']}", "skip", f"{f['op']}: {f['skipped']}", host=MESH)
            )
            continue
        r = _correctness_result(f)
        if r is not None:
            res.append(r)
        if "busbw_gbs" in f:
            note = _rounded_note(f, asked, n, dtype) if asked is not None else ""
            res.append(_bandwidth_result(f, note))
    return res


def _slowdown_result(slow: List[Dict[str, Any]]) -> Result:
    """GPU clocks held back for power or heat while the probe ran (NVML violation time)."""
    what = ", ".join(f"GPU {s['gpu']} {s['reason']} {s['ms']:.1f} ms" for s in slow)
    return result(
        C.BANDWIDTH,
        "probe.gpu_clocks",
        WARN,
        f"GPU clocks were held back during the probe ({what}): the figures may be "
        "below what these GPUs and links give",
        evidence={"slowdown": slow},
        remediation=Remediation(
            "Check cooling and power limits (nvidia-smi -q -d PERFORMANCE,POWER, "
            "`meshdoctor check` MD113), then probe again."
        ),
        host=MESH,
    )


def _pairs_result(pf: Dict[str, Any]) -> Optional[Result]:
    """--pairs: a pair with wrong values or no figure fails; else the slowest pair."""
    bad = [c for c in pf["cells"] if c["wrong"]]
    if bad or pf["missing"]:
        what = [f"{c['src']}->{c['dst']} #wrong {c['wrong']}" for c in bad] + [
            f"{s}->{d} not measured" for s, d in pf["missing"]
        ]
        return result(
            C.PAIRS,
            "probe.pairs",
            FAIL,
            "pairs failing: " + ", ".join(what),
            evidence=pf,
            remediation=Remediation(
                "Check the link between the ranks named (cable, port state, hostfile order)."
            ),
            host=MESH,
        )
    if pf["slowest"]:
        s = pf["slowest"]
        return result(
            C.PAIRS,
            "probe.pairs",
            OK,
            f"{len(pf['cells'])} pairs measured; slowest {s['src']}->"
            f"{s['dst']} at {figures.format_rate(s['busbw_gbs'])}",
            evidence={"slowest": s, "unsupported": pf["unsupported"]},
            host=MESH,
        )
    return None


def _soak_result(sk: Dict[str, Any], complete: bool, note: str = "") -> Result:
    """--soak: any hang fails; a soak that did not complete (the last launch did not end ok)
    warns; else ok. ``note``: the known defect of the ranks' MLX version that explains such
    hangs (:func:`meshdoctor.mlx.defects.hang_note`), or ``""``."""
    hangs, attempted = sk["hangs"], sk["calls"]
    rate = hangs / attempted if attempted else 0.0
    status = FAIL if hangs else (OK if complete else WARN)
    summary = (
        f"soak: {hangs} hang(s) in {attempted} calls ({rate:.1%}), {sk['relaunches']} relaunch(es)"
    )
    if status == WARN:
        summary += "; the soak did not complete (see the other findings)"
    return result(
        C.SOAK,
        "probe.soak",
        status,
        summary,
        evidence=sk,
        remediation=Remediation(
            (note + " " if note else "")
            + "Gate long jobs on a clean soak; report the hang rate upstream with the stacks."
        )
        if hangs
        else None,
        host=MESH,
    )


def _oversubscribed_result(over: Dict[str, Any], out: LaunchOutcome) -> Result:
    """More ranks than CPUs on this host: a warning with the counts and the deadline used."""
    return result(
        C.OVERSUBSCRIBED,
        "probe.oversubscribed",
        WARN,
        f"{over['ranks']} ranks on this host's {over['cpus']} CPUs (oversubscribed "
        f"x{over['factor']:g}): the ranks take turns on the cores, so the figures measure the "
        f"scheduler; the per-step deadline was {out.deadline_s:.1f} s",
        evidence=dict(over, deadline_s=round(out.deadline_s, 3)),
        remediation=Remediation(
            f"Probe with at most {over['cpus']} rank(s) on this host, or read the figures as "
            "a load test."
        ),
        host=MESH,
    )


def _nothing_ran(
    cfg: ProbeConfig, out: LaunchOutcome, figs: List[Dict[str, Any]]
) -> Optional[Result]:
    """A launch that ended well but where every op asked for was skipped (the backend lacks
    it, :data:`meshdoctor.probe.worker.OP_SUPPORT`) and no pair was measured ran no collective:
    an ``error`` (exit 3, could not assess), so ``probe --op X || exit 1`` does not pass."""
    if out.kind != "ok" or not figs or not all(f.get("skipped") for f in figs):
        return None
    if cfg.pairs and cfg.backend != "nccl":
        return None  # the pair matrix ran send/recv
    why = "; ".join(f"{f['op']}: {f['skipped']}" for f in figs)
    return result(
        C.COVERAGE,
        "probe.coverage",
        ERROR,
        f"no collective ran: every op asked for was skipped ({why})",
        evidence={"skipped_ops": [{"op": f["op"], "reason": f["skipped"]} for f in figs]},
        remediation=Remediation(
            "Probe an op the backend has (all_sum, all_gather), choose a backend that has "
            "the op, or upgrade MLX to the version named."
        ),
        host=MESH,
    )


def add_measures(
    run: ProbeRun, out: LaunchOutcome, probe: Dict[str, Any], res: List[Result]
) -> None:
    """Per-op figures, GPU clock slowdown, pairs and soak: into ``probe`` and ``res``."""
    cfg = run.cfg
    n = len(out.ranks)
    figs = figures.op_figures({st.rank: st.results for st in out.ranks}, n)
    probe["ops"] = figs
    probe["skipped_ops"] = [
        {"op": f["op"], "reason": f["skipped"]} for f in figs if f.get("skipped")
    ]
    res.extend(_op_results(figs, cfg.size, n, cfg.dtype))
    nothing = _nothing_ran(cfg, out, figs)
    if nothing is not None:
        res.append(nothing)
    if out.gpu_slowdown:
        probe["gpu_slowdown"] = out.gpu_slowdown
        res.append(_slowdown_result(out.gpu_slowdown))
    if cfg.pairs and cfg.backend == "nccl":
        res.append(
            result(
                C.PAIRS,
                "probe.pairs",
                "skip",
                "pairs: the nccl backend has no send/recv (mlx 0.32.x)",
                host=MESH,
            )
        )
    elif cfg.pairs and out.kind == "ok":
        measured, unsupported = plan_pairs(n, cfg.backend)
        pf = figures.pair_figures(
            {st.rank: st.results for st in out.ranks}, n, measured, unsupported
        )
        probe["pairs"] = pf
        r = _pairs_result(pf)
        if r is not None:
            res.append(r)
    if cfg.soak:
        probe["soak"] = soak.figures(cfg, run.launches, run.soak_hangs)
        versions = [(st.ready or {}).get("mlx") for o in run.launches for st in o.ranks]
        note = hang_note(cfg.backend, [v for v in versions if v])
        res.append(_soak_result(probe["soak"], complete=out.kind == "ok", note=note))
    over = oversubscription(cfg)
    if over:
        probe["oversubscribed"] = over
        res.append(_oversubscribed_result(over, out))
    res.extend(judgement_results(cfg, probe))
