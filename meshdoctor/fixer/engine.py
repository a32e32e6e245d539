"""The fix engine: runs plan -> apply -> verify, and turns what happened into typed actions and
results of the verdict.

The fixes are found by :mod:`meshdoctor.fixer.registry`. A host-scope fix runs on each host by
itself (this machine in-process, others by meshdoctor over ssh, through the
:class:`meshdoctor.fixer.hosts.HostExec` of :attr:`FixContext.hosts`), and only on the platforms
its ``Fix`` lists; a fleet-scope fix runs once, from here. Each fix gives one result per host
(code MD7xx): ``ok`` when it verified, ``fail`` when steps are still pending (plan only) or
verification failed, with the host in ``needs_reboot`` when only a reboot can clear it.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from meshdoctor.fixer.model import (
    APPROVED,
    JOURNAL,
    FLEET_SCOPE,
    HOST_SCOPE,
    NOT_APPROVED,
    PLANNED,
    SKIPPED,
    Action,
    Fix,
    FixContext,
    Verification,
    approval_key,
    pending,
)
from meshdoctor.fixer.registry import fixes_for, lookup
from meshdoctor.model import FAIL, OK, WARN, Remediation, Result


def annotate(results: Iterable[Result]) -> None:
    """Name the fix in the remediation of each failed or warning result a fix resolves."""
    results = list(results)
    if not any(r.status in (FAIL, WARN) for r in results):
        return  # nothing to name a fix for: the fix modules are not even loaded
    by_code: Dict[str, str] = {}
    for f in reversed(fixes_for({r.code for r in results})):
        for c in f.resolves:
            by_code[c] = f.code
    for r in results:
        if r.status in (FAIL, WARN) and r.code in by_code:
            if r.remediation is None:
                r.remediation = Remediation(f"Run `meshdoctor fix {lookup(by_code[r.code]).name}`.")
            r.remediation.fix = by_code[r.code]


def _planned_summary(mine: List[Action], left: List[Action]) -> str:
    """What a plan not applied says: the steps listed in the plan (every planned one), and how
    many of them would change state when they differ."""
    listed = sum(a.outcome == PLANNED for a in mine)
    if listed == len(left):
        return f"{listed} step(s) planned, not applied"
    return f"{listed} step(s) planned ({len(left)} would change state), not applied"


def fix_result(
    fx: Fix, host: str, actions: Sequence[Action], ver: Optional[Verification]
) -> List[Result]:
    """The results of one fix on ``host``: one for the host itself, plus one per host of
    ``ver.needs_reboot`` (a fleet fix names each host a reboot must clear)."""
    mine = [a for a in actions if a.code == fx.code]
    changed = any(a.changed for a in mine)
    evidence: Dict[str, Any] = {
        "fix": fx.name,
        "risk": fx.risk,
        "changed": changed,
        "steps": len(mine),
        "failed_steps": sum(a.failed for a in mine),
    }
    left = pending(mine)
    cmd = f"meshdoctor fix {fx.name} --yes"
    if left:
        return [
            Result(
                code=fx.code,
                check=f"fix.{fx.name}",
                title=fx.title,
                status=FAIL,
                host=host,
                summary=_planned_summary(mine, left),
                evidence=dict(evidence, pending=[a.step for a in left]),
                remediation=Remediation("Read the plan above; apply it with --yes.", cmd),
            )
        ]
    assert ver is not None
    evidence["verification"] = ver.evidence
    if ver.refused:
        status, summary = FAIL, ver.summary
    elif ver.ok and not ver.needs_reboot:
        status = OK
        summary = ("verified: " if changed else "nothing to change: ") + ver.summary
    else:
        status, summary = FAIL, ver.summary
    out = [
        Result(
            code=fx.code,
            check=f"fix.{fx.name}",
            title=fx.title,
            status=status,
            host=host,
            summary=summary,
            evidence=evidence,
            needs_reboot=host in ver.needs_reboot,
            remediation=None
            if status == OK
            else Remediation(
                "Reboot the hosts listed in needs_reboot, then run the fix again."
                if ver.needs_reboot
                else "See the summary and the actions above."
            ),
        )
    ]
    for h, why in ver.needs_reboot.items():
        if h != host:
            out.append(
                Result(
                    code=fx.code,
                    check=f"fix.{fx.name}",
                    title=fx.title,
                    status=FAIL,
                    host=h,
                    summary=f"needs a reboot: {why}",
                    needs_reboot=True,
                    evidence={"fix": fx.name, "reason": why},
                    remediation=Remediation("Reboot this host, then run the fix again."),
                )
            )
    return out


def hold_to_approved(fx: Fix, ctx: FixContext, host: str, actions: List[Action]) -> None:
    """Leave every step of ``actions`` (planned again at apply time) that the operator did not
    approve (:func:`~meshdoctor.fixer.model.approval_key` not in ``ctx.options["approved"]`` for
    ``host``, ``"*"``, or, for a fleet fix, any host) unapplied, saying so; their pids go to
    ``ctx.options["not_approved_pids"]`` for the fix's verification."""
    approved = ctx.options.get(APPROVED) or {}
    if fx.scope == FLEET_SCOPE:
        keys = {k for ks in approved.values() for k in ks}
    else:
        keys = set(approved.get(host, ())) | set(approved.get("*", ()))
    later = ctx.options.setdefault("not_approved_pids", [])
    for a in pending(actions):
        if approval_key(a) not in keys:
            a.outcome = f"{SKIPPED}: {NOT_APPROVED}"
            if a.detail.get("pid"):
                later.append(a.detail["pid"])
    if fx.scope != FLEET_SCOPE:
        actions.extend(
            _gone_since_approved(fx, ctx, host, keys - {approval_key(a) for a in actions})
        )


