"""Turns a :class:`~meshdoctor.probe.launcher.ProbeRun` into the verdict: MD5xx results and the
``probe`` section (its shape: ``$defs/probe`` in ``verdict.schema.json``; per-rank exit status,
signal, stderr tail and failure signatures).

The numbers come from :mod:`meshdoctor.probe.figures` (algbw, busbw, medians, nccl-tests
doc/PERFORMANCE.md), the rank at fault from :mod:`meshdoctor.probe.culprits`, the soak's hang
rate from :mod:`meshdoctor.probe.soak`. Each way a launch can end has its own small function
(:func:`outcome_results`): the rank start-up failed (``start``), the group did not form
(``init``, or a rank died or hung before it formed), it formed (``ok``), a rank died (``dead``),
a step hung (``hang``) or the whole-run deadline passed (``deadline``), meshdoctor was
interrupted (``interrupted``); a probe that never launched is a ``preflight`` failure. Then
every run gets its correctness and bandwidth results per op (a value mismatch is a correctness
failure), the pair matrix, the soak and the leftover check.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

from meshdoctor.hostfile import ranks_phrase
from meshdoctor.model import FAIL, OK, SKIP, WARN, ERROR, HostInfo, Remediation, Verdict
from meshdoctor.probe import codes as C
from meshdoctor.probe.codes import result as Result  # a Result titled with its probe code's entry
from meshdoctor.probe import figures, soak
from meshdoctor.probe.config import ProbeConfig, collective_deadline, init_deadline, plan_pairs
from meshdoctor.probe.culprits import (
    blame_hang,
    cause_remedy,
    culprits,
    how,
    peers_lost,
    rank_signatures,
    signal_name,
)
from meshdoctor.probe.events import RankState, describe_step
from meshdoctor.probe.launcher import LaunchOutcome, ProbeRun
from meshdoctor.probe.sizes import format_size
from meshdoctor.text import shell_line

MESH = "mesh"  # the host label of results about the whole group (figures, correctness)


def _mesh(*args: Any, **kw: Any) -> Result:
    """A result about the whole group rather than one host."""
    return Result(*args, host=MESH, **kw)


# --- the probe section ------------------------------------------------------------------------
def rank_dict(st: RankState, out: LaunchOutcome) -> Dict[str, Any]:
    """One entry of ``probe.ranks``: what is known of rank ``st`` after launch ``out``."""
    rc = st.returncode
    early = out.early_exits.get(st.rank)
    d: Dict[str, Any] = {
        "rank": st.rank,
        "host": st.host,
        "local": st.local,
        "pid": st.pid,
        "ready": st.ready is not None,
        "mlx": (st.ready or {}).get("mlx"),
        "python": (st.ready or {}).get("python"),
        "exit_code": rc if rc is not None and rc >= 0 else None,
        "signal": signal_name(rc),
        "exited_before_teardown": early is not None,
        "done": st.done,
        "last_step": {k: (st.last_step or {}).get(k) for k in ("op", "phase", "iter", "seq")}
        if st.last_step
        else None,
        "errors": [{k: e.get(k) for k in ("where", "type", "message")} for e in st.errors],
        "stderr_tail": st.stderr_tail(),
        "signatures": [m.to_dict() for m in rank_signatures(st)],
    }
    if st.noise:
        d["stdout_noise"] = list(st.noise)
    return d


def _header(run: ProbeRun) -> Dict[str, Any]:
    """The keys of the probe section that every probe has, before anything ran."""
    cfg = run.cfg
    return {
        "run_id": run.run_id,
        "backend": cfg.backend,
        "world_size": cfg.world_size,
        "ops": [],
        "dtype": cfg.dtype,
        "size_bytes": cfg.size,
        "size": format_size(cfg.size),
        "iters": cfg.iters,
        "warmup": cfg.warmup,
        "deadline_s": round(collective_deadline(cfg), 3),
        "init_deadline_s": round(init_deadline(cfg), 3),
        "launches": len(run.launches),
    }


def _launch_section(out: LaunchOutcome) -> Dict[str, Any]:
    """The keys of the probe section about the last launch."""
    return {
        "outcome": out.kind,
        "ring_hostfile": out.ring_hostfile,
        "ranks": [rank_dict(st, out) for st in out.ranks],
        "teardown": out.actions,
        "leftovers": out.survivors,
        "detect_s": round(out.finished_at - out.detected_at, 4) if out.detected_at else None,
        "wall_s": round(out.finished_at - out.started_at, 4),
    }


@dataclass
class _Launch:
    """What the outcome functions read: the config, the last launch, whether the group formed,
    the ranks at fault (dead, init and start outcomes), the host to name when no rank is, and the
    hosts found unreachable on the way (filled in by :func:`_start_failed`)."""

    cfg: ProbeConfig
    out: LaunchOutcome
    formed: bool
    lead: List[RankState]
    first_host: str
    detect_s: Optional[float]
    unreachable: Set[str] = field(default_factory=set)


# --- one function per outcome -------------------------------------------------------------------
def _preflight(run: ProbeRun, host: str) -> Result:
    """The probe never launched: a local rank's address is not ours, or its port is taken."""
    return Result(
        C.GROUP,
        "probe.group",
        FAIL,
        run.preflight["message"],
        host=host,
        evidence=dict(run.preflight),
        remediation=Remediation("Fix the hostfile entry named in the evidence, then probe again."),
    )


