"""What triage finds and what it read: :class:`Finding` and :class:`Input`."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor import signatures


@dataclass
class Finding:
    """One failure seen in one input.

    ``role`` is the signature's (or the exit status's) :data:`meshdoctor.signatures.ROLES`
    value; ``time`` is timezone-aware UTC when the input gave a timestamp (naive times are taken
    as UTC), else None; ``seq`` orders findings in file order across inputs (input index, line).
    ``count`` is how many times the same signature came back for the same rank in this input
    (only the first occurrence is kept, with ``last_lineno``). ``first_cause`` and
    ``consequence_of`` (another finding's ``id``) are set by :mod:`.timeline`. ``job``: the
    job's own exit status as its wrapper saw it (``--exit-code``), not one rank's.
    """

    match: signatures.Match
    source: str
    seq: int
    role: str
    host: Optional[str] = None
    rank: Optional[int] = None
    time: Optional[_dt.datetime] = None
    id: str = ""
    count: int = 1
    last_lineno: int = 0
    exit: Optional[Dict[str, Any]] = None
    crash: Optional[Dict[str, Any]] = None
    first_cause: bool = False
    consequence_of: Optional[str] = None
    job: bool = False

    @property
    def code(self) -> str:
        """The MD6xx code of the signature that matched."""
        return self.match.code

    def where(self) -> str:
        """``source:line`` of the record's first line."""
        return f"{self.source}:{self.match.lineno}" if self.match.lineno else self.source

    def to_dict(self) -> Dict[str, Any]:
        """JSON form of the finding: id, code, name, source, line, text and its place on the
        timeline."""
        sig = self.match.signature
        d: Dict[str, Any] = {
            "id": self.id,
            "code": self.code,
            "name": self.match.name,
            "role": self.role,
            "source": self.source,
            "line_number": self.match.lineno or None,
            "host": self.host,
            "rank": self.rank,
            "time": self.time.isoformat() if self.time else None,
            "line": self.match.line,
            "context": list(self.match.context),
            "count": self.count,
            "first_cause": self.first_cause,
            "consequence_of": self.consequence_of,
            "meaning": self.match.meaning,
            "causes": [c.to_dict() for c in sig.causes],
            "remedy": self.match.remedy,
        }
        if self.match.groups:
            d["groups"] = dict(self.match.groups)
        if sig.check:
            d["check"] = f"meshdoctor check --only {sig.check}"
        if sig.fixed_in:
            d["fixed_in"] = f"mlx {sig.fixed_in}"
        if self.exit is not None:
            d["exit"] = self.exit
        if self.crash is not None:
            d["crash_report"] = self.crash
        return d


@dataclass
class Input:
    """One thing triage read (or tried to): ``kind`` is ``log``, ``crash-report``, ``stdin``
    or ``exit-code``; ``warnings`` are problems it still got past (binary bytes, a truncated
    report); ``error`` is set when nothing of it could be read."""

    source: str
    kind: str = "log"
    host: Optional[str] = None
    rank: Optional[int] = None
    bytes: int = 0
    lines: int = 0
    findings: int = 0
    warnings: List[str] = field(default_factory=list)
    error: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """JSON form of one input: source, kind, host, rank, size and what could not be read."""
        d: Dict[str, Any] = {
            "source": self.source,
            "kind": self.kind,
            "host": self.host,
            "rank": self.rank,
            "bytes": self.bytes,
            "lines": self.lines,
            "findings": self.findings,
            "warnings": list(self.warnings),
        }
        if self.error:
            d["error"] = self.error
        return d
