"""``meshdoctor fix``: choose the fixes, plan, confirm, apply, verify, and build the verdict.

Without names it runs every check on every host first and chooses the fixes that resolve the
failures found (:func:`meshdoctor.fixer.registry.fixes_for`, for the hostfile's backend).
Without ``--yes`` it plans only; on a terminal it shows the plan and asks once, and then
applies exactly the steps shown (each process re-verified by pid and start time before its
signal); anything found only at apply time is reported and left for the next run. Applying holds the fix lock
(:class:`meshdoctor.receipts.FixLock`), so two fix runs never interleave. The CLI module only
parses options and calls :func:`run`.
"""

from __future__ import annotations

import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor.codes.engine import FIX_INTERRUPTED, FIX_NOT_STARTED
from meshdoctor.fixer.engine import run_fixes
from meshdoctor.fixer.hosts import HostExec
from meshdoctor.fixer.model import (
    APPROVED,
    JOURNAL,
    SKIPPED,
    APPROVED_ENV,
    Action,
    Fix,
    FixContext,
    approval_key,
    pending,
)
from meshdoctor.fixer.registry import all_fixes, fixes_for, lookup
from meshdoctor.model import ERROR, FAIL, WARN, HostInfo, Remediation, Result, Verdict
from meshdoctor.text import one_line


class UnknownFix(ValueError):
    """A fix name that does not exist; the message lists the ones that do."""


def resolve(names: Sequence[str]) -> List[Fix]:
    """The fixes named (codes or names), in code order; raises :class:`UnknownFix`."""
    out: List[Fix] = []
    for n in names:
        fx = lookup(n)
        if fx is None:
            raise UnknownFix(f"no fix {n!r}; fixes: " + ", ".join(f.name for f in all_fixes()))
        if fx not in out:
            out.append(fx)
    return sorted(out, key=lambda f: f.code)


def list_rows() -> List[Dict[str, object]]:
    """One row per fix: code, name, kind, risk, the codes it resolves, title, platforms
    (empty: the shape of ``list-checks --json`` rows, one schema for both)."""
    return [
        {
            "code": f.code,
            "name": f.name,
            "kind": "fix",
            "risk": f.risk,
            "resolves": list(f.resolves),
            "title": f.title,
            "platforms": [],
        }
        for f in all_fixes()
    ]


def _from_failures(hx: HostExec, hostfile, timeout: float) -> Tuple[List[Fix], List[Result]]:
    """Run every check on every host; the fixes for the failures (those for the hostfile's
    backend), and the failed or errored results no chosen fix resolves (they stay in the
    verdict)."""
    from meshdoctor.checker.registry import all_checks

    codes = [c.code for c in all_checks()]
    got = hx.each(lambda t: hx.check(t, codes, hostfile=hostfile, timeout=timeout))
    bad: List[Result] = []
    for host, v in got.items():
        if isinstance(v, Exception):
            bad.append(
                Result(
                    code=FIX_NOT_STARTED.code,
                    check="fix",
                    title=FIX_NOT_STARTED.title,
                    status=ERROR,
                    host=host,
                    summary=f"could not run the checks on {host}: {v}",
                )
            )
            continue
        for d in v:
            if d["status"] in (FAIL, ERROR):
                bad.append(
                    Result(
                        code=d["code"],
                        check=d["check"],
                        title=d.get("title"),
                        status=d["status"],
                        host=host,
                        summary=d["summary"],
                        evidence=d.get("evidence") or {},
                        needs_reboot=bool(d.get("needs_reboot")),
                    )
                )
    fixes = fixes_for(
        {r.code for r in bad if r.status == FAIL},
        backend=hostfile.effective_backend if hostfile is not None else None,
    )
    covered = {c for f in fixes for c in f.resolves}
    return fixes, [r for r in bad if r.code not in covered]