def _local_python_problem(cfg: Any, sts: List[RankState]) -> Optional[str]:
    """MD102's words when the local ranks could not start because their interpreter
    (``MESHDOCTOR_PYTHON``) is missing or has no MLX; None otherwise (or with remote ranks)."""
    import os
    import shutil

    if not sts or not all(s.local for s in sts):
        return None
    if (
        os.sep in cfg.python
        and not os.access(cfg.python, os.X_OK)
        or os.sep not in cfg.python
        and shutil.which(cfg.python) is None
    ):
        return (
            f"cannot run the Python that would run the ranks: {cfg.python}: no such executable file"
        )
    for s in sts:
        for e in s.errors:
            if e.get("type") == "ModuleNotFoundError" and "mlx" in str(e.get("message")):
                return f"MLX is not importable from {cfg.python}: {e['type']}: {e['message']}"
    return None


def _start_failed(lc: _Launch) -> List[Result]:
    """``start``: a rank could not be started or died before it said ready. A missing local
    interpreter or MLX is the same failure (exit 1) as ``check`` MD102; anything else (ssh,
    a remote Python) means the mesh was not assessed (an error). Remote hosts whose rank could
    not start are added to ``lc.unreachable``."""
    cfg, out = lc.cfg, lc.out
    sts = lc.lead or out.ranks
    for s in sts:
        if not s.local:
            lc.unreachable.add(s.host)
    python_bad = _local_python_problem(cfg, sts)
    if python_bad:
        return [
            Result(
                C.START,
                "probe.start",
                FAIL,
                python_bad,
                host=sts[0].host,
                evidence={"ranks": [s.rank for s in sts], "python": cfg.python},
                remediation=Remediation(
                    'pip install mlx (on Linux: pip install "mlx[cpu]") in the '
                    "environment the ranks run in, or point MESHDOCTOR_PYTHON at "
                    "it (`meshdoctor check --only MD102` says the same)."
                ),
            )
        ]
    who = "; ".join(
        f"rank {s.rank} ({s.host}) {how(s, out.early_exits.get(s.rank))}; "
        f"stderr: {' | '.join(s.stderr_tail(3)) or '(empty)'}"
        for s in sts[:3]
    )
    return [
        Result(
            C.START,
            "probe.start",
            ERROR,
            out.message or f"could not start: {who}",
            host=sts[0].host,
            evidence={"ranks": [s.rank for s in sts]},
            remediation=Remediation(
                "Check that the interpreter exists and has mlx "
                "(MESHDOCTOR_PYTHON), then probe again."
                if sts[0].local
                else "Check ssh (BatchMode, keys), that Python and mlx are "
                "installed on that host (MESHDOCTOR_REMOTE_PYTHON), then probe "
                "again."
            ),
        )
    ]