def _gone_since_approved(fx: Fix, ctx: FixContext, host: str, keys: Any) -> List[Action]:
    """A step for each approved signal to a process (``kill ... PID``) that the plan made again
    at apply time no longer holds: that process exited while the operator read the plan (its
    pid now free, or another process's: left alone). Each is said in
    ``ctx.options["vanished"]`` for the fix's verification, so "nothing left" never hides it."""
    import json

    from meshdoctor.proctable import psutil

    out = []
    vanished = ctx.options.setdefault("vanished", [])
    for key in sorted(keys):
        try:
            argv, pid, started = json.loads(key)
        except (ValueError, TypeError):
            continue
        if not (argv and argv[0] == "kill" and isinstance(pid, int)):
            continue
        reused = psutil.pid_exists(pid)
        why = f"pid {pid} had exited before it was signalled" + (
            " and its number is now another process's, left alone" if reused else ""
        )
        vanished.append(why)
        out.append(
            Action(
                fx.code,
                host,
                f"approved: {' '.join(argv)}",
                [],
                mutates=False,
                outcome=f"{SKIPPED}: {why}",
                detail={"pid": pid, "create_time": started, "reused": reused},
            )
        )
    return out


def run_one(fx: Fix, ctx: FixContext, host: str) -> Tuple[List[Action], List[Result]]:
    """plan -> apply (when ``ctx.apply``) -> verify (when nothing is left pending) for one fix;
    a fix that raises gives a result in error naming the exception."""
    actions: List[Action] = []
    try:
        actions = fx.plan(ctx)
        journal = ctx.options.get(JOURNAL)
        if isinstance(journal, list):
            for a in actions:
                a.host = a.host or host
            journal.extend(actions)
        if ctx.apply and APPROVED in ctx.options:
            hold_to_approved(fx, ctx, host, actions)
        if ctx.apply and pending(actions):
            fx.apply(ctx, actions)
        ver = None if pending(actions) else fx.verify(ctx)
        return actions, fix_result(fx, host, actions, ver)
    except Exception as exc:  # never lose the verdict
        return actions, [
            Result(
                code=fx.code,
                check=f"fix.{fx.name}",
                title=fx.title,
                status="error",
                host=host,
                summary=f"fix {fx.name} raised {type(exc).__name__}: {exc}",
                evidence={"exception": type(exc).__name__},
            )
        ]


def not_applicable(fx: Fix, platform: str, alone: bool = False) -> Optional[Verification]:
    """Why ``fx`` does nothing on a host of ``platform`` (a host-scope fix whose ``platforms``
    do not list it; with ``alone``, a fleet-scope fix asked about this machine alone, no
    hostfile naming a fleet), as the verification of an empty plan; None where it applies."""
    if (fx.scope != HOST_SCOPE and not alone) or platform in fx.platforms:
        return None
    return Verification(
        True, f"not applicable on {platform} (applies to {', '.join(fx.platforms)})"
    )


def run_here(
    names: Sequence[str],
    *,
    hosts: Any,
    host: str,
    apply: bool,
    include_running: bool,
    options: Optional[Dict[str, Any]] = None,
) -> Tuple[List[Action], List[Result]]:
    """Run the host-scope fixes ``names`` on this machine only (the work each host does);
    ``hosts``: the :class:`meshdoctor.fixer.hosts.HostExec` of this machine alone that the fixes
    ask. A fix whose ``platforms`` do not list this machine's plans nothing and verifies as not
    applicable (:func:`not_applicable`)."""
    from meshdoctor.facts.context import current_platform

    ctx = FixContext(
        hosts=hosts,
        apply=apply,
        include_running=include_running,
        options=dict(options or {}, host=host),
    )
    actions: List[Action] = []
    results: List[Result] = []
    for name in names:
        fx = lookup(name)
        if fx is None or fx.scope != HOST_SCOPE:
            raise ValueError(f"{name!r} is not a fix that runs on one host")
        elsewhere = not_applicable(fx, current_platform())
        if elsewhere is not None:
            results += fix_result(fx, host, [], elsewhere)
            continue
        a, r = run_one(fx, ctx, host)
        for x in a:
            x.host = host
        actions += a
        results += r
    return actions, results


def run_fixes(fixes: Sequence[Fix], ctx: FixContext) -> Tuple[List[Action], List[Result]]:
    """Run ``fixes`` in code order: host-scope ones on every host at once (one call per host),
    then each fleet-scope one from here. Returns every action and result."""
    actions: List[Action] = []
    results: List[Result] = []
    host_fixes = [f.name for f in fixes if f.scope == HOST_SCOPE]
    if host_fixes:
        got = ctx.hosts.each(
            lambda t: ctx.hosts.fix(
                t,
                host_fixes,
                apply=ctx.apply,
                include_running=ctx.include_running,
                options=ctx.options,
            )
        )
        for host, value in got.items():
            if isinstance(value, Exception):
                for f in fixes:
                    if f.scope == HOST_SCOPE:
                        results.append(
                            Result(
                                code=f.code,
                                check=f"fix.{f.name}",
                                title=f.title,
                                status="error",
                                host=host,
                                summary=f"could not run on {host}: {value}",
                            )
                        )
                continue
            actions += value[0]
            results += value[1]
    for f in fixes:
        if f.scope == FLEET_SCOPE:
            from meshdoctor.facts.context import current_platform

            here = current_platform()
            elsewhere = not_applicable(f, here, alone=ctx.hostfile is None)
            if elsewhere is not None:  # no fleet named, and this machine is not one it serves
                results += fix_result(f, "mesh", [], elsewhere)
                continue
            a, r = run_one(f, ctx, "mesh")
            actions += a
            results += r
    return actions, results
