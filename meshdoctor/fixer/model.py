"""What a fix is: a catalogue code (MD7xx), its doc, the check codes it resolves, its risk, and
plan / apply / verify, in the manner of Ansible's check mode.

A fix module in ``fixes/`` defines one module-level ``FIX = Fix(...)``:

* ``plan(ctx)`` reads the current state and returns the :class:`Action` steps that would change it
  (and read-only steps it will take, ``mutates=False``); it changes nothing;
* ``apply(ctx, actions)`` carries the steps out and records each one's ``changed`` and
  ``outcome``; it is called only when the operator said ``--yes`` (or answered yes);
* ``verify(ctx)`` re-runs the checks the fix resolves and returns a :class:`Verification`.

Running a fix twice changes nothing the second time: the second plan finds nothing to do and every
action reports ``changed: false``. Fixes know the engine's model, never each other: a fix that
needs another (``reset-group`` kills stale ranks first) asks :attr:`FixContext.hosts`, the one
per-host execution interface (:mod:`meshdoctor.fixer.hosts`). What a fix applies to (platforms,
backends) is declared on its ``Fix``; adding a fix is its module and its test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor.checker.model import PLATFORMS
from meshdoctor.codes.model import FIX, Doc, Entry
from meshdoctor.mlx.backends import BACKENDS

SAFE, DISRUPTIVE, NEEDS_REBOOT = "safe", "disruptive", "needs-reboot"
RISKS = (SAFE, DISRUPTIVE, NEEDS_REBOOT)

# outcomes of one action
PLANNED, DONE, FAILED, SKIPPED, OK = "planned", "done", "failed", "skipped", "ok"

HOST_SCOPE, FLEET_SCOPE = "host", "fleet"
# scope -> how ``explain`` says where a fix runs
SCOPE_WORDS = {HOST_SCOPE: "on each host", FLEET_SCOPE: "once, across the hostfile"}


@dataclass
class Action:
    """One step of a fix, typed: the unit of the verdict's ``actions`` list.

    ``code``: the fix's MD7xx code; ``host``: where it acts; ``step``: what it does, in words;
    ``argv``: the command it runs there (a list, never a shell string; empty for a step that is
    not a command, such as waiting); ``planned``: it was part of the plan; ``changed``: it
    changed the host's state; ``outcome``: ``planned`` (not applied), ``done``, ``ok`` (a read
    or a precondition that held), ``failed: <reason>`` or ``skipped: <reason>``; ``mutates``:
    the step would change state (only such steps make a plan "pending"); ``detail``: data.
    """

    code: str
    host: str
    step: str
    argv: List[str] = field(default_factory=list)
    planned: bool = True
    changed: bool = False
    outcome: str = PLANNED
    mutates: bool = True
    detail: Dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """True when the step's outcome says it failed."""
        return self.outcome.startswith(FAILED)

    def to_dict(self) -> Dict[str, Any]:
        """The typed action of the verdict's ``actions``: code, host, step, argv, planned/changed,
        outcome and details."""
        d: Dict[str, Any] = {
            "code": self.code,
            "host": self.host,
            "step": self.step,
            "argv": [str(a) for a in self.argv],
            "planned": self.planned,
            "changed": self.changed,
            "outcome": self.outcome,
            "mutates": self.mutates,
        }
        if self.detail:
            d["detail"] = self.detail
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Action":
        """The inverse of :meth:`to_dict` (an action reported by meshdoctor on another host)."""
        return cls(
            code=str(d.get("code", "")),
            host=str(d.get("host", "")),
            step=str(d.get("step", "")),
            argv=[str(a) for a in d.get("argv") or []],
            planned=bool(d.get("planned", True)),
            changed=bool(d.get("changed")),
            outcome=str(d.get("outcome", "")),
            mutates=bool(d.get("mutates", True)),
            detail=dict(d.get("detail") or {}),
        )


@dataclass
class Verification:
    """What a fix's verify found. ``ok``: every check it resolves passes now; ``summary``: one
    line; ``needs_reboot``: host -> reason, for hosts only a reboot can clear; ``evidence``:
    data (the re-run checks' summaries)."""

    ok: bool
    summary: str
    needs_reboot: Dict[str, str] = field(default_factory=dict)
    evidence: Dict[str, Any] = field(default_factory=dict)
    refused: bool = False  # the fix declined to act (a precondition failed)