def apply_command(
    command: str, hostfile, include_running: bool, output_hostfile: Optional[str]
) -> str:
    """``command`` (a fix's ``meshdoctor fix NAME --yes``) with the options of the run that
    planned it, so that pasted it applies the same plan: ``--hostfile PATH``,
    ``--include-running``, ``--output-hostfile``, then ``--yes``
    (``--yes`` alone would act on the machine it is pasted on only). Any other command is
    returned as it is."""
    import shlex

    from meshdoctor.text import shell_line

    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if argv[:2] != ["meshdoctor", "fix"] or argv[-1:] != ["--yes"] or len(argv) != 4:
        return command
    opts: List[str] = []
    if hostfile is not None and hostfile.path and hostfile.path != "<stdin>":
        opts += ["--hostfile", hostfile.path]
    if include_running:
        opts.append("--include-running")
    if output_hostfile:
        opts += ["--output-hostfile", output_hostfile]
    return shell_line([*argv[:3], *opts, "--yes"])


def _interrupted(journal: List[Action], signame: str) -> Tuple[List[Action], List[Result]]:
    """An apply interrupted by ``signame``: every command meshdoctor had started is stopped;
    the actions this machine had planned (``journal``), each with the outcome it had reached
    (done, failed, or still planned: not done), and the MD790 result saying so."""
    from meshdoctor import execute

    execute.stop_all(final=True)
    actions = list(journal)
    left = pending(actions)
    done = [a for a in actions if a not in left and not a.outcome.startswith(SKIPPED)]
    return actions, [
        Result(
            code=FIX_INTERRUPTED.code,
            check="fix.interrupted",
            title=FIX_INTERRUPTED.title,
            status=ERROR,
            host="mesh",
            summary=f"interrupted by {signame} while applying the plan: {len(done)} step(s) "
            f"taken, {len(left)} not taken; every command meshdoctor had started was stopped "
            "and nothing was verified",
            evidence={"signal": signame, "taken": len(done), "not_taken": len(left)},
            remediation=Remediation(
                "Read the actions listed, then run the fix again: it plans from what is left."
            ),
        )
    ]


def _remote_remedy(rem, host: str) -> None:
    """A remote host's remedy as the operator should paste it where the fix runs: its command
    and each command its prose quotes in backquotes run on ``host`` (``ssh HOST '...'``,
    :func:`meshdoctor.remote.shown_remedy`); a ``meshdoctor`` command (already given the plan's
    options, :func:`apply_command`) and an ``ssh`` command are left as they are."""
    import re

    from meshdoctor import remote

    def there(command: str):
        if command.split(" ", 1)[0] in ("meshdoctor", "ssh"):
            return command
        return remote.shown_remedy(host, command)  # None: nothing safe to offer

    if rem.command:
        rem.command = there(rem.command)
    if "`" in rem.text:
        rem.text = re.sub(
            r"`([^`\n]+)`", lambda m: f"`{there(m.group(1)) or m.group(1)}`", rem.text
        )


def run(
    names: Sequence[str],
    *,
    hostfile,
    yes: bool,
    include_running: bool,
    output_hostfile: Optional[str],
    timeout: float,
    ask: Optional[Callable[[List[Action]], bool]],
    progress: Callable[[str], None],
) -> Verdict:
    """Run the fix command; returns the verdict. ``ask``:
    called once with the planned actions when there is something to apply and no ``yes``
    (None: no terminal, plan only)."""
    import os
    import uuid

    from meshdoctor.receipts import RUN_ENV

    run_id = os.environ.setdefault(RUN_ENV, f"md-fix-{uuid.uuid4().hex[:12]}")
    verdict = Verdict(command="fix")
    hx = HostExec(hostfile)
    extra: List[Result] = []
    if names:
        fixes = resolve(names)
    else:
        fixes, extra = _from_failures(hx, hostfile, timeout)
    options = _approved_by_env()

    def ctx(apply: bool) -> FixContext:
        return FixContext(
            hosts=hx,
            hostfile=hostfile,
            apply=apply,
            include_running=include_running,
            output_hostfile=output_hostfile,
            progress=progress,
            options=dict(options),
        )

    actions: List[Action] = []
    results: List[Result] = []
    if fixes:
        apply_now = yes
        if not yes:
            actions, results = run_fixes(fixes, ctx(False))
            if pending(actions) and ask is not None and ask(actions):
                apply_now = True
                # apply exactly what was shown and approved: what is new at apply time is
                # reported and left for the next run (fixer.engine.hold_to_approved)
                approved: Dict[str, List[str]] = {}
                for a in pending(actions):
                    approved.setdefault(a.host, []).append(approval_key(a))
                options[APPROVED] = approved
        if apply_now:
            actions, results = _apply(fixes, ctx, options, run_id, actions, extra)
    remote_hosts = {t.name for t in hx.targets if not t.local}
    for r in results:  # "apply with": the options that made the plan, then --yes
        if r.remediation is not None and r.remediation.command:
            r.remediation.command = apply_command(
                r.remediation.command, hostfile, include_running, output_hostfile
            )
        if r.remediation is not None and r.host in remote_hosts:
            _remote_remedy(r.remediation, r.host)
    verdict.results = results + extra
    verdict.actions = [a.to_dict() for a in actions]
    verdict.hosts = _hosts(hx)
    return verdict


