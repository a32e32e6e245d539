"""``meshdoctor launch`` from start to verdict: the gate, the job through the real mlx.launch, the
triage of a failure, the cleanup, and one verdict with its ``launch`` section.

The gate is the one every command uses: :func:`meshdoctor.checker.fleet.check_fleet` for a
hostfile or ``--hosts``, :func:`meshdoctor.checker.here.run_here` for this node alone (mlx.launch's
default, one rank on 127.0.0.1), :func:`meshdoctor.probe.api.probe` (which runs the same fleet
check first) with ``probe_size``. Only a ``go`` starts the job: ``no-go`` ends as exit 1,
``unknown`` as exit 3, as ``meshdoctor check || exit 1`` would. A failed job's bounded output copy
is triaged (:func:`meshdoctor.triage.command.run`, with the crash reports the hosts mlx.launch
reaches over ssh wrote since the launch).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from meshdoctor.hostfile.model import Hostfile
from meshdoctor.launch import locate
from meshdoctor.launch.outcome import INTERRUPTED, NOT_STARTED, JobOutcome
from meshdoctor.launch.supervise import JobSpec, Say, run_job, say_stderr
from meshdoctor.mlx.launch_rules import runs_without_ssh
from meshdoctor.model import ERROR, FAIL, EXIT_NOGO, EXIT_UNKNOWN, Result, Verdict
from meshdoctor.output import as_run, program
from meshdoctor.text import one_line, shell_line

GATE_CHECK_TIMEOUT_S = 10.0  # each check's deadline in the gate (``check``'s default)
GATE_PROBE_OP = "all_sum"  # --probe SIZE: one all_sum of SIZE per rank
PYTHON_ENV = "MESHDOCTOR_PYTHON"  # the interpreter whose MLX the node checks inspect
STDIN_NAME = "<stdin>"  # the path of a hostfile read from standard input (hostfile.load)


@dataclass(frozen=True)
class LaunchRequest:
    """What ``meshdoctor launch`` was asked: ``command`` (the job, after ``--``); at most one
    of ``hostfile`` (loaded; its ``path`` is what mlx.launch reads, standard input is written
    to a temporary file first) and ``hosts`` (``A,B,C`` as mlx.launch's ``--hosts``); neither:
    mlx.launch's default, one rank on 127.0.0.1. ``backend``: mlx.launch's ``--backend`` (None:
    the hostfile's, else its own choice). ``probe_size``: probe this much per rank in the gate.
    ``check``: run the gate. ``fix``/``yes``: plan (apply) ``fix stale-ranks`` after a failure.
    ``log``: write the whole output there. ``hang_after``: seconds without output and without a
    rank ending that count as a hang. ``argv``: how the user called us (for the re-run line)."""

    command: Tuple[str, ...]
    hostfile: Optional[Hostfile] = None
    hosts: Optional[str] = None
    backend: Optional[str] = None
    probe_size: Optional[str] = None
    check: bool = True
    fix: bool = False
    yes: bool = False
    log: Optional[str] = None
    hang_after: Optional[float] = None
    rerun: Tuple[str, ...] = field(default_factory=tuple)


@dataclass
class LaunchResult:
    """The verdict (with its ``launch`` section) and the exit status ``launch`` ends with."""

    verdict: Verdict
    exit_status: int


def _hostfile_of(req: LaunchRequest) -> Optional[Hostfile]:
    if req.hostfile is not None:
        return req.hostfile
    if req.hosts is not None:
        from meshdoctor.hostfile.load import from_list

        return from_list(req.hosts)
    return None


def gated_hostfile(req: LaunchRequest) -> Optional[Hostfile]:
    """The hostfile the gate judges: the one mlx.launch will read, as the backend mlx.launch
    will start (:meth:`meshdoctor.hostfile.model.Hostfile.launched_backend`: ``--backend`` wins
    over the hostfile's ``"backend"``, MLX 0.32.4 ``launch.py``).
    With ``--backend`` and no hosts named, mlx.launch's default ``--hosts 127.0.0.1``. None:
    no hosts and no backend named (the gate checks this node)."""
    import dataclasses

    hf = _hostfile_of(req)
    if hf is None and req.backend:
        from meshdoctor.hostfile.load import from_list
        from meshdoctor.mlx.launch_rules import LOCAL_SSH_NAME

        hf = from_list(LOCAL_SSH_NAME)
    if hf is None:
        return None
    from meshdoctor.probe.setup import default_backend

    # no --backend and none written: mlx.launch's own choice, nccl for a CUDA build of the
    # ranks' MLX (MESHDOCTOR_PYTHON during the gate), else ring
    chosen = hf.launched_backend(req.backend, cuda=lambda: default_backend() == "nccl")
    if chosen != hf.effective_backend or (req.backend and hf.backend != req.backend):
        hf = dataclasses.replace(hf, backend=chosen)
    return hf


def rank_hosts(req: LaunchRequest) -> List[str]:
    """Each rank's ssh name, in rank order, as mlx.launch will see them."""
    hf = _hostfile_of(req)
    return [h.ssh for h in hf.hosts] if hf is not None else ["127.0.0.1"]


# --- the gate -----------------------------------------------------------------------------------
@contextlib.contextmanager
def _ranks_python(python: Optional[str]) -> Iterator[None]:
    """``MESHDOCTOR_PYTHON`` (the interpreter whose MLX the checks inspect,
    :class:`meshdoctor.facts.context.NodeContext`) set to ``python`` while the gate runs, so
    it judges the MLX the job's ranks will import; restored before the job starts."""
    if python is None:
        yield
        return
    old = os.environ.get(PYTHON_ENV)
    os.environ[PYTHON_ENV] = python
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(PYTHON_ENV, None)
        else:
            os.environ[PYTHON_ENV] = old


def gate(req: LaunchRequest, verdict: Verdict, say: Say) -> Dict[str, Any]:
    """Run the gate into ``verdict`` (its results, hosts, fleet and probe sections); returns
    the ``launch.gate`` section: ``ran``, ``how`` (``fleet``, ``node``, ``probe``),
    ``verdict``, ``duration_s``, ``python`` (the job's interpreter whose MLX the checks
    inspected, :func:`meshdoctor.launch.locate.job_python`; None when the command names none)."""
    python = locate.job_python(req.command)
    with _ranks_python(python):
        section = _gate(req, verdict, say)
    section["python"] = python
    return section


def _gate(req: LaunchRequest, verdict: Verdict, say: Say) -> Dict[str, Any]:
    t0 = time.monotonic()
    hf = gated_hostfile(req)
    if req.probe_size is not None:
        from meshdoctor.probe import api as probe_api

        how = "probe"
        got = probe_api.probe(
            probe_api.ProbeRequest(
                hostfile=hf,
                backend=req.backend,
                size=req.probe_size,
                op=GATE_PROBE_OP,
                beside_hint="launch without --probe (the gate then only warns, MD411)",
            ),
            gate=True,
            on_checked=lambda _: say(  # said once the request is sound (else a usage error)
                f"gate: fleet check and a {req.probe_size} {GATE_PROBE_OP} probe of every rank"
            ),
        )
        verdict.results.extend(got.results)
        verdict.hosts.extend(got.hosts)
        verdict.fleet, verdict.probe = got.fleet, got.probe
        answer = got.verdict
    elif hf is not None:
        from meshdoctor.checker.fleet import FleetOptions, check_fleet

        how = "fleet"
        check = Verdict(command="check")
        check_fleet(hf, check, FleetOptions(timeout=GATE_CHECK_TIMEOUT_S))
        verdict.results.extend(check.results)
        verdict.hosts.extend(check.hosts)
        verdict.fleet = check.fleet
        answer = check.verdict
    else:
        from meshdoctor.checker import here
        from meshdoctor.model import HostInfo

        how = "node"
        ctx = here.context(timeout=GATE_CHECK_TIMEOUT_S)
        verdict.hosts.append(HostInfo(host=ctx.host, rank=0, platform={"os": ctx.platform}))
        check = Verdict(command="check", results=here.run_here(ctx, timeout=GATE_CHECK_TIMEOUT_S))
        verdict.results.extend(check.results)
        answer = check.verdict
    return {"ran": True, "how": how, "verdict": answer, "duration_s": time.monotonic() - t0}


def _say_gate_failures(verdict: Verdict, answer: str, say: Say) -> None:
    bad = [r for r in verdict.results if r.status in (FAIL, ERROR)]
    say(f"gate: {answer}: the job was not started ({len(bad)} problem(s))")
    for r in bad:
        say(f"  {r.status} {r.code} {one_line(r.host)}: {one_line(r.summary)}")
        if r.remediation is not None and r.remediation.text:
            say(f"    fix: {one_line(as_run(r.remediation.text))}")
        if r.remediation is not None and r.remediation.command:
            say(f"    run: {one_line(as_run(r.remediation.command))}")


# --- after the job ------------------------------------------------------------------------------
def _triage(req: LaunchRequest, copy: bytes, since_s: float) -> Verdict:
    """The triage of the job's output copy and of the crash reports the ssh hosts wrote since
    the launch (``since_s`` seconds)."""
    from meshdoctor.triage.command import DEFAULT, run

    remote_hosts = sorted({h for h in rank_hosts(req) if not runs_without_ssh(h)})
    import sys

    return run(
        ["-"],
        stdin=io.BytesIO(copy),
        hosts=remote_hosts,
        since_s=since_s,
        crash_reports=DEFAULT if sys.platform == "darwin" and not remote_hosts else None,
    )


def _first_cause(tv: Verdict) -> Optional[Result]:
    return next(
        (r for r in tv.results if r.status == FAIL and r.code.startswith("MD6") and not r.severity),
        next((r for r in tv.results if r.status == FAIL), None),
    )


def _fix(req: LaunchRequest, say: Say) -> Dict[str, Any]:
    """``fix stale-ranks`` on the hostfile's hosts: planned, applied with ``yes``."""
    from meshdoctor.fixer.plan import run, stderr_progress

    fv = run(
        ["stale-ranks"],
        hostfile=_hostfile_of(req),
        yes=req.yes,
        include_running=False,
        output_hostfile=None,
        timeout=GATE_CHECK_TIMEOUT_S,
        ask=None,
        progress=stderr_progress,
    )
    for a in fv.actions or []:
        say(
            f"fix stale-ranks: {one_line(str(a.get('step') or a.get('action') or a))}: "
            f"{one_line(str(a.get('outcome') or ('planned' if a.get('planned') else '')))}"
        )
    if not fv.actions:
        say("fix stale-ranks: no rank of this job was left behind: nothing to do")
    elif not req.yes:
        say("fix stale-ranks: planned only; apply with --fix --yes")
    return {"applied": req.yes, "actions": fv.actions or [], "verdict": fv.verdict}


def _say_outcome(out: JobOutcome, status: int, say: Say) -> None:
    failed = [r for r in out.ranks if r.status == "exited" and r.code and not r.after_teardown]
    if out.first_failed is not None:
        r = out.ranks[out.first_failed]
        say(
            f"rank {r.rank} ({one_line(r.host)}) failed first: mlx.launch reported exit code "
            f"{r.code}; exiting with {status}"
            + (f" (mlx.launch itself exited {out.launcher_rc})" if out.launcher_rc == 0 else "")
        )
    elif out.kind == "hang":
        say(f"hang: {out.message}; exiting with {status}")
    elif out.kind == NOT_STARTED:
        say(f"the job did not start: {out.message}")
    elif status:
        say(f"the job failed: exit status {status}")
    others = [r for r in failed if r.rank != out.first_failed]
    termed = [r.rank for r in others if r.code == -15]  # mlx.launch's SIGTERM of the survivors
    if termed:
        say("then stopped by mlx.launch (SIGTERM): " + ", ".join(f"rank {x}" for x in termed))
    rest = [r.rank for r in others if r.code != -15]
    if rest:
        say("also failed: " + ", ".join(f"rank {x}" for x in rest))
    if out.survivors:
        say("torn down: " + ", ".join(f"rank {x}" for x in out.survivors) + " (were still running)")
    left = [f for f in out.leftovers]
    if left:
        say(f"{len(left)} leftover process(es) carrying this run's marker were killed")


def launch(
    req: LaunchRequest,
    *,
    interrupts: Any = None,
    say: Say = say_stderr,
) -> LaunchResult:
    """Run ``req`` (module doc) and return the verdict and the exit status: the job's
    (:meth:`meshdoctor.launch.outcome.JobOutcome.exit_status`), 1 for a gate no-go, 3 for a gate
    that could not assess or an interrupt. ``interrupts``: gives the
    :class:`meshdoctor.interrupts.Interrupts` the job watch answers to, or a callable giving it
    (called once the gate passed); a signal it holds after the gate starts no job (exit 3). Raises :class:`meshdoctor.launch.locate.LauncherMissing` before anything runs
    when MLX has no mlx.launch here."""
    prefix = locate.launcher()
    verdict = Verdict(command="launch")
    section: Dict[str, Any] = {"gate": {"ran": False}}
    verdict.launch = section
    if req.check:
        section["gate"] = gate(req, verdict, say)
        answer = section["gate"]["verdict"]
        if answer != "go":
            _say_gate_failures(verdict, answer, say)
            section["exit_status"] = EXIT_NOGO if answer == "no-go" else EXIT_UNKNOWN
            return LaunchResult(verdict, section["exit_status"])
        say(f"gate: go ({section['gate']['how']} check, {section['gate']['duration_s']:.1f} s)")
    intr = interrupts() if callable(interrupts) else interrupts
    if intr is not None and intr.pending:  # a signal during the gate: the job never starts
        from meshdoctor.checker.runner import interrupt_result

        signame, intr.pending = intr.pending, None
        say(f"{signame} during the gate: the job was not started")
        verdict.results.append(interrupt_result(signame, "localhost"))
        section["exit_status"] = EXIT_UNKNOWN
        return LaunchResult(verdict, EXIT_UNKNOWN)
    hf_path, tmp = _launch_hostfile(req)
    try:
        argv = locate.argv(
            prefix,
            req.command,
            hostfile=hf_path,
            hosts=req.hosts if hf_path is None else None,
            backend=req.backend,
        )
        t_start = time.time()
        out, copy = run_job(
            JobSpec(
                argv,
                rank_hosts(req),
                hang_after=req.hang_after,
                log_path=req.log,
                command=list(req.command),
            ),
            interrupts=intr,
            say=say,
        )
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    status = out.exit_status()
    section["job"] = out.to_dict()
    section["stacks"] = out.stacks
    if out.order is not None:
        section["order"] = out.order
    section["cleanup"] = {
        "survivors": out.survivors,
        "actions": out.teardown,
        "leftovers": out.leftovers,
    }
    section["exit_status"] = status
    _say_outcome(out, status, say)
    if out.kind == INTERRUPTED:
        from meshdoctor.checker.runner import interrupt_result

        verdict.results.append(interrupt_result(out.signal or "SIGINT", "localhost"))
    if status != 0 and out.kind not in (INTERRUPTED, NOT_STARTED):
        tv = _triage(req, copy, time.time() - t_start + 60.0)
        verdict.results.extend(tv.results)
        verdict.hosts.extend(h for h in tv.hosts if h.host not in {x.host for x in verdict.hosts})
        first = _first_cause(tv)
        section["triage"] = {
            "first_cause": first.to_dict() if first is not None else None,
            "findings": sum(1 for r in tv.results if r.status == FAIL),
        }
        if first is not None:
            say(f"first cause: {first.code} {one_line(first.summary)}")
            if first.remediation is not None and first.remediation.text:
                say(f"  what to do: {one_line(as_run(first.remediation.text))}")
            say(f"  more: {shell_line([program(), 'explain', first.code])}")
        if req.fix:
            section["cleanup"]["fix"] = _fix(req, say)
        if req.rerun:
            say(f"re-run with: {shell_line(list(req.rerun))}")
    return LaunchResult(verdict, status)


def _launch_hostfile(req: LaunchRequest) -> Tuple[Optional[str], Optional[str]]:
    """``(path mlx.launch reads, temporary file to remove)``: the user's own file as given, or
    the hostfile read from standard input written to a private temporary file."""
    hf = req.hostfile
    if hf is None:
        return None, None
    if hf.path and hf.path != STDIN_NAME and os.path.isfile(hf.path):
        return hf.path, None
    fd, path = tempfile.mkstemp(prefix="meshdoctor-launch-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        fh.write(hf.to_launch_json())
    return path, path


def write_verdict(verdict: Verdict, path: str) -> Optional[str]:
    """Write ``verdict`` as one JSON document to ``path``
    (:func:`meshdoctor.receipts.write_path`: a regular file replaced atomically, a reader never
    sees half of it; a device or FIFO written in place); returns why it could not be written,
    or None."""
    from meshdoctor.output import to_json
    from meshdoctor.receipts import write_path

    verdict.finish()
    try:
        write_path(path, (to_json(verdict.to_dict()) + "\n").encode("utf-8"))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


__all__: Sequence[str] = ("LaunchRequest", "LaunchResult", "launch", "gate", "write_verdict")