def _group_failed(lc: _Launch) -> Result:
    """``init`` (or a death or hang before every rank left init): the group did not form. The
    first rank at fault and how it failed, else the formation deadline."""
    cfg, out = lc.cfg, lc.out
    n = cfg.world_size
    sts = lc.lead or [s for s in out.ranks if s.errors]
    if sts:
        first = sts[0]
        msg = (
            f"group formation ({cfg.backend}, {n} ranks) failed: rank {first.rank} "
            f"({first.host}) {how(first, out.early_exits.get(first.rank))}"
        )
    else:
        msg = (
            f"group formation ({cfg.backend}, {n} ranks) did not finish within "
            f"{init_deadline(cfg):.0f} s"
        )
    remedy = cause_remedy(sts) or (
        "Check every rank's address in the hostfile is reachable "
        "from its left neighbour and not in use, then probe again."
    )
    return Result(
        C.GROUP,
        "probe.group",
        FAIL,
        msg,
        host=sts[0].host if sts else lc.first_host,
        evidence={
            "ranks": [s.rank for s in sts],
            "hang": out.hang,
            "ring_hostfile": out.ring_hostfile,
        },
        remediation=Remediation(remedy),
    )


def _group_formed(lc: _Launch) -> Result:
    """Every rank left group formation."""
    return Result(
        C.GROUP,
        "probe.group",
        OK,
        f"{lc.cfg.backend} group of {lc.cfg.world_size} ranks formed",
        host=MESH,
    )


def _interrupted(lc: _Launch) -> Result:
    """``interrupted``: SIGINT, SIGTERM or SIGHUP before the probe finished (not assessed)."""
    return _mesh(
        C.INTERRUPTED,
        "probe.interrupted",
        ERROR,
        f"{lc.out.message}; every rank was torn down",
        evidence={"formed": lc.formed},
        remediation=Remediation("Probe again; the mesh was not assessed."),
    )


def _rank_died(lc: _Launch) -> Result:
    """``dead`` after the group formed: the first rank at fault, how and where it died, and
    the ranks that failed after it (peer lost)."""
    out, sts = lc.out, lc.lead
    first = sts[0]
    msg = (
        f"rank {first.rank} ({first.host}, pid {first.pid}) "
        f"{how(first, out.early_exits.get(first.rank))} during {describe_step(first.last_step)}"
    )
    if len(sts) > 1:
        msg += f"; also {ranks_phrase([s.rank for s in sts[1:]])}"
    others = peers_lost(out, sts)
    if others:
        msg += f"; {ranks_phrase(others)} then failed (peer lost)"
    return Result(
        C.DEAD,
        "probe.rank",
        FAIL,
        msg,
        host=first.host,
        evidence={
            "ranks": [s.rank for s in sts],
            "signal": signal_name(out.early_exits.get(first.rank)),
            "exit_status": out.early_exits.get(first.rank),
            "step": first.last_step
            and {k: first.last_step.get(k) for k in ("op", "phase", "iter", "seq")},
            "stderr_tail": first.stderr_tail(),
            "detect_s": lc.detect_s,
        },
        remediation=Remediation(
            cause_remedy(sts)
            or "Find why that rank died (its stderr tail, dmesg / crash "
            "reports (.ips) on its host); probe again."
        ),
    )


RING_DEADLOCK = (
    "A ring that hangs without any rank dying matches the known ring deadlock "
    "(mlx 0.32.2, a few % of CPU-stream all_sum calls at 3+ ranks): run "
    "collectives on stream=mx.cpu, upgrade mlx, and gate long jobs on --soak."
)


