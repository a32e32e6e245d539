"""MD702 reset-group: make a mesh that crashed usable again, or say which hosts need a reboot.

The operators' runbook after a crashed job (the JACCL threads behind MLX #3910, #4278, #4192),
in order: stop the leftover ranks on every host (the ``stale-ranks`` fix, on every host at
once), wait, bounded and with progress, for the wired memory they held to come back (MD302),
re-run the port and GID checks (MD202, MD203), then re-form the group with a one-element
``all_sum`` across the hostfile (or two local ranks over loopback without one) under a short
deadline, through meshdoctor's own probe. The outcome is ``recovered``, or ``needs_reboot`` with
the reason for each host.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List

from meshdoctor.fixer.model import (
    APPROVED,
    DISRUPTIVE,
    FAILED,
    FLEET_SCOPE,
    OK,
    SKIPPED,
    Action,
    Doc,
    Fix,
    FixContext,
    Verification,
)

CODE = "MD702"
WIRED_WAIT_S = 30.0
WIRED_POLL_S = 2.0
CHECK_CODES = ("MD202", "MD203")
PROBE_DEADLINE_S = 10.0
RECOVERED = "recovered"


def _state(ctx: FixContext) -> Dict[str, Any]:
    return ctx.options.setdefault("reset_group", {})


def _stale(ctx: FixContext, apply: bool):
    hx = ctx.hosts
    held = {APPROVED: ctx.options[APPROVED]} if APPROVED in ctx.options else None  # the plan shown
    return hx.each(
        lambda t: hx.fix(
            t, ["stale-ranks"], apply=apply, include_running=ctx.include_running, options=held
        )
    )


def _as_mine(host: str, v: Any) -> List[Action]:
    if isinstance(v, Exception):
        return [Action(CODE, host, "stale-ranks", [], mutates=False, outcome=f"{FAILED}: {v}")]
    out = []
    for a in v[0]:
        a.code, a.step = CODE, f"stale-ranks: {a.step}"
        out.append(a)
    return out


def plan(ctx: FixContext) -> List[Action]:
    """The steps this fix would take now (reads state only; changes nothing)."""
    st = _state(ctx)
    got = _stale(ctx, apply=False)
    out: List[Action] = []
    for host, v in got.items():
        out += _as_mine(host, v)
    n = len(ctx.hosts.targets) if ctx.hostfile is not None else 2
    out.append(
        Action(
            CODE,
            "mesh",
            f"wait up to {WIRED_WAIT_S:g} s for wired memory to come back (MD302)",
            [],
            mutates=False,
        )
    )
    out.append(
        Action(
            CODE,
            "mesh",
            "re-run the port and GID checks (" + ", ".join(CHECK_CODES) + ")",
            [],
            mutates=False,
        )
    )
    # the probe starts ranks across the hostfile: an act, so a plan never runs it
    out.append(
        Action(
            CODE,
            "mesh",
            f"one-element all_sum across {n} rank(s), deadline {PROBE_DEADLINE_S:g} s",
            [],
        )
    )
    st["actions"] = out
    return out


def apply(ctx: FixContext, actions: List[Action]) -> None:
    """Carry out ``actions`` (from :func:`plan`), recording each one's outcome and changed."""
    got = _stale(ctx, apply=True)
    new: List[Action] = []
    for host, v in got.items():
        new += _as_mine(host, v)
        if not isinstance(v, Exception):
            _state(ctx).setdefault("stale_results", []).extend(v[1])
    rest = [a for a in actions if a.host == "mesh"]
    actions[:] = new + rest
    _state(ctx)["actions"] = actions
    _recover(ctx, actions)


def _step(actions: List[Action], prefix: str) -> Action:
    return next(a for a in actions if a.host == "mesh" and a.step.startswith(prefix))


def _wait_wired(ctx: FixContext, act: Action, reboot: Dict[str, str]) -> None:
    hx = ctx.hosts
    deadline = time.monotonic() + WIRED_WAIT_S
    while True:
        got = hx.each(lambda t: hx.check(t, ["MD302"]))
        held = {}
        for h, v in got.items():
            if isinstance(v, Exception):
                held[h] = f"could not check memory: {v}"
            else:
                bad = [r for r in v if r["status"] == "fail"]
                if bad:
                    held[h] = bad[0]["summary"]
        left = deadline - time.monotonic()
        if not held or left <= 0:
            break
        ctx.progress(f"waiting for wired memory on {', '.join(sorted(held))} ({left:.0f} s left)")
        time.sleep(min(WIRED_POLL_S, max(0.0, left)))
    act.outcome = OK if not held else f"{FAILED}: still held on {', '.join(sorted(held))}"
    act.detail = {"held": held}
    for h, why in held.items():
        reboot.setdefault(h, f"wired memory not freed after {WIRED_WAIT_S:g} s: {why}")


def _checks(ctx: FixContext, act: Action, reboot: Dict[str, str]) -> None:
    hx = ctx.hosts
    got = hx.each(lambda t: hx.check(t, list(CHECK_CODES), hostfile=ctx.hostfile))
    bad: Dict[str, str] = {}
    for h, v in got.items():
        if isinstance(v, Exception):
            bad[h] = f"could not check: {v}"
            continue
        fails = [r for r in v if r["status"] == "fail"]
        if fails:
            bad[h] = f"{fails[0]['code']} {fails[0]['summary']}"
    act.outcome = OK if not bad else f"{FAILED}: " + "; ".join(f"{h}: {w}" for h, w in bad.items())
    act.detail = {"failed": bad}
    for h, why in bad.items():
        reboot.setdefault(h, why)


