"""The results that say how a probe launch ended: one function per way it can end
(:func:`outcome_results` picks by the outcome's ``kind``), and :func:`preflight_result` for a
probe that never launched. Which rank is at fault: :mod:`meshdoctor.probe.culprits`."""

from __future__ import annotations

import dataclasses
from typing import List, Optional

from meshdoctor.hostfile.phrases import ranks_phrase
from meshdoctor.model import ERROR, FAIL, OK, Remediation, Result
from meshdoctor.probe.codes import result  # a Result titled with its probe code's entry
from meshdoctor.probe import codes as C
from meshdoctor.mlx.defects import hang_note
from meshdoctor.probe.config import (
    ProbeConfig,
    collective_deadline,
    init_deadline,
    oversubscription,
)
from meshdoctor.probe.culprits import (
    blame_hang,
    cause_remedy,
    how,
    is_cause,
    only_peer_trouble,
    peers_lost,
    signal_name,
)
from meshdoctor.probe.events import RankState, describe_step
from meshdoctor.probe.outcome import LaunchOutcome, ProbeRun
from meshdoctor.probe.report.view import MESH, LaunchView
from meshdoctor.probe.sizes import format_size


def preflight_result(run: ProbeRun, host: str) -> Result:
    """The probe never launched: a local rank's address is not ours, or its port is taken."""
    return result(
        C.GROUP,
        "probe.group",
        FAIL,
        run.preflight["message"],
        host=host,
        evidence=dict(run.preflight),
        remediation=Remediation(
            run.preflight.get("remedy")
            or "Fix the hostfile entry named in the evidence, then probe again."
        ),
    )


def _local_python_problem(
    cfg: ProbeConfig, out: LaunchOutcome, sts: List[RankState]
) -> Optional[str]:
    """MD102's words when the local ranks could not start because their interpreter
    (``MESHDOCTOR_PYTHON``) is missing (``out.python_missing``, looked up by the launcher) or
    has no MLX; None otherwise (or with remote ranks)."""
    if not sts or not all(s.local for s in sts):
        return None
    if out.python_missing:
        return (
            f"cannot run the Python that would run the ranks: {cfg.python}: no such executable file"
        )
    for s in sts:
        for e in s.errors:
            if e.get("type") == "ModuleNotFoundError" and "mlx" in str(e.get("message")):
                return f"MLX is not importable from {cfg.python}: {e['type']}: {e['message']}"
    return None


