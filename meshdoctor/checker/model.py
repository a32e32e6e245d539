"""What a check is: a stable code, a name, a title, its doc, its platforms and a function to
findings.

A check module in ``checks/`` defines one module-level ``CHECK = Check(code, name, title, run,
doc=Doc(meaning, why, action, sources))``; that is all a new check declares (the catalogue, the
runner, ``list-checks`` and ``explain`` find it). Its ``run`` takes a
:class:`meshdoctor.facts.context.NodeContext` and returns (or yields) :class:`Finding` objects; the runner
stamps each with the check's code, name, title and host to make a
:class:`meshdoctor.model.Result`.
Checks know the model and the context, never each other and never the renderer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Optional, Tuple, Union

from meshdoctor.codes.model import CHECK, Doc, Entry  # Doc re-exported: checks import it here
from meshdoctor.model import ERROR, FAIL, OK, SKIP, WARN, Export, Remediation, Result

PLATFORMS = ("darwin", "linux")


@dataclass
class Finding:
    """One observation of a check, before the runner names its code and host.

    ``remediation`` may be a plain string (the text) or a :class:`Remediation`.
    """

    status: str
    summary: str
    evidence: Dict[str, Any] = field(default_factory=dict)
    remediation: Union[Remediation, str, None] = None
    needs_reboot: bool = False
    severity: Optional[str] = None

    def remedy(self) -> Optional[Remediation]:
        """The remediation as a :class:`~meshdoctor.model.Remediation` (a plain string becomes its
        text); None without one."""
        if isinstance(self.remediation, str):
            return Remediation(self.remediation)
        return self.remediation


def ok(summary: str, **kw: Any) -> Finding:
    """A passing finding."""
    return Finding(OK, summary, **kw)


def warn(summary: str, **kw: Any) -> Finding:
    """A warning: does not stop a launch unless ``--strict``."""
    return Finding(WARN, summary, **kw)


def fail(summary: str, **kw: Any) -> Finding:
    """A failure: the verdict becomes no-go (exit 1)."""
    return Finding(FAIL, summary, **kw)


def skip(summary: str, **kw: Any) -> Finding:
    """Not applicable here; ``summary`` gives the reason."""
    return Finding(SKIP, summary, **kw)


def error(summary: str, **kw: Any) -> Finding:
    """Could not assess: a tool the check needs is missing or answered nothing readable
    (the verdict becomes unknown, exit 3, unless something failed)."""
    return Finding(ERROR, summary, **kw)


CheckFn = Callable[[Any], Union[Finding, Iterable[Finding], None]]


@dataclass(frozen=True)
class Check:
    """A registered check.

    ``code`` is stable (``MD1xx`` node and runtime, ``MD2xx`` RDMA and Thunderbolt, ``MD3xx``
    memory and processes, ``MD4xx`` hostfile and fleet); ``name`` is dotted (``rdma.gid``);
    ``title`` is one line; ``platforms`` lists where it applies (others get ``skip``);
    ``doc`` is its entry in the catalogue (:class:`meshdoctor.codes.model.Doc`: what it means,
    why it matters, what to do, public sources), which ``meshdoctor explain CODE`` prints;
    :attr:`entry` is the whole entry, which the catalogue collects.

    What the fleet check (``check --hostfile``, :mod:`meshdoctor.checker.fleet`) does with it,
    declared here so the engine names no code:

    * ``reports_facts``: the node check every host runs alone when only cross-node checks are
      selected (cheap, never touches a device): the host still sends its facts;
    * ``fleet_once``: about the hostfile, not the host: kept from the first host that sent it,
      and run on this machine when no host could;
    * ``fleet_merge``: called on each of its results the fleet keeps, with the hostfile's path
      (None: ``--hosts``), to say them in the operator's terms (in place).

    ``exports``: the values its results carry for readers that must not know it
    (:class:`meshdoctor.model.Export`: ``--format prometheus``, the sub-mesh split).
    """

    code: str
    name: str
    title: str
    run: CheckFn
    doc: Doc
    platforms: Tuple[str, ...] = PLATFORMS
    reports_facts: bool = False
    fleet_once: bool = False
    fleet_merge: Optional[Callable[[Result, Optional[str]], None]] = None
    exports: Tuple[Export, ...] = ()

    @property
    def entry(self) -> Entry:
        """This check's catalogue entry (:func:`check_entry`)."""
        return check_entry(self.code, self.name, self.title, self.doc, self.platforms)


def check_entry(code: str, name: str, title: str, doc: Doc, platforms: Tuple[str, ...]) -> Entry:
    """The catalogue entry of a node or cross-node check: kind ``check``, its ``name`` (what
    its results carry as ``check``) and, as a detail, the ``platforms`` it applies to
    ("Applies to: darwin, linux"). The fixes that resolve it are the catalogue's to add
    (:mod:`meshdoctor.catalogue`)."""
    return Entry(
        code=code,
        kind=CHECK,
        title=title,
        doc=doc,
        names=(name,),
        details=(("Applies to", ", ".join(platforms)),),
    )