@dataclass
class FixContext:
    """Everything a fix may read or use.

    ``hosts``: the per-host execution interface (:class:`meshdoctor.fixer.hosts.HostExec`);
    ``hostfile``: the parsed hostfile or None (this machine only); ``apply``: act (``--yes``);
    ``include_running``: ranks of jobs still running may be killed; ``output_hostfile``: where
    auto-setup writes the hostfile it generates; ``progress``: a callable taking one line of
    text (stderr on a terminal, else a no-op); ``options``: further per-fix settings.
    """

    hosts: Any
    hostfile: Any = None
    apply: bool = False
    include_running: bool = False
    output_hostfile: Optional[str] = None
    progress: Callable[[str], None] = lambda line: None
    options: Dict[str, Any] = field(default_factory=dict)


PlanFn = Callable[[FixContext], List[Action]]
ApplyFn = Callable[[FixContext, List[Action]], None]
VerifyFn = Callable[[FixContext], Verification]


@dataclass(frozen=True)
class Fix:
    """A registered fix.

    ``code``: stable ``MD7xx``; ``name``: what the operator types (``stale-ranks``); ``title``:
    one line; ``resolves``: the check codes whose failures it clears; ``risk``: one of
    :data:`RISKS`; ``scope``: ``host`` (runs on each host by itself, fanned out by the engine)
    or ``fleet`` (runs once, from here, across the hostfile); ``doc``: its catalogue entry
    (:class:`meshdoctor.codes.model.Doc`: what it does, step by step, and what it never does; why
    it matters; how to run it; public sources), which ``meshdoctor explain`` prints;
    :attr:`entry` is the whole entry, which the catalogue collects.

    What it applies to, which the engine reads so that no other module names a fix:
    ``platforms``: where a host-scope fix acts (:func:`meshdoctor.facts.context.current_platform`
    of the host; elsewhere the engine plans nothing and reports it not applicable; a
    fleet-scope fix runs from here, so its platforms are checked only when no hostfile names
    a fleet, this machine being the whole of it); ``backends``: the
    hostfile backends (:data:`meshdoctor.hostfile.BACKENDS`) whose failures it is chosen for
    when ``meshdoctor fix`` picks the fixes itself (:func:`meshdoctor.fixer.registry.fixes_for`;
    a fix named by the operator runs whatever the backend). Both default to every one.
    """

    code: str
    name: str
    title: str
    resolves: Tuple[str, ...]
    risk: str
    plan: PlanFn
    apply: ApplyFn
    verify: VerifyFn
    doc: Doc
    scope: str = HOST_SCOPE
    platforms: Tuple[str, ...] = PLATFORMS
    backends: Tuple[str, ...] = BACKENDS

    def __post_init__(self) -> None:
        if self.risk not in RISKS:
            raise ValueError(f"fix {self.name}: unknown risk {self.risk!r}; expected {RISKS}")

    @property
    def entry(self) -> Entry:
        """This fix's catalogue entry: kind ``fix``, its names (the word the operator types,
        and ``fix.NAME``, what its results carry as ``check``), and as details the codes it
        resolves, its risk and where it runs (:data:`SCOPE_WORDS`)."""
        return Entry(
            code=self.code,
            kind=FIX,
            title=self.title,
            doc=self.doc,
            names=(self.name, f"fix.{self.name}"),
            details=(
                ("Resolves", ", ".join(self.resolves)),
                ("Risk", self.risk),
                ("Runs", SCOPE_WORDS.get(self.scope, self.scope)),
            ),
        )


APPROVED_ENV = "MESHDOCTOR_FIX_APPROVED"  # the approved steps, for a host's share of the run
APPROVED = "approved"  # FixContext.options key: host ("*": any) -> approval keys
# FixContext.options key: the list every planned action of this machine goes into as it is
# planned, so an interrupted run still reports what it had done (meshdoctor.fixer.plan)
JOURNAL = "journal"
NOT_APPROVED = "found after the plan you approved; left for the next run"


def approval_key(a: Action) -> str:
    """What identifies a step the operator approved: its argv and, for a process, its pid and
    start time (a pid reused since the plan is another process, never approved). The code is
    left out: a fleet fix reports the host steps it runs under its own code."""
    import json

    ident = [[str(x) for x in a.argv], a.detail.get("pid"), a.detail.get("create_time")]
    return json.dumps(ident)


def pending(actions: Sequence[Action]) -> List[Action]:
    """The actions that would change state and have not been carried out."""
    return [a for a in actions if a.mutates and a.outcome == PLANNED]
