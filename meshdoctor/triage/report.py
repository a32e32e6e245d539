"""Turns what triage read into the verdict: one result per finding (first causes first, then the
timeline), one per input that could not be read or was read with a warning, one ``ok`` summary,
and the ``triage`` section (inputs, findings with ``first_cause`` / ``consequence_of``, the
first-cause ids).

Verdict: ``no-go`` (exit 1) when a failure signature was found; ``go`` (0) when the inputs show
no failure; ``unknown`` (3) when nothing could be read, when what was read held nothing (an empty
log, or only ``--exit-code 0``, which proves nothing: MD660), or when a host was unreachable and
nothing failed.
"""

from __future__ import annotations

from typing import Any, Dict

from meshdoctor import signatures
from meshdoctor.codes.model import SIGNATURE, Doc, Entry
from meshdoctor.model import ERROR, FAIL, OK, WARN, WARNING, HostInfo, Remediation, Result, Verdict
from meshdoctor.triage.entries import ENTRIES as READINGS
from meshdoctor.triage.collect import Collected
from meshdoctor.triage.findings import Finding, check_command
from meshdoctor.triage.timeline import order, relate

INPUT = "MD690"
ENTRY = Entry(
    code=INPUT,
    kind=SIGNATURE,
    title="triage inputs",
    names=("triage",),
    doc=Doc(
        meaning="What meshdoctor triage read: one 'ok' line with the totals, a warning for "
        "an input read with trouble (binary bytes, invalid UTF-8, a truncated crash "
        "report: what could be salvaged is used) and an error for one that could "
        "not be read at all (missing file, permission, unreachable host).",
        why="A finding can only come from what was read: nothing read at all gives the "
        "verdict 'unknown' (exit 3), never go.",
        action="Give triage the files it could not read (check the path and permissions, "
        "or reach the host over ssh), then run it again.",
        sources=(
            "Apple: Diagnosing issues using crash reports and device logs (.ips)",
            "mlx/_distributed_utils/launch.py (the log lines mlx.launch prints)",
        ),
    ),
)


def input_result(**fields: Any) -> Result:
    """A result of MD690 (triage's own: what it read, or could not), titled with its entry;
    ``fields``: the rest of the :class:`meshdoctor.model.Result` (status, summary, host, ...)."""
    return Result(code=INPUT, check="triage", title=ENTRY.title, **fields)


def _who(f: Finding) -> str:
    parts = []
    if f.host:
        parts.append(f.host)
    if f.rank is not None:
        parts.append(f"rank {f.rank}")
    return " ".join(parts)


# what a go on inputs that were read says: none of them shows the failure
NO_FAILURE_READ = (
    "; nothing in them reads as a failure (no error line, crash, exit status or hang): if "
    "the job failed, these inputs do not hold its error (a log cut before it, or settings "
    "and commands only); give triage each rank's own whole output (stderr, with "
    "NCCL_DEBUG=WARN for NCCL) and the launcher's"
)


def _summary(f: Finding, by_id: Dict[str, Finding]) -> str:
    when = f.time.strftime("%H:%M:%S") if f.time else None
    head = ", ".join(x for x in (_who(f), f.where(), when) if x)
    if f.first_cause and f.role == signatures.CONSEQUENCE:
        # only echoes were read: the first seen, its cause is in a log that is not here
        tag = "FIRST SEEN (an echo: its cause is in a log not given, or in none)"
    elif f.first_cause:
        tag = "FIRST CAUSE"
    elif f.consequence_of:
        c = by_id[f.consequence_of]
        tag = f"consequence of {c.id} ({c.match.name}{', ' + _who(c) if _who(c) else ''})"
    else:
        tag = "separate failure"
    count = f" (x{f.count})" if f.count > 1 else ""
    return signatures.printable(
        f"[{f.id} {tag}] {head}: {f.match.line}{count} -- {f.match.meaning}"
    )


def _remediation(f: Finding, shown: Dict[str, str]) -> Remediation:
    """What to do about ``f``. A consequence is one line: fix its first cause first (that
    finding has the remedy and the causes in full). The known causes of a signature are listed
    once, on its first finding (``shown``: signature name -> the id that lists them)."""
    sig = f.match.signature
    if f.consequence_of:
        return Remediation(
            text=f"Fix {f.consequence_of} first: this follows from it "
            f"(`meshdoctor explain {f.code}` says what it means alone)."
        )
    cmd = check_command(sig)
    text = f.match.remedy
    if sig.causes and f.match.name in shown:
        text += f" Known causes: as for {shown[f.match.name]}."
    elif sig.causes:
        shown[f.match.name] = f.id
        text += (
            " Known causes, most common first: "
            + "; ".join(f"{i}. {c.what} (tell: {c.evidence})" for i, c in enumerate(sig.causes, 1))
            + "."
        )
    return Remediation(text=text, command=cmd)


