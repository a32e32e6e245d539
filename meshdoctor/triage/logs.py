"""Streaming reader for rank logs, mlx.launch output (with or without colour), exo-style runner
logs and Python tracebacks, in bounded memory whatever the size.

The input is read in :data:`CHUNK` byte blocks. In each block the reader looks for the literal
:data:`meshdoctor.signatures.ANCHORS` with ``bytes.find`` (C speed) and decodes and matches only
the lines that hold one, plus every line while a record is open (a Python traceback); so memory
is one block, one carried partial line (at most :data:`MAX_LINE` bytes) and the findings, each
with at most :data:`meshdoctor.signatures.CONTEXT_LINES` lines of context; a signature that
repeats (``[ring] Socket 4 was closed by the peer`` x10) is kept once per rank with its count.

A lone carriage return ends a line, as a terminal shows it: tqdm / mlx-lm progress bars redraw
one line with ``\r`` for hours, and the error that ends the job is printed after the last
``\r`` on that same line (``\r\n`` stays one line end). A line still longer than
:data:`MAX_LINE` is matched in windows of :data:`MAX_LINE` bytes that overlap by :data:`OVERLAP`
bytes, so nothing past the first 64 KiB is dropped and memory stays bounded.

Undecodable bytes are replaced (U+FFFD) and reported once as a warning; a file that looks binary
(NUL bytes) is still scanned and says so.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import BinaryIO, Callable, Dict, List, Optional, Tuple

from meshdoctor import signatures
from meshdoctor.triage.findings import Finding, Input

CHUNK = 4 << 20  # bytes read at a time
MAX_LINE = 64 << 10  # a longer line is matched in windows of this many bytes
OVERLAP = 4 << 10  # bytes shared by consecutive windows: longer than any record line matched
MAX_FINDINGS = 200  # distinct findings kept per input
LOOKBACK_LINES = 12  # lines searched backwards for a timestamp when a line has none

_ANCHORS = [a.encode() for a in signatures.ANCHORS]
try:  # one pass for every anchor (Rust aho-corasick; leftmost-first turns on its SIMD prefilter)
    from ahocorasick_rs import BytesAhoCorasick as _AC, MatchKind as _MK

    _AUTOMATON: Optional["_AC"] = _AC(_ANCHORS, matchkind=_MK.LeftmostFirst)
except ImportError:  # pragma: no cover - a platform without its wheel: bytes.find per anchor
    _AUTOMATON = None
_TS = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<clock>\d{2}:\d{2}:\d{2})"
    r"(?:[.,](?P<frac>\d{1,9}))?\s?(?P<tz>Z|[+-]\d{2}:?\d{2}(?!\d))?"
)
_RANK = re.compile(r"\b[Rr]ank[ _=:#-]?(\d{1,4})\b")
_FILE_RANK = re.compile(r"(?:rank|(?<![a-z])r)[-_.]?(\d{1,4})(?!\d)", re.I)


def parse_time(text: str) -> Optional[_dt.datetime]:
    """The first ISO-like timestamp in the first 48 characters of ``text`` (``2026-01-05
    10:00:04,123``, ``2026-01-05T10:00:04.5Z``, ``... +0100``) as an aware UTC datetime (naive
    ones taken as UTC); None if there is none or it is not a real date."""
    m = _TS.search(text[:48])
    if not m:
        return None
    try:
        t = _dt.datetime.fromisoformat(f"{m.group('date')}T{m.group('clock')}")
    except ValueError:
        return None
    if m.group("frac"):
        t = t.replace(microsecond=int(m.group("frac")[:6].ljust(6, "0")))
    tz = m.group("tz")
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        hh, mm = int(tz[1:3]), int(tz[-2:])
        t = t.replace(tzinfo=_dt.timezone(sign * _dt.timedelta(hours=hh, minutes=mm)))
    else:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.astimezone(_dt.timezone.utc)


def rank_from_name(name: str) -> Optional[int]:
    """A rank named by a log's file name (``rank1.log``, ``r2.txt``, ``job-rank-3.err``)."""
    base = name.rsplit("/", 1)[-1]
    m = _FILE_RANK.search(base)
    return int(m.group(1)) if m else None


