"""The ``probe`` section of the verdict (its shape: ``$defs/probe`` in ``verdict.schema.json``)
and :func:`build`, which fills a verdict from a :class:`~meshdoctor.probe.outcome.ProbeRun`:
the outcome's results (:mod:`.outcomes`), the measures (:mod:`.measures`), the leftovers
(:mod:`.leftovers`) and the hosts."""

from __future__ import annotations

from typing import Any, Dict

from meshdoctor.model import HostInfo, Verdict
from meshdoctor.probe.config import collective_deadline, init_deadline
from meshdoctor.probe.culprits import culprits, rank_signatures, signal_name
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome, ProbeRun
from meshdoctor.probe.report.leftovers import leftover_results
from meshdoctor.probe.report.measures import add_measures
from meshdoctor.probe.report.outcomes import outcome_results, preflight_result
from meshdoctor.probe.report.view import LaunchView
from meshdoctor.probe.sizes import format_size


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
        "step_deadline_s": round(out.deadline_s, 3),
        "warmup_max_s": round(out.warmup_max_s, 6),
    }


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
        verdict.results.append(preflight_result(run, first_host))
        verdict.hosts = [HostInfo(h, r) for h, r in hosts_seen.items()]
        return verdict
    out = run.launches[-1]
    probe.update(_launch_section(out))
    lc = LaunchView(
        cfg=cfg,
        out=out,
        formed=out.formed,
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
    add_measures(run, out, probe, res)
    res.extend(leftover_results(lc))
    verdict.hosts = [
        HostInfo(h, r, reachable=h not in lc.unreachable) for h, r in hosts_seen.items()
    ]
    verdict.actions = out.actions or None
    return verdict
