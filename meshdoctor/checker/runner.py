"""Runs checks concurrently, each under its own deadline, and never loses a result.

Each check runs in a daemon thread, all under one deadline (:mod:`meshdoctor.deadline`). A check
that raises becomes one result in ``error`` naming the exception; one that overruns its deadline
becomes a result in ``error`` naming the deadline, and its thread is abandoned (daemon threads do not hold the process at exit; the external commands it
started have their own, shorter deadlines and are killed by :mod:`meshdoctor.execute`).
"""

from __future__ import annotations

import time
import traceback
from typing import Iterable, List, Optional

from meshdoctor.codes.engine import CHECK_INTERRUPTED
from meshdoctor.checker.model import Check, Finding
from meshdoctor.facts.context import NodeContext
from meshdoctor.deadline import start
from meshdoctor.model import ERROR, OK, SKIP, Remediation, Result

DEFAULT_CHECK_TIMEOUT_S = 10.0
INTERRUPTED_CODE = CHECK_INTERRUPTED.code  # MD190


class Interrupted(Exception):
    """An interrupt (Ctrl-C, SIGTERM) stopped :func:`run_checks`. ``results``: those of the
    checks that had finished, in check order, and one ``error`` result for each check that had
    not (its summary names the signal); ``signame``: the signal's name (``SIGINT``...);
    ``unfinished`` and ``total``: how many checks had not finished, of how many."""

    def __init__(
        self,
        results: List[Result],
        signame: str,
        unfinished: int = 0,
        total: int = 0,
        unit: str = "checks",
        host: Optional[str] = None,
    ) -> None:
        super().__init__(signame)
        self.results, self.signame = results, signame
        self.unfinished, self.total = unfinished, total
        # what ``unfinished`` counts (``checks``; fleet mode: ``hosts``) and the result's host
        # (None: this node's)
        self.unit, self.host = unit, host


def interrupt_result(
    signame: str, host: str, unfinished: int = 0, total: int = 0, unit: str = "checks"
) -> Result:
    """The ``error`` result (:data:`INTERRUPTED_CODE`) that says a run was interrupted by
    ``signame`` with ``unfinished`` of ``total`` checks (``unit``: or hosts, in fleet mode) not
    finished (0 of 0: before any ran)."""
    done = f"{unfinished} of {total} {unit} did not finish" if total else "before the checks ran"
    return Result(
        code=INTERRUPTED_CODE,
        check="check.interrupted",
        title=CHECK_INTERRUPTED.title,
        status=ERROR,
        summary=f"interrupted by {signame}: {done}; every command meshdoctor had "
        "started was stopped",
        host=host,
        evidence={"signal": signame, "unfinished": unfinished, unit: total},
        remediation=Remediation("Run the check again: this node was not fully assessed."),
    )


def _to_results(check: Check, ctx: NodeContext, out, duration: float) -> List[Result]:
    if out is None:
        findings: List[Finding] = []
    elif isinstance(out, Finding):
        findings = [out]
    else:
        findings = list(out)
    if not findings:
        findings = [Finding(OK, "nothing to report")]
    results = []
    for f in findings:
        if not isinstance(f, Finding):
            raise TypeError(f"check {check.name} returned {type(f).__name__}, not a Finding")
        results.append(
            Result(
                code=check.code,
                check=check.name,
                title=check.title,
                status=f.status,
                summary=f.summary,
                host=ctx.host,
                severity=f.severity,
                evidence=f.evidence,
                remediation=f.remedy(),
                needs_reboot=f.needs_reboot,
                duration_s=duration,
            )
        )
    return results


def _error(
    check: Check, ctx: NodeContext, summary: str, duration: float, evidence: Optional[dict] = None
) -> Result:
    return Result(
        code=check.code,
        check=check.name,
        title=check.title,
        status=ERROR,
        summary=summary,
        host=ctx.host,
        evidence=evidence or {},
        duration_s=duration,
        remediation=Remediation(
            "The check itself could not run, so this node is not assessed. Re-run "
            f"with --only {check.code} to retry it; if it keeps failing, report the "
            "evidence."
        ),
    )


