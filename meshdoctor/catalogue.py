"""The one catalogue of every code meshdoctor can emit, and what ``meshdoctor explain`` says: a
collector, nothing more.

Each code is declared once, by its producer, as a :class:`meshdoctor.codes.model.Entry` with its
:class:`meshdoctor.codes.model.Doc` (under fixed headings): a check's ``CHECK.entry``
(``checks/*.py``, :attr:`meshdoctor.checker.model.Check.entry`), a cross-node check's
``FLEET_CHECK.entry``, a fix's ``FIX.entry`` (``fixes/*.py``), the probe's
:data:`meshdoctor.probe.codes.ENTRIES`, the failure signatures in :mod:`meshdoctor.signatures`
(and triage's own codes: its inputs in :mod:`meshdoctor.triage.report`, the silent rank in
:mod:`meshdoctor.triage.silent`, every rank alone in :mod:`meshdoctor.triage.alone`, ranks in different
collectives in :mod:`meshdoctor.triage.mismatch`, the hang
without an error in :mod:`meshdoctor.triage.hung`), the engine's own codes in
:mod:`meshdoctor.codes.engine`. Each producer also titles its own results with its entry's
title. Discovery is explicit: :data:`SOURCES` maps each kind to the function that collects its
entries; nothing registers itself on import. Here the entries only gain what no producer knows
alone: the fixes that resolve each code. Only the commands that show the catalogue
(``explain``, ``list-checks --all``) and the tests import this module.

Kinds and their ranges (:data:`meshdoctor.codes.model.RANGES`): ``internal`` MD100; ``check``
MD101-MD499 (MD1xx node and runtime, MD2xx RDMA and Thunderbolt, MD3xx memory and processes,
MD4xx hostfile and fleet); ``probe`` MD5xx; ``signature`` MD6xx and MD8xx; ``fix`` MD7xx.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from meshdoctor.codes.engine import ENTRIES as ENGINE_ENTRIES
from meshdoctor.codes.model import (  # re-exported: the vocabulary explain and the tests use
    CHECK,
    FIX,
    HEADINGS,
    INTERNAL,
    KINDS,
    PROBE,
    SIGNATURE,
    Entry,
    kind_of,
)


def _engine(kind: str) -> List[Entry]:
    """The engine's own entries of ``kind`` (:data:`meshdoctor.codes.engine.ENTRIES`)."""
    return [e for e in ENGINE_ENTRIES if kind_of(e.code) == kind]


def _internal() -> List[Entry]:
    return _engine(INTERNAL)


def _checks() -> List[Entry]:
    """Every check's entry (node and cross-node checks, fleet mode's reach, the interrupted
    check run), each with the codes of the fixes that resolve it."""
    from meshdoctor.checker.fleet_model import all_fleet_checks
    from meshdoctor.checker.registry import all_checks
    from meshdoctor.fixer.registry import all_fixes

    fixes = all_fixes()
    found = [c.entry for c in [*all_checks(), *all_fleet_checks()]]
    return [
        replace(e, fixes=tuple(f.code for f in fixes if e.code in f.resolves))
        for e in found + _engine(CHECK)
    ]


def _probe() -> List[Entry]:
    from meshdoctor.probe.codes import ENTRIES

    return list(ENTRIES)


def _signatures() -> List[Entry]:
    """The signatures, each with the fixes of the check that looks at its likely cause."""
    from dataclasses import replace

    from meshdoctor.fixer.registry import all_fixes
    from meshdoctor.signatures import BY_CODE, entries
    from meshdoctor.triage.entries import ENTRIES as READINGS
    from meshdoctor.triage.report import ENTRY

    fixes = all_fixes()
    out = []
    for e in entries():
        check = BY_CODE[e.code].check
        out.append(replace(e, fixes=tuple(f.code for f in fixes if check in f.resolves)))
    return out + [ENTRY, *READINGS]


def _fixes() -> List[Entry]:
    from meshdoctor.fixer.registry import all_fixes

    engine = _engine(FIX)  # MD700 before the fixes' MD701-MD789, MD790 after them
    own = [f.entry for f in all_fixes()]
    first = min((e.code for e in own), default="MD7")
    return [e for e in engine if e.code < first] + own + [e for e in engine if e.code > first]


# kind -> the function that collects its entries (explicit discovery)
SOURCES: Dict[str, Callable[[], List[Entry]]] = {
    INTERNAL: _internal,
    CHECK: _checks,
    PROBE: _probe,
    SIGNATURE: _signatures,
    FIX: _fixes,
}