def _hang_result(cfg: ProbeConfig, out: LaunchOutcome) -> Result:
    """``hang`` or ``deadline`` after the group formed: the step, who never arrived (silent
    ranks first), who waited inside it; no rank is blamed when every rank was inside
    (:func:`meshdoctor.probe.culprits.blame_hang`)."""
    hang = out.hang or {}
    step = hang.get("step")
    blame = blame_hang(hang, len(out.ranks))
    stalled, waiting = blame.stalled, blame.waiting
    parts = []
    if blame.missing:
        desc = []
        for r in blame.missing:
            extra = []
            if r in stalled:
                if stalled[r].get("state") == "stopped":
                    extra.append("process stopped")
                extra.append(f"no heartbeat for {stalled[r]['silent_s']:.1f} s")
            desc.append(f"rank {r}" + (f" ({', '.join(extra)})" if extra else ""))
        parts.append(f"never arrived: {', '.join(desc)}")
    if waiting:
        w = max(x["waited_s"] for x in hang["waiting"])
        parts.append(f"{ranks_phrase(waiting)} waited {w:.1f} s inside it")
    what = (
        "the whole-run deadline passed"
        if out.kind == "deadline"
        else f"hung past the {out.deadline_s:.1f} s deadline"
    )
    auto = collective_deadline(dataclasses.replace(cfg, timeout=None))
    if blame.silent_inside:
        parts.append(
            "silent inside it: "
            + ", ".join(
                f"rank {r} ("
                + ("process stopped, " if stalled[r].get("state") == "stopped" else "")
                + f"no heartbeat for {stalled[r]['silent_s']:.1f} s)"
                for r in blame.silent_inside
            )
        )
    too_short = bool(cfg.timeout and cfg.timeout < auto)
    short_note = short_remedy = ""
    if too_short:
        short_note = (
            f" (--timeout {cfg.timeout:g}); the deadline sized for "
            f"{format_size(cfg.size)} would be {auto:.1f} s"
        )
        short_remedy = (
            f"--timeout {cfg.timeout:g} s is shorter than this collective can take at "
            f"{format_size(cfg.size)}: probe again without --timeout (the deadline is "
            f"then {auto:.1f} s, sized for the message) or with a longer one. If it "
            "still hangs, that is a real hang. " + RING_DEADLOCK
        )
    if blame.all_inside:  # nobody to blame: every rank was inside the collective
        msg = (
            f"all {len(waiting)} ranks entered {describe_step(step)} and none left within "
            f"the {out.deadline_s:.1f} s deadline"
        )
        if too_short:
            msg += short_note
            remedy = short_remedy
        else:
            remedy = (
                "No rank stopped or fell behind: the collective itself made no "
                "progress. " + RING_DEADLOCK
            )
        host = MESH
    elif too_short and not stalled:
        # a rank still on its way to the step when a deadline far shorter than the one sized
        # for the message passed is late, not faulty: every rank kept its heartbeat
        msg = f"{describe_step(step)} {what}{short_note}: " + "; ".join(
            p.replace("never arrived", "not yet arrived") for p in parts
        )
        host = MESH
        remedy = short_remedy
    else:
        msg = f"{describe_step(step)} {what}" + (": " + "; ".join(parts) if parts else "")
        host = out.ranks[blame.suspect].host
        remedy = "The rank that never arrived is the suspect: check its process and host " + (
            "(stopped, swapping, a dead link). NCCL has no timeout of its own here: the "
            "survivors of a stopped or dead peer keep their GPU at 100 % until killed, so "
            "gate jobs on a deadline like this one."
            if cfg.backend == "nccl"  # NCCL survivors spin inside the kernel, with no message
            else "(stopped, swapping, a dead link). " + RING_DEADLOCK
        )
    return Result(
        C.HANG,
        "probe.hang",
        FAIL,
        msg,
        host=host,
        evidence={
            "hang": hang,
            "stacks_captured": sorted(out.stacks),
            "deadline_s": out.deadline_s,
            "auto_deadline_s": round(auto, 3),
            "all_ranks_inside": bool(blame.all_inside),
        },
        remediation=Remediation(remedy),
    )


def outcome_results(lc: _Launch) -> List[Result]:
    """The results that say how the last launch ended, by its ``kind`` (module doc)."""
    kind = lc.out.kind
    if kind == "start":
        return _start_failed(lc)
    if kind == "init" or not lc.formed and kind in ("dead", "hang", "deadline"):
        return [_group_failed(lc)]
    res = [_group_formed(lc)] if lc.formed else []
    if kind == "interrupted":
        res.append(_interrupted(lc))
    elif kind == "dead":
        res.append(_rank_died(lc))
    elif kind in ("hang", "deadline"):
        res.append(_hang_result(lc.cfg, lc.out))
    return res