def _approved_by_env() -> Dict[str, object]:
    """The fix options of a host's share of a run whose plan the operator approved (its
    approval keys in :data:`APPROVED_ENV`, JSON): that plan only; unreadable, nothing counts
    as approved; ``{}`` outside such a run."""
    import json
    import os

    options: Dict[str, object] = {}
    if os.environ.get(APPROVED_ENV):
        try:
            options[APPROVED] = {"*": list(json.loads(os.environ[APPROVED_ENV]))}
        except (ValueError, TypeError):
            options[APPROVED] = {"*": []}  # unreadable: nothing counts as approved
    return options


def _apply(
    fixes: List[Fix],
    ctx: Callable[[bool], FixContext],
    options: Dict[str, object],
    run_id: str,
    planned: List[Action],
    extra: List[Result],
) -> Tuple[List[Action], List[Result]]:
    """``(actions, results)`` of applying ``fixes`` under this machine's fix lock (``run_id``),
    each action journalled as it is applied (``options[JOURNAL]``); an interrupt gives the
    actions taken so far; a lock or state folder that cannot be used, one FIX_NOT_STARTED error
    beside the ``planned`` actions (nothing applied). A lock in its fallback place is a warning
    added to ``extra``."""
    from meshdoctor.receipts import FixLock, LockBusy, StateDirError, StateFileError

    journal: List[Action] = []
    options[JOURNAL] = journal  # what this machine planned, as it is applied
    try:
        with FixLock(run_id) as lock:
            actions, results = run_fixes(fixes, ctx(True))
    except KeyboardInterrupt as exc:  # the actions taken so far, and the interrupt
        return _interrupted(journal, str(exc) or "SIGINT")
    except (LockBusy, StateDirError, StateFileError) as exc:
        return planned, [
            Result(
                code=FIX_NOT_STARTED.code,
                check="fix",
                title=FIX_NOT_STARTED.title,
                status=ERROR,
                host="mesh",
                summary=str(exc),
            )
        ]
    if lock.fallback:  # an emergency fix still runs; say where its lock was
        extra.append(
            Result(
                code=FIX_NOT_STARTED.code,
                check="fix",
                title=FIX_NOT_STARTED.title,
                status=WARN,
                host="mesh",
                summary=f"the fix ran with its lock in {lock.path}: {lock.fallback}; "
                "no receipt can be written there",
                remediation=Remediation(
                    "Free space or make the home writable (or set "
                    "MESHDOCTOR_STATE_DIR) so that receipts are kept again."
                ),
            )
        )
    return actions, results


def _hosts(hx: HostExec) -> List[HostInfo]:
    """The verdict's hosts: every target the fixes acted on, reachable or not (this machine's
    platform named)."""
    from meshdoctor.facts.context import current_platform

    return [
        HostInfo(
            t.name,
            t.rank,
            reachable=t.name not in hx.unreachable,
            platform={"os": current_platform()} if t.local else {},
        )
        for t in hx.targets
    ]


def stderr_progress(line: str) -> None:
    """Progress lines on stderr (terminal only), each one line (:func:`meshdoctor.text.one_line`:
    host names and tools' words are text from outside)."""
    sys.stderr.write(f"meshdoctor fix: {one_line(line)}\n")
    sys.stderr.flush()
