"""What a probe run leaves behind, as data: one :class:`LaunchOutcome` per launch of the ranks
and the :class:`ProbeRun` around them.

The launcher (:mod:`meshdoctor.probe.launcher`) fills these in; the report
(:mod:`meshdoctor.probe.report`), the soak policy (:mod:`meshdoctor.probe.soak`) and the rank
at fault (:mod:`meshdoctor.probe.culprits`) only read them, so none of those needs the launcher.
No behaviour here beyond small properties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor.probe.config import ProbeConfig
from meshdoctor.probe.events import RankState


@dataclass
class LaunchOutcome:
    """One launch of all ranks. ``kind``: ok, dead (a rank exited early), init (group formation
    failed), start (a rank could not start), hang (a step passed its deadline), deadline (the
    whole-run deadline), interrupted (SIGINT, SIGTERM or SIGHUP). Times are launcher monotonic
    seconds; ``detect_s`` is from the first sign of failure (exit seen, or deadline passed) to
    the end of teardown and the leftover check. ``python_missing``: on a ``start`` outcome, the
    local ranks' interpreter (``ProbeConfig.python``) was not an executable file on this host
    when the launcher looked. ``deadline_s``: the per-step deadline the launch ended with
    (grown with ``warmup_max_s``, :func:`meshdoctor.probe.config.measured_deadline`)."""

    kind: str
    run_id: str
    ranks: List[RankState]
    plan: Dict[str, Any]
    deadline_s: float
    ring_hostfile: Optional[List[List[str]]] = None
    failure: Optional[Dict[str, Any]] = None
    hang: Optional[Dict[str, Any]] = None
    stacks: Dict[int, str] = field(default_factory=dict)
    native_stacks: Dict[int, str] = field(default_factory=dict)
    actions: List[Dict[str, Any]] = field(default_factory=list)
    survivors: List[Dict[str, Any]] = field(default_factory=list)
    unkillable: List[Dict[str, Any]] = field(default_factory=list)
    unreachable: Dict[str, str] = field(default_factory=dict)
    unconfirmed: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    message: str = ""
    early_exits: Dict[int, int] = field(default_factory=dict)
    started_at: float = 0.0
    detected_at: Optional[float] = None
    gpu_after: Optional[Dict[str, Any]] = None
    gpu_slowdown: List[Dict[str, Any]] = field(default_factory=list)
    finished_at: float = 0.0
    python_missing: bool = False
    warmup_max_s: float = 0.0  # the slowest warm-up call (seconds): the deadline grows with it

    @property
    def formed(self) -> bool:
        """Whether every rank left group formation (completed its ``init`` step)."""
        return all(st.completed.get("init/init", 0) >= 1 for st in self.ranks)


@dataclass
class ProbeRun:
    """The whole probe: its config, run id, per-launch outcomes (several only for ``--soak``
    relaunches after hangs), ``preflight`` when it never launched (``where`` and ``message`` of
    :class:`meshdoctor.probe.ports.PreflightError`) and ``soak_hangs`` (each counted soak hang's
    step with its ``launch`` index)."""

    cfg: ProbeConfig
    run_id: str
    launches: List[LaunchOutcome] = field(default_factory=list)
    preflight: Optional[Dict[str, str]] = None
    soak_hangs: List[Dict[str, Any]] = field(default_factory=list)
