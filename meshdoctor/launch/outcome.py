"""What became of a launched job: each rank's status, how the job ended, and the one exit status
``meshdoctor launch`` gives for it (data only, no I/O).

The exit status (:meth:`JobOutcome.exit_status`), in order:

1. interrupted (Ctrl-C, SIGTERM, SIGHUP): 3, could not assess;
2. the first rank mlx.launch reported as failed before meshdoctor stopped anything
   (``exited with code C``, C != 0): its status as a shell gives it (a signal ``-N`` is
   ``128 + N``, :func:`meshdoctor.mlx.status_lines.shell_status`);
3. a hang (``--hang-after``): 124, the status timeout(1) gives a command it stopped (GNU
   coreutils, "timeout invocation");
4. mlx.launch's own non-zero status (its usage error 2, a crash), passed through;
5. a rank that never reported while mlx.launch did not end on its own: 1;
6. else 0: mlx.launch prints a line for every rank that ends with a non-zero status (MLX
   0.32.4 launch.py ``_launch_with_io``), so its own clean end with no such line means every
   rank exited 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor.mlx import status_lines
from meshdoctor.mlx.exits import explain

EXIT_INTERRUPTED = 3
EXIT_HANG = 124
EXIT_UNREPORTED = 1

FINISHED = "finished"  # mlx.launch ended on its own
SURVIVORS = "survivors-stopped"  # a rank failed and meshdoctor stopped the others after the grace
HANG = "hang"  # --hang-after: no output and no rank ended for that long
INTERRUPTED = "interrupted"
NOT_STARTED = "not-started"  # mlx.launch could not be started


@dataclass
class RankStatus:
    """One rank: ``rank``, ``host`` (its hostfile ssh name), ``pid`` (its local pid, or its ssh
    client's for a remote rank; None when never seen), ``status`` (``completed``, ``exited``,
    ``killed`` (by mlx.launch), ``torn-down`` (by meshdoctor), ``never-reported``), ``code``
    (mlx.launch's code for ``exited``), ``after_teardown`` (the line came after meshdoctor began
    stopping the job, by its teardown or by forwarding an interrupt: a consequence, never the
    first failure)."""

    rank: int
    host: str
    pid: Optional[int] = None
    status: str = "never-reported"
    code: Optional[int] = None
    after_teardown: bool = False
    stopped: bool = False  # seen in state "stopped" (SIGSTOP) when the hang was caught

    def to_dict(self) -> Dict[str, Any]:
        """JSON form (``$defs/launch_rank`` in ``verdict.schema.json``)."""
        d: Dict[str, Any] = {
            "rank": self.rank,
            "host": self.host,
            "pid": self.pid,
            "status": self.status,
            "code": self.code,
            "exit_status": None if self.code is None else status_lines.shell_status(self.code),
            "after_teardown": self.after_teardown,
        }
        if self.code is not None and self.code != 0:
            d["meaning"] = explain(self.code).summary
        if self.stopped:
            d["stopped"] = True
        return d


@dataclass
class JobOutcome:
    """How the job ended: ``kind`` (:data:`FINISHED`, :data:`SURVIVORS`, :data:`HANG`,
    :data:`INTERRUPTED`, :data:`NOT_STARTED`), ``ranks`` (:class:`RankStatus` by rank),
    ``launcher_rc`` (mlx.launch's own exit status; None while it ran or when killed by us),
    ``first_failed`` (the rank of rule 2), ``signal`` (the interrupt's name), ``message``,
    ``survivors`` (ranks still running when meshdoctor stopped the job), ``teardown``
    (:class:`meshdoctor.teardown.Report` actions), ``stacks`` (:mod:`meshdoctor.triage.stacks`
    dicts) and ``order`` (their :func:`meshdoctor.triage.stacks.order_reading`, None when
    none), ``times`` (seconds: ``started`` -> ``first_failure``, ``teardown``, ``ended``)."""

    kind: str
    ranks: List[RankStatus]
    argv: List[str] = field(default_factory=list)
    launcher_rc: Optional[int] = None
    first_failed: Optional[int] = None
    signal: Optional[str] = None
    message: str = ""
    survivors: List[int] = field(default_factory=list)
    teardown: List[Dict[str, str]] = field(default_factory=list)
    leftovers: List[Dict[str, Any]] = field(default_factory=list)
    stacks: List[Dict[str, Any]] = field(default_factory=list)
    order: Optional[Dict[str, Any]] = None
    times: Dict[str, float] = field(default_factory=dict)
    output_bytes: int = 0
    log: Optional[str] = None
    log_error: Optional[str] = None

    def exit_status(self) -> int:
        """The job's exit status (module doc)."""
        if self.kind == INTERRUPTED:
            return EXIT_INTERRUPTED
        if self.first_failed is not None:
            code = self.ranks[self.first_failed].code
            if code:
                return status_lines.shell_status(code)
        if self.kind == HANG:
            return EXIT_HANG
        if self.launcher_rc:
            return status_lines.shell_status(self.launcher_rc)
        if self.kind != FINISHED and any(r.status == "never-reported" for r in self.ranks):
            return EXIT_UNREPORTED
        if self.kind == NOT_STARTED:
            return EXIT_UNREPORTED
        return 0

    @property
    def failed(self) -> bool:
        """The job did not succeed."""
        return self.exit_status() != 0

    def to_dict(self) -> Dict[str, Any]:
        """The ``job`` part of the ``launch`` section (``$defs/launch`` in
        ``verdict.schema.json``)."""
        return {
            "outcome": self.kind,
            "exit_status": self.exit_status(),
            "launcher_exit_status": self.launcher_rc,
            "first_failed_rank": self.first_failed,
            "signal": self.signal,
            "message": self.message,
            "argv": list(self.argv),
            "ranks": [r.to_dict() for r in self.ranks],
            "survivors": list(self.survivors),
            "output_bytes": self.output_bytes,
            "log": self.log,
            "log_error": self.log_error,
            "times_s": {k: round(v, 3) for k, v in self.times.items()},
        }