def _probe(ctx: FixContext, act: Action, reboot: Dict[str, str]) -> None:
    from meshdoctor.probe import api

    hf = ctx.hostfile
    n = hf.world_size if hf is not None else 2
    request = api.ProbeRequest(
        hostfile=hf,
        nranks=None if hf is not None else 2,
        op="all_sum",
        size=str(4 * n),
        iters=1,
        warmup=0,
        timeout=PROBE_DEADLINE_S,
    )
    try:
        v = api.probe(
            request,
            gate=False,
            on_checked=lambda _: ctx.progress(
                f"re-forming the group: one-element all_sum across {n} rank(s)"
            ),
        )
    except api.ProbeSetupError as exc:
        act.outcome = f"{FAILED}: cannot probe: {exc}"
        reboot.setdefault("mesh", f"cannot probe: {exc}")
        return
    act.argv = [
        "meshdoctor",
        "probe",
        "--op",
        "all_sum",
        "--size",
        str(4 * n),
        "--iters",
        "1",
        "--warmup",
        "0",
        "--timeout",
        f"{PROBE_DEADLINE_S:g}",
    ]
    act.detail = {
        "verdict": v.verdict,
        "run_id": (v.probe or {}).get("run_id"),
        "failures": [r.summary for r in v.results if r.status in ("fail", "error")],
    }
    if v.verdict == "go":
        act.outcome = OK
        return
    bad = [r for r in v.results if r.status in ("fail", "error")]
    act.outcome = f"{FAILED}: " + (bad[0].summary if bad else v.verdict)
    named = {r.host for r in bad if r.host != "mesh"} & set(ctx.hosts.names())
    for h in named or set(ctx.hosts.names()):
        why = next((r.summary for r in bad if r.host == h), bad[0].summary if bad else "")
        reboot.setdefault(h, f"the group did not re-form: {why}")


def _recover(ctx: FixContext, actions: List[Action]) -> None:
    """After the stale ranks are gone: memory, ports and GIDs, then the probe; fills the
    state's ``reboot`` (host -> reason; ``mesh`` when no host can be named)."""
    st = _state(ctx)
    reboot: Dict[str, str] = {}
    for r in st.get("stale_results", []):
        if r.needs_reboot:
            reboot[r.host] = r.summary
    for a in actions:
        if a.host != "mesh" and a.failed:
            reboot.setdefault(a.host, a.outcome)
    _wait_wired(ctx, _step(actions, "wait up to"), reboot)
    _checks(ctx, _step(actions, "re-run the port"), reboot)
    probe = _step(actions, "one-element all_sum")
    if any(h != "mesh" for h in reboot):
        probe.outcome = f"{SKIPPED}: hosts already need a reboot"
    else:
        _probe(ctx, probe, reboot)
    st["reboot"] = reboot


def verify(ctx: FixContext) -> Verification:
    """Look again, as the checks this fix resolves do, and say whether it is resolved."""
    st = _state(ctx)
    if "reboot" not in st:
        _recover(ctx, st.get("actions") or plan(ctx))
    reboot: Dict[str, str] = st["reboot"]
    ev = {"outcome": RECOVERED if not reboot else "needs_reboot", "needs_reboot": reboot}
    if not reboot:
        return Verification(
            True, f"{RECOVERED}: the group re-formed (one-element all_sum)", evidence=ev
        )
    if "mesh" in reboot and len(reboot) == 1:
        return Verification(False, reboot["mesh"], evidence=ev)
    return Verification(
        False,
        "needs_reboot: " + "; ".join(f"{h}: {w}" for h, w in reboot.items()),
        needs_reboot={h: w for h, w in reboot.items() if h != "mesh"},
        evidence=ev,
    )


FIX = Fix(
    code=CODE,
    name="reset-group",
    title="Reset the group: stale ranks, memory, ports, re-form",
    resolves=("MD301", "MD302"),
    risk=DISRUPTIVE,
    scope=FLEET_SCOPE,
    plan=plan,
    apply=apply,
    verify=verify,
    doc=Doc(
        meaning=f"""
After a crashed job: stops the leftover ranks on every host (as `meshdoctor fix stale-ranks`),
waits up to {WIRED_WAIT_S:g} s, with progress, for the wired memory they held to come back (MD302),
re-runs the port and GID checks (MD202, MD203), then re-forms the group with a one-element
all_sum across the hostfile (two local ranks over loopback without one) under a
{PROBE_DEADLINE_S:g} s deadline.
""",
        why="""
Leftover ranks keep queue pairs and wired memory, so the next job fails to form its group. The
result is "recovered", or needs_reboot with the reason for each host (a rank that survived
SIGKILL, wired memory still held, a port down, a group that does not form).
""",
        action="""
`meshdoctor fix reset-group --hostfile FILE` shows the plan; add --yes to apply. Reboot the
hosts it lists in needs_reboot.
""",
        sources=(
            "MLX #3910, #4278 (ranks that survive SIGTERM)",
            "mlx #4192, #4319 (wired memory held after a crash)",
        ),
    ),
)