def _nothing_read(read) -> str:
    """The summary when every input read held nothing: the empty ones named, and why an exit
    status of 0 alone is not a go."""
    empty = [signatures.printable(i.source) for i in read if i.kind != "exit-code"]
    zero = any(i.kind == "exit-code" for i in read)
    why = [f"{', '.join(empty)} empty"] if empty else []
    if zero:
        why.append("an exit status of 0 proves nothing (MD660)")
    return f"nothing to read: {'; '.join(why)}; give triage the job's logs"


def build(col: Collected, verdict: Verdict) -> Verdict:
    """Fill ``verdict`` (command "triage") from ``col``."""
    firsts = relate(col.findings)
    timeline = order(col.findings)
    _findings(col, verdict, firsts, timeline)
    _inputs(col, verdict)
    _what_was_read(col, verdict, firsts)
    section: Dict[str, Any] = {
        "inputs": [i.to_dict() for i in col.inputs],
        "findings": [f.to_dict() for f in timeline],
        "first_cause": [f.id for f in firsts],
    }
    verdict.triage = section
    return verdict


def _findings(col: Collected, verdict: Verdict, firsts, timeline) -> None:
    """One FAIL result per finding of ``col``: the first causes (``firsts``), then the rest in
    ``timeline`` order, each with its signature's title, its summary and remedy."""
    titles = {e.code: e.title for e in signatures.entries()}  # each signature entry's title
    for own in READINGS:  # triage's own readings
        titles[own.code] = own.title
    by_id = {f.id: f for f in col.findings}
    shown: Dict[str, str] = {}  # signature name -> the finding that lists its known causes
    for f in firsts + [f for f in timeline if not f.first_cause]:
        verdict.results.append(
            Result(
                code=f.code,
                check=f.match.name,  # the signature's name: `explain NAME` leads to its code
                title=titles.get(f.code),
                host=f.host or "localhost",
                status=FAIL,
                severity=None if f.first_cause or not f.consequence_of else WARNING,
                summary=_summary(f, by_id),
                evidence=f.to_dict(),
                remediation=_remediation(f, shown),
                needs_reboot=f.first_cause and f.match.sig is not None and f.match.sig.needs_reboot,
            )
        )


def _inputs(col: Collected, verdict: Verdict) -> None:
    """The results of the inputs: one that could not be read (an error), one read with warnings
    (a warning, an error when it could not be assessed), a host that could not be reached."""
    for inp in col.inputs:
        if inp.error:
            verdict.results.append(
                input_result(
                    host=inp.host or "localhost",
                    status=ERROR,
                    summary=signatures.printable(f"{inp.source}: {inp.error}"),
                    evidence=inp.to_dict(),
                )
            )
        elif inp.warnings:
            verdict.results.append(
                input_result(
                    host=inp.host or "localhost",
                    status=ERROR if inp.unassessed else WARN,
                    summary=signatures.printable(f"{inp.source}: {'; '.join(inp.warnings)}"),
                    evidence=inp.to_dict(),
                )
            )
    known = {h.host for h in verdict.hosts}
    for host, why in sorted(col.unreachable.items()):
        if host not in known:
            verdict.hosts.append(HostInfo(host=host, reachable=False))
        verdict.results.append(
            input_result(
                host=host,
                status=ERROR,
                summary=signatures.printable(f"{host} unreachable: {why}"),
            )
        )


def _what_was_read(col: Collected, verdict: Verdict, firsts) -> None:
    """The result that says what was read (inputs, bytes, lines, findings, the first causes),
    or an error when nothing was (no input, nothing of substance, nothing readable)."""
    read = [i for i in col.inputs if i.error is None]
    # nothing read is not a go: an empty log, or only --exit-code 0 (which proves nothing: MD660)
    content = [i for i in read if i.kind != "exit-code" and i.bytes > 0]
    empty = not col.findings and not content
    if read and empty and not any(r.status == ERROR for r in verdict.results):
        verdict.results.append(
            input_result(
                status=ERROR,
                summary=_nothing_read(read),
                evidence={"inputs": len(read), "bytes": sum(i.bytes for i in read)},
            )
        )
    elif read:
        total = sum(i.bytes for i in read)
        verdict.results.append(
            input_result(
                status=OK,
                summary=f"read {len(read)} input(s), {total} bytes, {sum(i.lines for i in read)} "
                f"lines: {len(col.findings)} finding(s)"
                + (f", first cause {', '.join(f.id for f in firsts)}" if firsts else "")
                + (NO_FAILURE_READ if not col.findings else ""),
                evidence={"inputs": len(read), "bytes": total},
            )
        )
    elif not col.inputs and not col.unreachable:
        verdict.results.append(
            input_result(
                status=ERROR,
                summary="nothing to read (no crash report found)",
            )
        )
    elif not any(r.status == ERROR for r in verdict.results):
        verdict.results.append(
            input_result(
                status=ERROR,
                summary="nothing could be read",
            )
        )