# --- figures: correctness, bandwidth, pairs, soak -----------------------------------------------
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
        return _mesh(
            C.WRONG,
            f"probe.{op}",
            FAIL,
            txt,
            evidence={k: f.get(k) for k in ("wrong", "checked", "digest_mismatches")},
            remediation=Remediation(WRONG_REMEDY),
        )
    if f.get("iters") or op == "bare_all_sum":
        return _mesh(
            C.WRONG,
            f"probe.{op}",
            OK,
            f"{op}: #wrong 0 of {f['checked']} elements checked (all ranks, "
            "all iterations)" + (", digests match" if op == "all_gather" else ""),
            evidence={"checked": f["checked"]},
        )
    return None


def _bandwidth_result(f: Dict[str, Any]) -> Result:
    """One timed op's algbw, busbw and times (:func:`figures.bandwidth_line`)."""
    return _mesh(
        C.BANDWIDTH,
        f"probe.{f['op']}",
        OK,
        figures.bandwidth_line(f),
        evidence={k: f[k] for k in ("size_bytes", "time_s", "algbw_gbs", "busbw_gbs", "iters")},
    )


def _op_results(figs: List[Dict[str, Any]]) -> List[Result]:
    res: List[Result] = []
    for f in figs:
        if f.get("skipped"):
            res.append(_mesh(C.WRONG, f"probe.{f['op']}", "skip", f"{f['op']}: {f['skipped']}"))
            continue
        r = _correctness_result(f)
        if r is not None:
            res.append(r)
        if "busbw_gbs" in f:
            res.append(_bandwidth_result(f))
    return res


def _slowdown_result(slow: List[Dict[str, Any]]) -> Result:
    """GPU clocks held back for power or heat while the probe ran (NVML violation time)."""
    what = ", ".join(f"GPU {s['gpu']} {s['reason']} {s['ms']:.1f} ms" for s in slow)
    return _mesh(
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
    )


def _pairs_result(pf: Dict[str, Any]) -> Optional[Result]:
    """--pairs: a pair with wrong values or no figure fails; else the slowest pair."""
    bad = [c for c in pf["cells"] if c["wrong"]]
    if bad or pf["missing"]:
        what = [f"{c['src']}->{c['dst']} #wrong {c['wrong']}" for c in bad] + [
            f"{s}->{d} not measured" for s, d in pf["missing"]
        ]
        return _mesh(
            C.PAIRS,
            "probe.pairs",
            FAIL,
            "pairs failing: " + ", ".join(what),
            evidence=pf,
            remediation=Remediation(
                "Check the link between the ranks named (cable, port state, hostfile order)."
            ),
        )
    if pf["slowest"]:
        s = pf["slowest"]
        return _mesh(
            C.PAIRS,
            "probe.pairs",
            OK,
            f"{len(pf['cells'])} pairs measured; slowest {s['src']}->"
            f"{s['dst']} at {figures.format_rate(s['busbw_gbs'])}",
            evidence={"slowest": s, "unsupported": pf["unsupported"]},
        )
    return None


