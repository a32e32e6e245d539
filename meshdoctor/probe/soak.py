"""The soak policy (``--soak N``): each op repeated N times under the per-step deadline; a hang
in a soak repetition is counted, the ranks are torn down, and a fresh launch goes on from the
next repetition. Pure decisions on data: the launcher (:func:`meshdoctor.probe.launcher.run_probe`)
asks :func:`next_plan` after every launch and starts what it returns; :func:`figures` gives
the report the hang rate.

Stop rules, in order: an interrupted launch, or one that ended any other way than a hang inside
a soak repetition (a dead rank, a failed group, a hang outside the soak), ends the probe; so does
a hang whose ranks could not all be killed (a relaunch would meet them), the
:data:`MAX_SOAK_HANGS`-th hang, and a hang in the last repetition of the last op.

Why soak: a ring that deadlocks in a few percent of CPU-stream all_sum calls at 3+ ranks
(reported with mlx 0.32.2) passes a short probe and kills long jobs; only many calls, each under
a deadline, measure that rate. Faults for tests are injected by the worker
(``MESHDOCTOR_PROBE_FAULT``, e.g. ``stop:1:soak.all_sum.3``: rank 1 stops on entering
repetition 3 of all_sum), not here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from meshdoctor.probe.config import ProbeConfig
from meshdoctor.probe.outcome import LaunchOutcome

MAX_SOAK_HANGS = 5  # hangs after which the soak stops relaunching: the rate is clear by then
SOAK_PHASE = "soak"


def soak_hang(cfg: ProbeConfig, out: LaunchOutcome) -> Optional[Dict[str, Any]]:
    """The step (op, phase, iter, seq, before) of ``out``'s hang when it counts as a soak hang
    (the soak is on, the launch hung in a soak repetition, and every rank was killed); else
    None."""
    step = (out.hang or {}).get("step") or {}
    if cfg.soak and out.kind == "hang" and step.get("phase") == SOAK_PHASE and not out.unkillable:
        return step
    return None


def next_plan(
    cfg: ProbeConfig, plan: Dict[str, Any], step: Dict[str, Any], hangs: int
) -> Optional[Dict[str, Any]]:
    """The worker plan of the relaunch after a soak hang at ``step`` (``hangs`` counted so far,
    this one included), or None when the soak stops here (module doc). Repetition k of an op
    hung (in its barrier, ``before`` naming the op, or in the op itself): the relaunch starts that
    op at k + 1 (``start``), or the next op when k was its last; pairs are not measured again."""
    if hangs >= MAX_SOAK_HANGS:
        return None
    ops = list(plan["ops"])
    op = step.get("before") or step.get("op")
    nxt = int(step.get("iter", 0)) + 1
    ops = ops[ops.index(op) :] if op in ops else ops
    start = {op: nxt}
    if nxt >= cfg.soak:
        ops, start = ops[1:], {}
    if not ops:
        return None
    return dict(plan, ops=ops, start=start, pairs=[])


def figures(
    cfg: ProbeConfig, launches: Sequence[LaunchOutcome], hang_steps: List[Dict[str, Any]]
) -> Dict[str, Any]:
    """The soak's figures over every launch: ``repetitions`` (N), ``calls`` (attempted:
    completed + hangs), ``completed`` (repetitions every rank left, summed over ops and
    launches), ``hangs``, ``hang_rate`` (hangs / calls, 6 decimals), ``hang_steps`` (each
    hang's step with its ``launch`` index) and ``relaunches``."""
    completed = 0
    for o in launches:
        for op in cfg.ops:
            completed += min(st.completed.get(f"{op}/{SOAK_PHASE}", 0) for st in o.ranks)
    hangs = len(hang_steps)
    attempted = completed + hangs
    return {
        "repetitions": cfg.soak,
        "calls": attempted,
        "completed": completed,
        "hangs": hangs,
        "hang_rate": round(hangs / attempted if attempted else 0.0, 6),
        "hang_steps": hang_steps,
        "relaunches": len(launches) - 1,
    }
