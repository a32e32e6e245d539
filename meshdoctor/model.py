"""The verdict model: results, hosts, the verdict document and exit codes.

Every command builds one :class:`Verdict` and prints
it either as JSON (``to_dict``, validated by ``verdict.schema.json``) or through the renderer.

Exit codes, identical for every command:

* 0 ``go``: nothing failed (warnings allowed unless ``--strict``);
* 1 ``no-go``: something failed (a failed result outranks a result in ``error``, since the
  answer "do not launch" is already known);
* 2 usage error (click's own, and unreadable input files);
* 3 ``unknown``: could not assess (a check in ``error``, an unreachable host, an internal error,
  or every result ``skip``: nothing applied here).
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

SCHEMA_VERSION = 2

OK, WARN, FAIL, SKIP, ERROR = "ok", "warn", "fail", "skip", "error"
STATUSES = (OK, WARN, FAIL, SKIP, ERROR)

INFO, WARNING, CRITICAL = "info", "warning", "critical"
SEVERITIES = (INFO, WARNING, CRITICAL)

EXIT_GO, EXIT_NOGO, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3

MESH = "mesh"  # the host a result about the whole mesh (not one of its hosts) is tagged with

# What a check may export (``Check.exports``, ``FleetCheck.exports``): a value its results carry
# in their evidence for a reader that must not know the check (a renderer, the sub-mesh split),
# by name -> what it is. The reader asks :func:`meshdoctor.discover.exporters` which codes
# export a name and under which evidence key; it never names a code.
EXPORTS = {
    "mlx_version": "the MLX version the node's Python imports (str)",
    "backend": "the hostfile's effective backend (str)",
    "named_devices": "{named, active}: the RDMA devices the hostfile names for the host and "
    "how many of them are PORT_ACTIVE (ints)",
    "wired_bytes": "the host's wired memory in bytes (int, macOS vm_stat)",
    "edge_matrix": "the mesh's RDMA edges, {active, total, ...} (ints)",
    "device_down": "on a fail: the RDMA device the hostfile names that is missing or not "
    "active (str); under JACCL it costs that device's cables, not the host",
    "cables_down": "a list of {host, device}: RDMA edges down, which cost their cables, not "
    "the hosts; a result of such a check that names several hosts and no cable is not held "
    "against them (not assessed)",
}


@dataclass(frozen=True)
class Export:
    """One value a check exports: ``name`` (a key of :data:`EXPORTS`) and the evidence ``key``
    of its results that holds it. Raises ValueError for a name :data:`EXPORTS` lacks."""

    name: str
    key: str

    def __post_init__(self) -> None:
        if self.name not in EXPORTS:
            raise ValueError(f"{self.name!r} is not an export (meshdoctor.model.EXPORTS)")


_DEFAULT_SEVERITY = {OK: INFO, SKIP: INFO, WARN: WARNING, FAIL: CRITICAL, ERROR: CRITICAL}


@dataclass
class Remediation:
    """What the operator should do: prose, optionally a command to run, and the code of the
    fix that resolves it (``MD7xx``, ``meshdoctor fix``), filled in by the fix engine."""

    text: str
    command: Optional[str] = None
    fix: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """JSON form: ``text``, and ``command``/``fix`` when set."""
        d: Dict[str, Any] = {"text": self.text}
        if self.command:
            d["command"] = self.command
        if self.fix:
            d["fix"] = self.fix
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Remediation":
        """The inverse of :meth:`to_dict` for a remediation another host sent: its text made
        printable (:func:`meshdoctor.text.printable`). Raises AttributeError/KeyError for a
        document that is not a remediation."""
        from meshdoctor.text import printable

        return cls(
            printable(d.get("text", "")),
            printable(d["command"]) if d.get("command") else None,
            str(d["fix"]) if d.get("fix") else None,
        )


@dataclass
class Result:
    """One finding of one check (or of the probe) on one host.

    ``status`` is one of :data:`STATUSES`; ``severity`` defaults from the status (fail and error
    are critical, warn is a warning, the rest info). ``evidence`` holds JSON-serialisable data
    (device names, GID tables, pids). ``needs_reboot`` marks the host for the verdict's
    ``needs_reboot`` list. ``duration_s`` is wall time in seconds, filled in by the runner.
    ``title`` is the one-line title of the code's entry (:class:`meshdoctor.codes.model.Entry`),
    given by whatever made the result (the runner, a fleet check, the fix engine, the probe,
    triage, the engine's own codes in :mod:`meshdoctor.codes.engine`).
    """

    code: str
    check: str
    status: str
    summary: str
    host: str = "localhost"
    severity: Optional[str] = None
    evidence: Dict[str, Any] = field(default_factory=dict)
    remediation: Optional[Remediation] = None
    needs_reboot: bool = False
    duration_s: float = 0.0
    title: Optional[str] = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; expected one of {STATUSES}")
        if self.severity is None:
            self.severity = _DEFAULT_SEVERITY[self.status]
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}; expected one of {SEVERITIES}")

    def to_dict(self) -> Dict[str, Any]:
        """The result as the verdict's JSON (``verdict.schema.json``); ``duration_s`` rounded to 0.1
        ms."""
        d: Dict[str, Any] = {
            "code": self.code,
            "check": self.check,
            "host": self.host,
            "status": self.status,
            "severity": self.severity,
            "summary": self.summary,
            "evidence": self.evidence,
            "duration_s": round(self.duration_s, 4),
        }
        if self.remediation is not None:
            d["remediation"] = self.remediation.to_dict()
        if self.needs_reboot:
            d["needs_reboot"] = True
        if self.title:
            d["title"] = self.title
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any], *, host: str) -> "Result":
        """A result of another meshdoctor's JSON verdict (a remote host, a child process),
        tagged with ``host`` (the name this run knows that host by); its text made printable,
        since it came over the network. Raises ValueError for an unknown status or severity,
        TypeError/AttributeError for a document of another shape."""
        from meshdoctor.text import printable

        rem = d.get("remediation")
        return cls(
            code=str(d.get("code", "MD100")),
            check=printable(d.get("check") or "?"),
            status=d.get("status", ERROR),
            summary=printable(d.get("summary") or "?"),
            host=host,
            severity=d.get("severity"),
            evidence=d.get("evidence") or {},
            remediation=Remediation.from_dict(rem) if isinstance(rem, dict) else None,
            needs_reboot=bool(d.get("needs_reboot")),
            duration_s=float(d.get("duration_s") or 0.0),
            title=printable(d["title"]) if d.get("title") else None,
        )


@dataclass
class HostInfo:
    """A host the command looked at: its name, rank in the hostfile (or None), reachability."""

    host: str
    rank: Optional[int] = None
    reachable: bool = True
    platform: Dict[str, Any] = field(default_factory=dict)
    # fleet mode: the facts cross-node checks read, and this host's own verdict (optional)
    facts: Optional[Dict[str, Any]] = None
    node: Optional[Dict[str, Any]] = None

    def to_dict(self) -> Dict[str, Any]:
        """JSON form of the host entry; ``facts``/``node`` only in fleet mode."""
        d = {
            "host": self.host,
            "rank": self.rank,
            "reachable": self.reachable,
            "platform": self.platform,
        }
        if self.facts is not None:
            d["facts"] = self.facts
        if self.node is not None:
            d["node"] = self.node
        return d


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Verdict:
    """The one document a command produces.

    ``results`` are :class:`Result`; ``probe``, ``launch`` and ``actions`` are sections owned by the
    probe and the fixes. ``strict`` turns warnings into no-go. Call :meth:`finish` once at the end
    to stamp the duration; ``verdict`` and ``exit_code`` are computed from the results.
    """

    command: str
    results: List[Result] = field(default_factory=list)
    hosts: List[HostInfo] = field(default_factory=list)
    strict: bool = False
    probe: Optional[Dict[str, Any]] = None
    actions: Optional[List[Dict[str, Any]]] = None
    triage: Optional[Dict[str, Any]] = None
    fleet: Optional[Dict[str, Any]] = None
    launch: Optional[Dict[str, Any]] = None
    extra_reboot: List[str] = field(default_factory=list)
    started_at: str = field(default_factory=_now_iso)
    _t0: float = field(default_factory=time.monotonic, repr=False)
    duration_s: float = 0.0

    def finish(self) -> "Verdict":
        """Stamp the wall time (seconds since the verdict was made) into ``duration_s``; returns
        self."""
        self.duration_s = time.monotonic() - self._t0
        return self

    @property
    def needs_reboot(self) -> List[str]:
        """The hosts a result (or a fleet host's own verdict) says need a reboot, sorted."""
        hosts = [r.host for r in self.results if r.needs_reboot] + list(self.extra_reboot)
        return sorted(set(hosts))

    @property
    def nothing_assessed(self) -> bool:
        """True when there are results and every one is ``skip``: nothing applied here, so the
        verdict is ``unknown`` (exit 3), never go."""
        return bool(self.results) and all(r.status == SKIP for r in self.results)

    @property
    def verdict(self) -> str:
        """``no-go`` if anything failed, else ``unknown`` for an error, an unreachable host or
        nothing assessed, else ``go`` (warnings are failures with ``strict``)."""
        statuses = {r.status for r in self.results}
        if FAIL in statuses:
            return "no-go"
        if ERROR in statuses or any(not h.reachable for h in self.hosts):
            return "unknown"
        if self.nothing_assessed:
            return "unknown"
        if self.strict and WARN in statuses:
            return "no-go"
        return "go"

    @property
    def exit_code(self) -> int:
        """0 go, 1 no-go, 3 unknown (2, usage, never comes from a verdict)."""
        return {"go": EXIT_GO, "no-go": EXIT_NOGO, "unknown": EXIT_UNKNOWN}[self.verdict]

    def exit_status(self, unknown_as: Optional[str] = None) -> int:
        """The process's exit status: :attr:`exit_code`, except that an ``unknown`` verdict
        exits as ``unknown_as`` says (``go``: 0, ``no-go``: 1; ``--unknown-as``, for a gate
        that must choose what "could not assess" means). The document keeps its own
        ``verdict`` and ``exit_code``."""
        if self.verdict == "unknown" and unknown_as in ("go", "no-go"):
            return EXIT_GO if unknown_as == "go" else EXIT_NOGO
        return self.exit_code

    def to_dict(self) -> Dict[str, Any]:
        """The verdict as one JSON document (``verdict.schema.json``, ``schema_version``
        :data:`SCHEMA_VERSION`)."""
        from meshdoctor import __version__

        d: Dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "meshdoctor", "version": __version__},
            "command": self.command,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "strict": self.strict,
            "needs_reboot": self.needs_reboot,
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 4),
            "hosts": [h.to_dict() for h in self.hosts],
            "results": [r.to_dict() for r in self.results],
        }
        if self.probe is not None:
            d["probe"] = self.probe
        if self.actions is not None:
            d["actions"] = self.actions
        if self.triage is not None:
            d["triage"] = self.triage
        if self.fleet is not None:
            d["fleet"] = self.fleet
        if self.launch is not None:
            d["launch"] = self.launch
        return d