def _soak_result(sk: Dict[str, Any], complete: bool) -> Result:
    """--soak: any hang fails; a soak that did not complete (the last launch did not end ok)
    warns; else ok."""
    hangs, attempted = sk["hangs"], sk["calls"]
    rate = hangs / attempted if attempted else 0.0
    status = FAIL if hangs else (OK if complete else WARN)
    summary = (
        f"soak: {hangs} hang(s) in {attempted} calls ({rate:.1%}), {sk['relaunches']} relaunch(es)"
    )
    if status == WARN:
        summary += "; the soak did not complete (see the other findings)"
    return _mesh(
        C.SOAK,
        "probe.soak",
        status,
        summary,
        evidence=sk,
        remediation=Remediation(
            "Hangs without a dead rank match the known ring deadlock (mlx "
            "0.32.2, a few % of CPU-stream all_sum calls at 3+ ranks): "
            "upgrade mlx, keep collectives on stream=mx.cpu, and gate long "
            "jobs on a clean soak."
        )
        if hangs
        else None,
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
    return _mesh(
        C.COVERAGE,
        "probe.coverage",
        ERROR,
        f"no collective ran: every op asked for was skipped ({why})",
        evidence={"skipped_ops": [{"op": f["op"], "reason": f["skipped"]} for f in figs]},
        remediation=Remediation(
            "Probe an op the backend has (all_sum, all_gather), choose a backend that has "
            "the op, or upgrade MLX to the version named."
        ),
    )


def _figures(run: ProbeRun, out: LaunchOutcome, probe: Dict[str, Any], res: List[Result]) -> None:
    """Per-op figures, GPU clock slowdown, pairs and soak: into ``probe`` and ``res``."""
    cfg = run.cfg
    n = len(out.ranks)
    figs = figures.op_figures({st.rank: st.results for st in out.ranks}, n)
    probe["ops"] = figs
    probe["skipped_ops"] = [
        {"op": f["op"], "reason": f["skipped"]} for f in figs if f.get("skipped")
    ]
    res.extend(_op_results(figs))
    nothing = _nothing_ran(cfg, out, figs)
    if nothing is not None:
        res.append(nothing)
    if out.gpu_slowdown:
        probe["gpu_slowdown"] = out.gpu_slowdown
        res.append(_slowdown_result(out.gpu_slowdown))
    if cfg.pairs and cfg.backend == "nccl":
        res.append(
            _mesh(
                C.PAIRS,
                "probe.pairs",
                "skip",
                "pairs: the nccl backend has no send/recv (mlx 0.32.x)",
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
        res.append(_soak_result(probe["soak"], complete=out.kind == "ok"))


# --- leftovers ------------------------------------------------------------------------------------
def _gpu_note(gpu: Optional[Dict[str, Any]]) -> str:
    """What NVML said about this host's GPUs after teardown (nccl runs), for the summary."""
    if gpu is None:
        return ""
    if not gpu.get("nvml"):
        return f"; GPU memory not checked ({gpu.get('reason')})"
    used = ", ".join(
        f"GPU {g['index']} {g['used_bytes'] / (1 << 20):.0f} MiB used" for g in gpu.get("gpus", [])
    )
    return f"; no GPU memory held by the ranks (NVML: {used})"


def _gpu_held(out: LaunchOutcome, gpu: Dict[str, Any]) -> Result:
    """A local rank's pid still charged with GPU memory after it was torn down."""
    h = gpu["held"][0]
    mib = "?" if h.get("used_bytes") is None else f"{h['used_bytes'] / (1 << 20):.0f}"
    return Result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"GPU {h['gpu']} still holds {mib} MiB for pid {h['pid']} of this run "
        f"{gpu.get('waited_s', 0):.1f} s after teardown"
        + (f" (and {len(gpu['held']) - 1} more)" if len(gpu["held"]) > 1 else ""),
        host="localhost",
        evidence={"run_id": out.run_id, "gpu_after": gpu},
        remediation=Remediation(
            "The driver did not free the memory of a rank that exited: reset the GPU "
            "once nothing else uses it (a reboot if that is refused).",
            shell_line(["sudo", "nvidia-smi", "--gpu-reset", "-i", h["gpu"]]),
        ),
    )


def _survivor_result(f: Dict[str, Any], unkillable: bool) -> Result:
    """A rank process still there after teardown (killed now, or it survived SIGKILL)."""
    return Result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"pid {f['pid']} (rank {f.get('rank')}, {f.get('status')}) was "
        f"still running after teardown" + ("; it survived SIGKILL" if unkillable else "; killed"),
        host=f["host"],
        evidence=f,
        needs_reboot=unkillable,
        remediation=Remediation(
            "Reboot this host: a rank that survives SIGKILL is stuck in the driver."
            if unkillable
            else "Killed now; if it keeps happening, report the evidence.",
            None if unkillable else shell_line(["kill", "-9", f["pid"]]),
        ),
    )


def _unreached_result(out: LaunchOutcome, host: str, why: str) -> Result:
    """A host ssh could not reach: never ok. With no rank of this run there it was simply not
    looked at (skip); with one, that rank may still run there (fail)."""
    # ssh exiting 255 before the rank said ready: the connection never came up
    ranks = [
        s.rank
        for s in out.ranks
        if s.host == host and s.pid is not None and not (s.ready is None and s.returncode == 255)
    ]
    if not ranks:
        return Result(
            C.LEFTOVER,
            "probe.leftovers",
            SKIP,
            f"{host} could not be reached over ssh ({why}): no rank of this "
            "run ran there, and it was not checked for leftovers",
            host=host,
            evidence={"ssh": why},
        )
    return Result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"could not reach {host} over ssh to stop {ranks_phrase(ranks)} and "
        f"check for leftovers: {why}",
        host=host,
        evidence={
            "ranks": ranks,
            "ssh": why,  # what is known of them
            "pids": {str(s.rank): s.pid for s in out.ranks if s.host == host and s.pid is not None},
        },
        remediation=Remediation(
            f"Once {host} answers again, look for leftover ranks there "
            "(`meshdoctor check --only MD301` on that host) and check its "
            "link (cable, port state)."
        ),
    )


