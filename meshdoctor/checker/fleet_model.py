"""Cross-node (fleet) checks: what they are, what they read, how the engine runs them.

A fleet check is a module ``checks/fleet_*.py`` with one ``FLEET_CHECK = FleetCheck(...)``: a
stable ``MD4xx`` code, a name, a title, the column (``area``) of the fleet table it fills, and a
function from a :class:`FleetView` (every host's facts and node results, merged) to findings.
The engine discovers them like node checks (it never imports them one by one), runs each with
exceptions caught, and tags every result with a host: the one named by :func:`on` (or several,
in ``evidence["hosts"]``), else ``mesh`` for a finding about the whole mesh.
"""

from __future__ import annotations

import functools
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from meshdoctor.codes.model import Doc, Entry
from meshdoctor.checker.model import Finding, check_entry
from meshdoctor.discover import declared
from meshdoctor.hostfile.types import Host
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.model import ERROR, MESH, OK, Export, Remediation, Result
from meshdoctor.text import printable


@dataclass
class HostView:
    """One host as the fleet sees it: ``host`` (the hostfile's ssh name), its ``ranks``,
    ``reachable`` (its node verdict came back), ``facts`` (see :mod:`meshdoctor.facts.summary`; empty
    when unreachable) and ``results`` (its node results as JSON dicts)."""

    host: str
    ranks: List[int]
    reachable: bool
    facts: Dict[str, Any] = field(default_factory=dict)
    results: List[Dict[str, Any]] = field(default_factory=list)

    def worst(self, *codes_: str) -> Optional[Dict[str, Any]]:
        """The worst of this host's node results with one of ``codes_`` (fail, error, warn)."""
        order = ["fail", "error", "warn"]
        hits = [r for r in self.results if r["code"] in codes_ and r["status"] in order]
        return min(hits, key=lambda r: order.index(r["status"])) if hits else None


@dataclass
class FleetView:
    """The merged fleet: ``hostfile``, ``hosts`` by name in rank order."""

    hostfile: Hostfile
    hosts: Dict[str, HostView]

    @property
    def backend(self) -> str:
        return self.hostfile.effective_backend

    @functools.cached_property
    def _rank_hosts(self) -> Tuple[str, ...]:
        by_rank = {r: hv.host for hv in self.hosts.values() for r in hv.ranks}
        return tuple(by_rank.get(h.rank, h.ssh) for h in self.hostfile.hosts)

    def names(self) -> List[str]:
        """The host (a key of ``hosts``) of each rank, in rank order (entries that are the same
        machine share one host). Worked out once per view: checks ask for it per rank."""
        return list(self._rank_hosts)

    def of_rank(self, rank: int) -> HostView:
        """The host view of rank ``rank``."""
        return self.hosts[self._rank_hosts[rank]]

    def entry(self, rank: int) -> Host:
        return self.hostfile.hosts[rank]

    def reachable(self) -> List[HostView]:
        return [h for h in self.hosts.values() if h.reachable]

    def edges(self) -> List[Tuple[int, int, List[str], List[str]]]:
        """Every RDMA edge of the hostfile: ``(i, j, devices of i towards j, devices of j
        towards i)`` for ``i < j`` with a device named on either end (cable k is entry k)."""
        out = []
        n = self.hostfile.world_size
        for i in range(n):
            for j in range(i + 1, n):
                a, b = self.entry(i).devices_to(j), self.entry(j).devices_to(i)
                if a or b:
                    out.append((i, j, a, b))
        return out

    def tb_port(self, host: str, device: str) -> Optional[Dict[str, Any]]:
        """``host``'s Thunderbolt port (facts) whose RDMA device is ``device``."""
        ports = (self.hosts[host].facts.get("thunderbolt") or {}).get("ports") or []
        return next((p for p in ports if p.get("device") == device), None)


def on(hosts: Any, finding: Finding) -> Finding:
    """``finding`` tagged with the host (a name) or hosts (a list) it is about."""
    names = [hosts] if isinstance(hosts, str) else list(hosts)
    finding.evidence.setdefault("hosts", names)
    return finding


@dataclass(frozen=True)
class FleetCheck:
    """A registered cross-node check: ``code`` (MD4xx), dotted ``name``, one-line ``title``,
    ``area`` (fleet table column), ``run`` (FleetView -> Finding | iterable | None) and
    ``doc`` (its catalogue entry's fixed parts, :class:`meshdoctor.codes.model.Doc`),
    ``probe_gate`` (what the gate before a probe does with its results); its :attr:`entry` is
    what the catalogue collects."""

    code: str
    name: str
    title: str
    area: str
    run: Callable[[FleetView], Any]
    doc: Doc
    platforms: Tuple[str, ...] = ("fleet",)  # runs on the merged facts, not on a node
    # before ``probe --hostfile`` launches: called on each of its results, True when the result
    # refuses the launch (unless --beside-running-job), which it then says in place
    probe_gate: Optional[Callable[[Result, str], bool]] = None
    exports: Tuple[Export, ...] = ()  # as Check.exports (meshdoctor.checker.model)

    @property
    def entry(self) -> Entry:
        """This check's catalogue entry (:func:`meshdoctor.checker.model.check_entry`)."""
        return check_entry(self.code, self.name, self.title, self.doc, self.platforms)


def all_fleet_checks() -> List[FleetCheck]:
    """Every ``FLEET_CHECK`` in ``meshdoctor.checks.fleet`` (:func:`meshdoctor.discover.declared`),
    sorted by code."""
    found: Dict[str, FleetCheck] = {}
    for _, fc in declared("meshdoctor.checks.fleet", "FLEET_CHECK", FleetCheck):
        found[fc.code] = fc
    return sorted(found.values(), key=lambda c: c.code)


def _tagged(fc: FleetCheck, f: Finding) -> Result:
    hosts = f.evidence.get("hosts") or []
    host = hosts[0] if len(hosts) == 1 else MESH
    rem = f.remedy()
    if rem is not None:
        rem = Remediation(printable(rem.text), printable(rem.command) if rem.command else None)
    return Result(
        code=fc.code,
        check=fc.name,
        title=fc.title,
        status=f.status,
        summary=printable(f.summary),
        host=host,
        severity=f.severity,
        evidence=f.evidence,
        remediation=rem,
        needs_reboot=f.needs_reboot,
    )


def run_fleet_checks(
    checks: Iterable[FleetCheck], view: FleetView
) -> List[Tuple[FleetCheck, Result]]:
    """Run ``checks`` on ``view`` (they only read data: no command, no deadline needed); a
    check that raises becomes one ``error`` result naming the exception."""
    out: List[Tuple[FleetCheck, Result]] = []
    for fc in checks:
        try:
            got = fc.run(view)
            findings: Sequence[Finding] = (
                [] if got is None else [got] if isinstance(got, Finding) else list(got)
            )
            if not findings:
                findings = [Finding(OK, "nothing to report")]
            out.extend((fc, _tagged(fc, f)) for f in findings)
        except Exception as exc:
            tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
            out.append(
                (
                    fc,
                    Result(
                        code=fc.code,
                        check=fc.name,
                        title=fc.title,
                        status=ERROR,
                        host=MESH,
                        summary=f"fleet check {fc.name} raised {type(exc).__name__}: {exc}",
                        evidence={"traceback": "".join(tb[-3:])[-2000:]},
                        remediation=Remediation("Report this with the --json verdict."),
                    ),
                )
            )
    return out