def entries(kinds: Iterable[str] = KINDS) -> List[Entry]:
    """Every entry of ``kinds``, sorted by code. Raises what discovery raises
    (:class:`meshdoctor.checker.registry.ExtraCheckError` for an unusable extra check module)."""
    out: List[Entry] = []
    for k in kinds:
        out += SOURCES[k]()
    return sorted(out, key=lambda e: e.code)


def entry(code: str) -> Optional[Entry]:
    """The entry of ``code`` (case-insensitive), collecting only its kind's entries; None if
    the code is not catalogued."""
    kind = kind_of(code)
    if kind is None:
        return None
    return next((e for e in SOURCES[kind]() if e.code == code.strip().upper()), None)


def resolve(key: str) -> List[Entry]:
    """Every entry ``key`` names: a code (``MD601``), a name (``rdma.gid``,
    ``ring.connect-failed``, ``stale-ranks``) or a result's ``check`` name (``probe.all_sum``
    carries MD504 and MD505); case-insensitive; empty if none."""
    found = entry(key)
    if found is not None:
        return [found]
    k = key.strip().lower()
    return [e for e in entries() if k in (n.lower() for n in e.names)]


def title(code: str) -> Optional[str]:
    """The title of ``code``, None if not catalogued."""
    e = entry(code)
    return e.title if e is not None else None


def text(e: Entry, width: int = 98) -> str:
    """The ``meshdoctor explain`` text of ``e``: a head line (code, name, title), the fixed
    parts under their headings, further details, the fixes that resolve it, the sources; the
    prose wrapped to ``width`` columns."""
    parts = [f"{e.code}: {e.title}"]
    for heading, body in zip(HEADINGS, (e.doc.meaning, e.doc.why, e.doc.action)):
        parts.append(f"{heading}:\n{_indent(body, width)}")
    kind = f"Kind: {e.kind}" + (
        f"; {'names' if len(e.names) > 1 else 'name'}: {', '.join(e.names)}" if e.names else ""
    )
    short = [kind] + [f"{h}: {b}" for h, b in e.details if "\n" not in b]
    parts.append("\n".join(short))
    parts += [f"{h}:\n{_indent(b, width)}" for h, b in e.details if "\n" in b]
    if e.fixes:
        from meshdoctor.fixer.registry import lookup

        lines = []
        for code in e.fixes:
            fx = lookup(code)
            if fx is not None:
                lines.append(
                    f"Fixed by: {fx.code} {fx.name} (`meshdoctor fix {fx.name}`, risk {fx.risk})"
                )
        parts.append("\n".join(lines))
    parts.append("Sources:\n" + "\n".join(f"  - {s}" for s in e.doc.sources))
    return "\n\n".join(p for p in parts if p)


def _paragraphs(body: str) -> List[Tuple[int, int, str]]:
    """``body`` as ``(lead, hang, text)`` paragraphs: consecutive lines of one paragraph (the
    source wraps them at its own width) joined into one text, so that wrapping at another width
    leaves no word alone on a line; a blank line, a list item (``- ``, ``* ``) or a change of
    indentation starts a new one. ``lead``: the paragraph's indentation; ``hang``: its
    continuation lines' (under a list item's text)."""
    paras: List[Tuple[int, int, str]] = []
    for line in body.splitlines():
        stripped = line.strip()
        lead = len(line) - len(line.lstrip())
        item = stripped.startswith(("- ", "* "))
        if not stripped:
            paras.append((0, 0, ""))
            continue
        last = paras[-1] if paras else None
        if last and last[2] and not item and lead == last[1]:
            paras[-1] = (last[0], last[1], f"{last[2]} {stripped}")
        else:
            paras.append((lead, lead + (2 if item else 0), stripped))
    return paras


def _indent(body: str, width: int = 98) -> str:
    """``body`` indented by two spaces, each paragraph (:func:`_paragraphs`) wrapped to
    ``width`` columns (a list item's continuation lines under its text)."""
    import textwrap

    out = []
    for lead, hang, para in _paragraphs(body):
        if not para:
            out.append("")
            continue
        out += textwrap.wrap(
            para,
            width,
            initial_indent=" " * (2 + lead),
            subsequent_indent=" " * (2 + hang),
            break_on_hyphens=False,
            break_long_words=False,
        )
    return "\n".join(out)