def _leftover_results(lc: _Launch) -> List[Result]:
    """Survivors of teardown, the GPU memory check, and every host that could not be reached
    (in teardown, or when its rank could not start); adds those hosts to ``lc.unreachable``."""
    out = lc.out
    res: List[Result] = []
    stuck = {(f["host"], f["pid"]) for f in out.unkillable}
    for f in out.survivors:
        res.append(_survivor_result(f, (f["host"], f["pid"]) in stuck))
    unreached = dict(out.unreachable)
    for s in out.ranks:
        if s.host in lc.unreachable and s.host not in unreached:
            unreached[s.host] = "its rank could not be started over ssh"
    reached = sorted({s.host for s in out.ranks} - set(unreached))
    if not out.survivors and reached:
        where = "" if not unreached else f" on the hosts reached ({', '.join(reached)})"
        gpu = out.gpu_after
        if gpu is not None and gpu.get("held"):
            res.append(_gpu_held(out, gpu))
        else:
            res.append(
                Result(
                    C.LEFTOVER,
                    "probe.leftovers",
                    OK,
                    f"no rank process left after teardown{where}" + _gpu_note(gpu),
                    host=MESH,
                    evidence={"run_id": out.run_id, "hosts": reached, "gpu_after": gpu},
                )
            )
    for host, why in sorted(unreached.items()):
        lc.unreachable.add(host)
        res.append(_unreached_result(out, host, why))
    return res


# --- all together ---------------------------------------------------------------------------------
def build(run: ProbeRun, verdict: Verdict) -> Verdict:
    """Fill ``verdict`` (command "probe") from ``run``: results, hosts, probe section."""
    cfg = run.cfg
    hosts_seen: Dict[str, int] = {}
    for h in cfg.hostfile.hosts:
        hosts_seen.setdefault(h.ssh or "localhost", h.rank)
    probe = _header(run)
    verdict.probe = probe
    first_host = next(iter(hosts_seen), "localhost")
    if run.preflight:
        probe["outcome"] = "preflight"
        probe["preflight"] = run.preflight
        verdict.results.append(_preflight(run, first_host))
        verdict.hosts = [HostInfo(h, r) for h, r in hosts_seen.items()]
        return verdict
    out = run.launches[-1]
    probe.update(_launch_section(out))
    lc = _Launch(
        cfg=cfg,
        out=out,
        formed=all(st.completed.get("init/init", 0) >= 1 for st in out.ranks),
        lead=culprits(out) if out.kind in ("dead", "init", "start") else [],
        first_host=first_host,
        detect_s=probe["detect_s"],
    )
    res = verdict.results
    res.extend(outcome_results(lc))
    if out.stacks:
        probe["stacks"] = {str(k): v[-6000:] for k, v in out.stacks.items()}
    if out.native_stacks:
        probe["native_stacks"] = {str(k): v for k, v in out.native_stacks.items()}
    _figures(run, out, probe, res)
    res.extend(_leftover_results(lc))
    verdict.hosts = [
        HostInfo(h, r, reachable=h not in lc.unreachable) for h, r in hosts_seen.items()
    ]
    verdict.actions = out.actions or None
    return verdict