def _start_failed(lc: LaunchView) -> List[Result]:
    """``start``: a rank could not be started or died before it said ready. A missing local
    interpreter or MLX is the same failure (exit 1) as ``check`` MD102; anything else (ssh,
    a remote Python) means the mesh was not assessed (an error). Remote hosts whose rank could
    not start are added to ``lc.unreachable``."""
    cfg, out = lc.cfg, lc.out
    sts = lc.lead or out.ranks
    for s in sts:
        if not s.local:
            lc.unreachable.add(s.host)
    python_bad = _local_python_problem(cfg, out, sts)
    if python_bad:
        return [
            result(
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
        result(
            C.START,
            "probe.start",
            ERROR,
            out.message or f"could not start: {who}",
            host=sts[0].host,
            evidence={"ranks": [s.rank for s in sts]},
            remediation=Remediation(
                cause_remedy(sts)
                or (
                    "Check that the interpreter exists and has mlx "
                    "(MESHDOCTOR_PYTHON), then probe again."
                    if sts[0].local
                    else "Check ssh (BatchMode, keys), that Python and mlx are "
                    "installed on that host (MESHDOCTOR_REMOTE_PYTHON), then probe "
                    "again."
                )
            ),
        )
    ]


def _group_failed(lc: LaunchView) -> Result:
    """``init`` (or a death or hang before every rank left init): the group did not form. The
    first rank at fault and how it failed; the rank the hang report names (stopped or
    silent) when the ranks that failed only lost a peer; else the formation deadline."""
    cfg, out = lc.cfg, lc.out
    n = cfg.world_size
    sts = lc.lead or [s for s in out.ranks if s.errors]
    silent = out.hang and (out.hang.get("not_arrived") or out.hang.get("no_heartbeat"))
    stopped = [x for x in (out.hang or {}).get("no_heartbeat") or [] if x.get("state") == "stopped"]
    if silent and not any(is_cause(s, out.early_exits.get(s.rank)) for s in sts):
        # only lost peers failed (the tracker's first failure is an echo), while the hang
        # report names a rank that never arrived or went silent: that rank is the fault
        sts = []
    elif stopped and all(only_peer_trouble(s, out.early_exits.get(s.rank)) for s in sts):
        # a rank is stopped (its process state says so: a fact, not a silence): the ranks
        # that could not connect to it (the ring's "Couldn't connect" after its retries)
        # only waited for it
        sts = []
    if sts:
        first = sts[0]
        msg = (
            f"group formation ({cfg.backend}, {n} ranks) failed: rank {first.rank} "
            f"({first.host}) {how(first, out.early_exits.get(first.rank))}"
        )
    elif silent:
        # found by the hang report (a rank stopped or silent), not by the formation deadline
        missing = _missing_phrases(out.hang, n)
        msg = f"group formation ({cfg.backend}, {n} ranks) did not finish: " + "; ".join(missing)
        suspect = blame_hang(out.hang, n).suspect
        sts = [s for s in out.ranks if s.rank == suspect]
    else:
        msg = (
            f"group formation ({cfg.backend}, {n} ranks) did not finish within "
            f"{init_deadline(cfg):.0f} s"
        )
    remedy = cause_remedy(sts) or (
        "Check every rank's address in the hostfile is reachable "
        "from its left neighbour and not in use, then probe again."
    )
    return result(
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


def _group_formed(lc: LaunchView) -> Result:
    """Every rank left group formation."""
    return result(
        C.GROUP,
        "probe.group",
        OK,
        f"{lc.cfg.backend} group of {lc.cfg.world_size} ranks formed",
        host=MESH,
    )


def _interrupted(lc: LaunchView) -> Result:
    """``interrupted``: SIGINT, SIGTERM or SIGHUP before the probe finished (not assessed)."""
    return result(
        C.INTERRUPTED,
        "probe.interrupted",
        ERROR,
        f"{lc.out.message}; every rank was torn down",
        evidence={"formed": lc.formed},
        remediation=Remediation("Probe again; the mesh was not assessed."),
        host=MESH,
    )


def interrupted_before_launch(signame: str, during: str) -> Result:
    """MD510 for an interrupt (``signame``: SIGINT, SIGTERM, SIGHUP) before any rank started,
    ``during`` what (``"reading the hostfile"``, ``"the fleet check"``): not assessed, nothing
    left running."""
    return result(
        C.INTERRUPTED,
        "probe.interrupted",
        ERROR,
        f"interrupted by {signame} during {during}, before any rank started; every command "
        "meshdoctor had started was stopped",
        evidence={"signal": signame, "formed": False, "during": during},
        remediation=Remediation("Probe again; the mesh was not assessed."),
        host=MESH,
    )


def _rank_died(lc: LaunchView) -> Result:
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
    return result(
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


def hang_cause_note(cfg: ProbeConfig, out: LaunchOutcome) -> str:
    """What may explain a hang with no rank to blame, as one or two sentences: the known MLX
    defect of the ranks' MLX version (:func:`meshdoctor.mlx.defects.hang_note`, only for a
    version that has it), this host's oversubscription (more ranks than CPUs), and else how to
    measure it (``--soak``)."""
    parts = []
    over = oversubscription(cfg)
    if over:
        parts.append(
            f"{over['ranks']} ranks share this host's {over['cpus']} CPUs (oversubscribed): "
            "each waits for a core, so a call can outlast a deadline sized for the link; "
            "probe with at most one rank per CPU."
        )
    versions = [(st.ready or {}).get("mlx") for st in out.ranks]
    note = hang_note(cfg.backend, [v for v in versions if v])
    if note:
        parts.append(note)
    elif not over:
        parts.append(
            "Gate long jobs on `meshdoctor probe --soak N` (the hang rate), and report the "
            "hang upstream with the stacks."
        )
    return " ".join(parts)


def _missing_phrases(hang: dict, world_size: int) -> List[str]:
    """What a hang report says of the ranks at fault, in words: ``never arrived: rank 1
    (process stopped, no heartbeat for 2.5 s)`` (silent ranks first), and the ranks silent
    inside the step (:func:`meshdoctor.probe.culprits.blame_hang`)."""
    blame = blame_hang(hang, world_size)
    stalled = blame.stalled

    def one(r: int) -> str:
        extra = []
        if r in stalled:
            if stalled[r].get("state") == "stopped":
                extra.append("process stopped")
            extra.append(f"no heartbeat for {stalled[r]['silent_s']:.1f} s")
        return f"rank {r}" + (f" ({', '.join(extra)})" if extra else "")

    parts = []
    if blame.missing:
        parts.append("never arrived: " + ", ".join(one(r) for r in blame.missing))
    if blame.silent_inside:
        parts.append("silent inside it: " + ", ".join(one(r) for r in blame.silent_inside))
    return parts


def _hang_result(cfg: ProbeConfig, out: LaunchOutcome) -> Result:
    """``hang`` or ``deadline`` after the group formed: the step, who never arrived (silent
    ranks first), who waited inside it; no rank is blamed when every rank was inside
    (:func:`meshdoctor.probe.culprits.blame_hang`)."""
    hang = out.hang or {}
    step = hang.get("step")
    blame = blame_hang(hang, len(out.ranks))
    stalled, waiting = blame.stalled, blame.waiting
    said = _missing_phrases(hang, len(out.ranks))
    parts = [p for p in said if p.startswith("never")]
    if waiting:
        w = max(x["waited_s"] for x in hang["waiting"])
        parts.append(f"{ranks_phrase(waiting)} waited {w:.1f} s inside it")
    what = (
        "the whole-run deadline passed"
        if out.kind == "deadline"
        else f"hung past the {out.deadline_s:.1f} s deadline"
    )
    auto = collective_deadline(dataclasses.replace(cfg, timeout=None))
    parts += [p for p in said if p.startswith("silent")]
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
            "still hangs, that is a real hang. " + hang_cause_note(cfg, out)
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
                "progress. " + hang_cause_note(cfg, out)
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
            else "(stopped, swapping, a dead link). " + hang_cause_note(cfg, out)
        )
    return result(
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


def outcome_results(lc: LaunchView) -> List[Result]:
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