def line_rank(line: str) -> Optional[int]:
    """The rank a line speaks of (``[Rank 0] ...``, ``Node with rank 2 ...``, ``rank=1``)."""
    m = _RANK.search(line)
    return int(m.group(1)) if m else None


class LogScan:
    """Scans one input; :meth:`run` fills ``self.input`` and returns the findings.

    ``on_match`` (optional) turns a :class:`~meshdoctor.signatures.Match` into extra data before
    it becomes a :class:`Finding`; ``seq_base`` orders this input after earlier ones."""

    def __init__(
        self, inp: Input, seq_base: int, on_match: Optional[Callable[[Finding], None]] = None
    ) -> None:
        self.input = inp
        self.seq_base = seq_base
        self.on_match = on_match
        self.scanner = signatures.Scanner(generic=True)
        self.findings: List[Finding] = []
        self._seen: Dict[Tuple[str, Optional[int]], Finding] = {}
        self._bad_utf8 = 0
        self._nul = 0
        self._line_codes: Tuple[int, set] = (0, set())  # codes already found on one long line

    # -- per line -------------------------------------------------------------------------
    def _decode(self, raw: bytes) -> str:
        text = raw.decode("utf-8", "replace")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            self._bad_utf8 += 1
        return text

    def _add(self, m: signatures.Match, time: Optional[_dt.datetime]) -> None:
        rank = line_rank(m.line)
        if rank is None:
            rank = self.input.rank
        key = (m.code, rank)
        old = self._seen.get(key)
        if old is not None:
            old.count += 1
            old.last_lineno = m.lineno
            return
        if len(self._seen) >= MAX_FINDINGS:
            return
        f = Finding(
            match=m,
            source=self.input.source,
            seq=self.seq_base + m.lineno,
            role=m.signature.role,
            host=self.input.host,
            rank=rank,
            time=time,
            last_lineno=m.lineno,
        )
        if self.on_match is not None:
            self.on_match(f)
        self._seen[key] = f
        self.findings.append(f)

    def _feed(self, lineno: int, text: str, time_of: Callable[[], Optional[_dt.datetime]]) -> None:
        for m in self.scanner.feed(lineno, text):
            t = parse_time(text) if m.lineno == lineno else None
            self._add(m, t or time_of())

    def _feed_line(
        self, lineno: int, raw: bytes, time_of: Callable[[], Optional[_dt.datetime]]
    ) -> None:
        """Match one line; one longer than :data:`MAX_LINE` (or a piece of one still open at
        the end of a block) in overlapping windows, each signature counted once per line."""
        if len(raw) <= MAX_LINE and self._line_codes[0] != lineno:
            self._feed(lineno, self._decode(raw), time_of)
            return
        if self._line_codes[0] != lineno:
            self._line_codes = (lineno, set())
        seen = self._line_codes[1]
        step = MAX_LINE - OVERLAP
        for w in range(0, max(len(raw) - OVERLAP, 1), step):
            window = raw[w : w + MAX_LINE]
            if not self.scanner.wants_every_line and not _has_anchor(window):
                continue
            text = self._decode(window)
            for m in self.scanner.feed(lineno, text):
                if m.lineno == lineno and m.code in seen:
                    continue  # the same text again, in the overlap of two windows
                if m.lineno == lineno:
                    seen.add(m.code)
                t = parse_time(text) if m.lineno == lineno and w == 0 else None
                self._add(m, t or time_of())

    # -- per block ------------------------------------------------------------------------
    def run(self, stream: BinaryIO) -> List[Finding]:
        """Read ``stream`` to its end (binary, any size) and return the findings."""
        carry = b""
        lineno = 0  # lines completed before the current block
        first = True
        held_cr = b""  # a \r ending a block: a line end of its own unless \n follows
        while True:
            block = stream.read(CHUNK)
            if not block:
                break
            self.input.bytes += len(block)
            if first:
                self._sniff(block)
                first = False
            block = held_cr + block
            held_cr = b""
            if block.endswith(b"\r"):
                block, held_cr = block[:-1], b"\r"
            if b"\r" in block:
                block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            buf = carry + block if carry else block
            cut = buf.rfind(b"\n") + 1
            region, carry = buf[:cut], buf[cut:]
            if region:
                lineno = self._region(region, lineno)
            if len(carry) > MAX_LINE:  # a line with no end in sight: match what is there,
                self._feed_line(lineno + 1, carry, lambda: None)  # keep its last OVERLAP bytes
                carry = carry[-OVERLAP:]
        if carry or held_cr:
            lineno = self._region(carry + b"\n", lineno)
        for m in self.scanner.close():
            self._add(m, None)
        self.input.lines = lineno
        self.input.findings = len(self.findings)
        self._warn()
        return self.findings

    def _sniff(self, block: bytes) -> None:
        head = block[:65536]
        self._nul = head.count(b"\x00")

    def _warn(self) -> None:
        if self._nul:
            self.input.warnings.append(
                f"looks binary ({self._nul} NUL bytes in the first 64 KiB): read as text, "
                "findings may be missing"
            )
        if self._bad_utf8:
            self.input.warnings.append(
                f"not valid UTF-8: invalid bytes replaced on {self._bad_utf8} matched line(s)"
            )

    def _region(self, region: bytes, lineno: int) -> int:
        """Scan ``region`` (whole lines ending in \\n); return the line count after it."""
        starts = set()
        if _AUTOMATON is not None:
            line_end = -1
            for _, p, _ in _AUTOMATON.find_matches_as_indexes(region):
                if p <= line_end:
                    continue  # another anchor on a line already taken
                starts.add(region.rfind(b"\n", 0, p) + 1)
                line_end = region.find(b"\n", p)
                if line_end == -1:
                    line_end = len(region)
        else:
            for a in _ANCHORS:
                p = region.find(a)
                while p != -1:
                    s = region.rfind(b"\n", 0, p) + 1
                    starts.add(s)
                    e = region.find(b"\n", p)
                    p = region.find(a, e) if e != -1 else -1
        pos, ln = 0, lineno  # ln: number of the line that starts at pos, minus one
        end = len(region)
        todo = sorted(starts)
        i = 0

        def time_before(start: int) -> Callable[[], Optional[_dt.datetime]]:
            def look() -> Optional[_dt.datetime]:
                q = start
                for _ in range(LOOKBACK_LINES):
                    if q <= 0:
                        return None
                    r = region.rfind(b"\n", 0, q - 1) + 1
                    t = parse_time(region[r : min(q, r + 64)].decode("utf-8", "replace"))
                    if t:
                        return t
                    q = r
                return None

            return look

        while pos < end:
            if self.scanner.wants_every_line:
                s = pos
            else:
                while i < len(todo) and todo[i] < pos:
                    i += 1
                if i >= len(todo):
                    ln += region.count(b"\n", pos, end)
                    break
                s = todo[i]
                i += 1
                ln += region.count(b"\n", pos, s)
            e = region.find(b"\n", s)
            e = end if e == -1 else e
            ln += 1
            self._feed_line(ln, region[s:e], time_before(s))
            pos = e + 1
        return ln


def _has_anchor(raw: bytes) -> bool:
    if _AUTOMATON is not None:
        return bool(_AUTOMATON.find_matches_as_indexes(raw))
    return any(a in raw for a in _ANCHORS)


def scan(
    stream: BinaryIO,
    inp: Input,
    seq_base: int = 0,
    on_match: Optional[Callable[[Finding], None]] = None,
) -> List[Finding]:
    """Scan one binary ``stream`` described by ``inp`` (filled in: bytes, lines, warnings);
    return its findings in file order."""
    return LogScan(inp, seq_base, on_match).run(stream)
