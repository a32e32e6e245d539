"""What every reading across inputs (:mod:`.alone`, :mod:`.hung`, :mod:`.injected`,
:mod:`.mismatch`, :mod:`.silent`, :mod:`.stale`, :mod:`.versions`, :mod:`.views`) builds the
same way: its
signature with the "why" triage gives it, its catalogue entry, the match that says what it saw
("``<the signature's meaning>`` Here: ...") and the finding, placed at a line of an input or at
another finding. A reading writes only its rule and its words."""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from typing import Dict, Optional, Sequence

from meshdoctor import signatures
from meshdoctor.codes.model import SIGNATURE, Entry
from meshdoctor.signatures.model import causes_text
from meshdoctor.triage.collect import SEQ_STRIDE
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.timeline import order

_KEEP = object()  # "as the input says" (its rank)


def with_why(sig: signatures.Signature, why: str) -> signatures.Signature:
    """``sig`` whose doc says ``why`` it is the first cause (as triage reads it), in place of
    what its role would usually say."""
    return replace(sig, doc=replace(sig.doc, why=why))


def entry(sig: signatures.Signature, title: str) -> Entry:
    """The catalogue entry of a reading's signature ``sig`` (``explain CODE``): its code, doc,
    name and known causes, most common first."""
    return Entry(
        code=sig.code,
        kind=SIGNATURE,
        title=title,
        doc=sig.doc,
        names=(sig.name,),
        details=(("Known causes, most common first", causes_text(sig)),),
    )


def match(
    sig: signatures.Signature,
    here: str,
    *,
    line: str,
    lineno: int,
    groups: Optional[Dict[str, str]] = None,
    remedy: Optional[str] = None,
) -> signatures.Match:
    """A match of ``sig`` whose meaning is the signature's, then ``Here: <here>`` (what this
    run showed); ``line``: the text it names, at ``lineno`` of its input; ``remedy``: the
    signature's unless given."""
    return signatures.Match(
        code=sig.code,
        name=sig.name,
        meaning=f"{sig.meaning} Here: {here}",
        remedy=sig.remedy if remedy is None else remedy,
        line=line,
        lineno=lineno,
        groups=groups or {},
        sig=sig,
    )


def at_input(
    m: signatures.Match,
    index: int,
    inp: Input,
    *,
    seq_line: Optional[int] = None,
    rank=_KEEP,
    time: Optional[_dt.datetime] = None,
    last_lineno: Optional[int] = None,
    count: int = 1,
) -> Finding:
    """The finding of ``m`` in ``inp``, the ``index``-th input read: ordered at its line
    (``seq_line``, default the match's), of the input's host and rank (``rank`` given: that
    one, None for no one rank); ``last_lineno``: its last line (default the match's)."""
    line = m.lineno if seq_line is None else seq_line
    return Finding(
        match=m,
        source=inp.source,
        seq=index * SEQ_STRIDE + line,
        role=m.role,
        host=inp.host,
        rank=inp.rank if rank is _KEEP else rank,
        time=time,
        last_lineno=m.lineno if last_lineno is None else last_lineno,
        count=count,
    )


def at_finding(m: signatures.Match, first: Finding) -> Finding:
    """The finding of ``m`` in the place of the finding ``first`` it reads anew (its input,
    order, host, rank, time and line)."""
    return Finding(
        match=m,
        source=first.source,
        seq=first.seq,
        role=m.role,
        host=first.host,
        rank=first.rank,
        time=first.time,
        last_lineno=first.match.lineno,
    )


def explains(m: signatures.Match, inp: Input, failures: Sequence[Finding]) -> Finding:
    """The finding of ``m`` (a line of ``inp``, a cause read from a setting or a frame printed
    anywhere in the logs) as the cause of ``failures`` (not empty): placed at the earliest
    of them (its time, host and rank, ordered right before it), and each of them made a
    ``consequence`` (changed in place), so the cause comes first even when only the failures'
    lines carry a timestamp or the evidence is in another input."""
    anchor = order(failures)[0]
    for f in failures:
        f.role = signatures.CONSEQUENCE
    return Finding(
        match=m,
        source=inp.source,
        seq=anchor.seq - 1,
        role=m.role,
        host=anchor.host,
        rank=anchor.rank,
        time=anchor.time,
        last_lineno=m.lineno,
    )


def add_here(f: Finding, said: str) -> None:
    """Put ``said`` (what the lines around a finding add to it) first in the ``Here:`` part of
    its meaning, making one when the meaning has none. Changes ``f`` in place."""
    head, here, rest = f.match.meaning.partition(" Here: ")
    f.match.meaning = f"{head} Here: {said}; " + rest if here else f"{head} Here: {said}."
