"""NCCL's WARN texts printed without their prefix: frameworks print NCCL's last error
(``ncclGetLastError()``) on a line of its own under their NCCL error, PyTorch after a ``Last
error:`` line (PyTorch's NCCLUtils, getNcclErrorDetailStr; the scanner reads that form,
:data:`meshdoctor.signatures.scanner.LAST_ERROR`), and logs pasted into reports lose that line
or NCCL's ``host:pid:tid [dev] file:line NCCL WARN`` before the text. Such a line is told from
any other by NCCL's own WARN sites (the site table ``sites/nccl.tsv``, from NCCL's sources),
then read as the WARN line it is (``NCCL WARN`` and its text), with the meaning and remedy of
its site's failure class.

The rule (:func:`readings`): a line of a log that holds no ``NCCL WARN`` and whose text (after
PyTorch's ``[rankN]:`` and a bare ``WARN``) is, whole, one WARN site's text with its format
fields as wildcards, where the site's fixed words are at least :data:`MIN_LITERAL` characters
(shorter texts, ``%s`` alone, say nothing on their own), is that WARN; so is the first line of
one wrapped where it was pasted (its site's opening words, at least :data:`MIN_LITERAL`
characters of them, starting the line). A reading of a CUDA error text on the same line
(NCCL's sentence holds one) is its consequence; a line another signature reads as its own is
left to it. Printed under an NCCL error (MD650, MD682) within :data:`UNDER_LINES` lines, it is
ordered before that error, whose reason it is.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.codes.model import CONSEQUENCE
from meshdoctor.signatures import coverage
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input

MIN_LITERAL = 30  # a site's fixed words at least this long to be recognised on its own
MAX_LINE = 600  # longer lines are not tried (NCCL's WARN texts are shorter)
_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
# PyTorch's rank prefix ("[rank1]: ") or Ray's worker prefix ("(Runner pid=868697) ", "(pid=7,
# ip=10.0.0.2) ": Ray's log_to_driver), a bare "WARN " (the log level without NCCL's prefix)
# a bare WARN text, or PyTorch 2.6+'s "NCCL Last Error: <text>" under its NCCL error
_LAST = re.compile(
    r"^\s*(?:\[rank\d+\]:\s*|\((?:[\w.:-]+ )?pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
    r"(?:WARN\s+|NCCL Last Error:\s*)?(?P<msg>\S.*?)\s*$"
)
_LOGS = ("log", "stdin")
EXPLAINED = ("MD650", "MD682")  # the NCCL errors (result lines) a last error explains
# the readings of a CUDA error text, which NCCL's sentences hold ("CUDA error 2 'out of
# memory'"): on a bare WARN's line they are its consequence; any other signature there reads
# the line itself and is kept
CUDA_TEXT = ("MD651", "MD652", "MD830")
UNDER_LINES = 6  # a last error this many lines under its NCCL error at most

try:  # one pass over a line for every site's longest fixed part
    from ahocorasick_rs import AhoCorasick as _AhoCorasick
except ImportError:  # pragma: no cover - a platform without its wheel
    _AhoCorasick = None  # type: ignore[assignment,misc]


def _canonical(text: str) -> str:
    """``text`` without a space before a colon (a WARN's wording that differs by release)."""
    return text.replace(" :", ":")


@functools.lru_cache(maxsize=1)
def _sites() -> Tuple[List[Tuple["re.Pattern[str]", str, str, str]], List[str], object]:
    """The WARN sites of NCCL's table as ``(whole-text regex, where, longest fixed part,
    opening words)``, the longest fixed parts and openings, and an automaton over them (None
    without ahocorasick)."""
    rows, _ = coverage.load("nccl.tsv")
    out = []
    for site in rows:
        if site.how != "WARN":
            continue
        # NCCL's "Duplicate GPU detected : rank" is "detected: rank" in other releases: both
        # sides are read without a space before a colon (:func:`_canonical`)
        parts = _FIELD.split(_canonical(site.pattern))
        if len("".join(parts).strip()) < MIN_LITERAL:
            continue
        rx = re.compile(r".*?".join(re.escape(p) for p in parts) + r"\.?")
        out.append((rx, site.where, max(parts, key=len), parts[0].strip()))
    keys = sorted({k for _rx, _w, k, _o in out} | {o for *_, o in out if o})
    auto = _AhoCorasick(keys) if _AhoCorasick is not None and keys else None
    return out, keys, auto


def site_of(text: str) -> Optional[str]:
    """The ``where`` (NCCL file:line) of the WARN site whose whole text ``text`` is (or whose
    opening words begin it), or None."""
    sites, keys, auto = _sites()
    text = _canonical(text)
    if auto is not None:
        found = {keys[i] for i, _s, _e in auto.find_matches_as_indexes(text, overlapping=True)}  # type: ignore[attr-defined]
    else:  # pragma: no cover
        found = {k for k in keys if k in text}
    for rx, where, key, opening in sites:
        if key in found and rx.fullmatch(text):
            return where
        # the first line of a long WARN wrapped or cut where it was pasted: the site's
        # opening words, at least MIN_LITERAL characters of them
        if len(opening) >= MIN_LITERAL and opening in found and text.startswith(opening):
            return where
    return None


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD653 findings of bare NCCL WARN texts (the rule in the module's docstring) for
    what triage read: ``inputs`` in the order read; ``findings`` the others, whose readings
    of the same lines become consequences of these."""
    at: Dict[Tuple[str, int], List[Finding]] = {}
    for f in findings:
        at.setdefault((f.source, f.match.lineno), []).append(f)
    out: List[Finding] = []
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            if len(text) > MAX_LINE or "NCCL WARN" in text:
                continue
            m = _LAST.match(text)
            if not m:
                continue
            msg = m.group("msg")
            where = site_of(msg)
            if where is None:
                continue
            here = at.get((inp.source, lineno), [])
            if any(f.code not in CUDA_TEXT for f in here):
                continue  # a signature of its own reads it (or MD653 already did)
            for match in signatures.match_line("NCCL WARN " + msg, lineno):
                # read as the WARN line it is, shown as it was printed (the scanner's way
                # with PyTorch's "Last error:")
                match.groups["last"] = msg
                match.role = match.signature.role_for(match.groups)
                match.meaning = (
                    f"{match.signature.meaning_for(match.groups)} (NCCL's WARN at {where}, "
                    "printed without its prefix)"
                )
                match.line = signatures.printable(text.strip())
                out.append(_placed(reading.at_input(match, i, inp), inp, lineno, findings))
            for g in here:
                g.role = CONSEQUENCE
    return out


def _placed(f: Finding, inp: Input, lineno: int, findings: Sequence[Finding]) -> Finding:
    """``f`` (at ``lineno`` of ``inp``) ordered before the NCCL error it explains when it is
    printed under one: PyTorch prints the last error under its DistBackendError."""
    above = [
        e
        for e in findings
        if e.source == inp.source
        and e.code in EXPLAINED
        and 0 < lineno - e.match.lineno <= UNDER_LINES
    ]
    if above:
        e = min(above, key=lambda x: x.seq)
        f.seq, f.time = e.seq - 1, e.time
    return f