def _one(check: Check, ctx: NodeContext) -> List[Result]:
    """Run one check on ``ctx`` (in its worker thread): its findings as results, or one error
    result naming the exception it raised, with the time it took."""
    start = time.monotonic()
    try:
        out = check.run(ctx)
        if out is not None and not isinstance(out, Finding):
            out = list(out)  # generators run here, inside the deadline
        return _to_results(check, ctx, out, time.monotonic() - start)
    except Exception as exc:
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        return [
            _error(
                check,
                ctx,
                f"check {check.name} raised {type(exc).__name__}: {exc}",
                time.monotonic() - start,
                {
                    "exception": type(exc).__name__,
                    "message": str(exc),
                    "traceback": "".join(tb[-3:])[-2000:],
                },
            )
        ]


def _not_here(check: Check, ctx: NodeContext) -> Result:
    """The skip of a check that does not apply on this platform."""
    return Result(
        code=check.code,
        check=check.name,
        title=check.title,
        status=SKIP,
        summary=f"not applicable on {ctx.platform} (applies to {', '.join(check.platforms)})",
        host=ctx.host,
    )


def _interrupted(checks, ctx, slots, running, signame: str, t0: float) -> "Interrupted":
    """The :class:`Interrupted` of a run cut short by ``signame``: what had finished when it
    came, an error result for each check that had not."""
    done = list(slots)
    for i, o in running.boxes.items():
        if o.finished and o.error is None:
            done[i] = o.value
    results = []
    for i, check in enumerate(checks):
        results.extend(
            done[i]
            or [
                _error(
                    check,
                    ctx,
                    f"check {check.name} did not finish: meshdoctor was interrupted ({signame})",
                    time.monotonic() - t0,
                    {"interrupted": signame},
                )
            ]
        )
    return Interrupted(results, signame, sum(1 for d in done if d is None), len(checks))


def run_checks(
    checks: Iterable[Check], ctx: NodeContext, timeout: float = DEFAULT_CHECK_TIMEOUT_S
) -> List[Result]:
    """Run ``checks`` on ``ctx`` concurrently; return their results in check order.

    ``timeout`` is each check's deadline in seconds, counted from the common start; the call
    returns within ``timeout`` plus a few milliseconds however the checks behave. A
    KeyboardInterrupt while waiting (the CLI turns SIGTERM into one) raises :class:`Interrupted`
    with the results so far; the caller stops the commands still running
    (:func:`meshdoctor.execute.stop_all`).
    """
    checks = list(checks)
    slots: List[Optional[List[Result]]] = [None] * len(checks)
    t0 = time.monotonic()
    calls = {}
    for i, check in enumerate(checks):
        if ctx.platform not in check.platforms:
            slots[i] = [_not_here(check, ctx)]
            continue
        calls[i] = lambda check=check: _one(check, ctx)
    running = start(calls, name="check")
    try:
        got = running.wait(timeout)
    except KeyboardInterrupt as exc:  # what had finished when it came, nothing after
        raise _interrupted(checks, ctx, slots, running, str(exc) or "SIGINT", t0) from None
    for i, o in got.items():
        if o.error is not None:  # not an Exception (SystemExit, KeyboardInterrupt in a check)
            slots[i] = [
                _error(
                    checks[i],
                    ctx,
                    f"check {checks[i].name} raised {type(o.error).__name__}",
                    time.monotonic() - t0,
                    {"exception": type(o.error).__name__},
                )
            ]
        elif o.finished:
            slots[i] = o.value
    results: List[Result] = []
    for i, check in enumerate(checks):
        got = slots[i]
        if got is None:
            got = [
                _error(
                    check,
                    ctx,
                    f"check {check.name} did not finish within its "
                    f"{timeout:g} s deadline (a command or gathering hung)",
                    time.monotonic() - t0,
                    {"deadline_s": timeout},
                )
            ]
        results.extend(got)
    return results
