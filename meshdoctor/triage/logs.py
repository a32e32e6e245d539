"""Streaming reader for rank logs, mlx.launch output (with or without colour), exo-style runner
logs and Python tracebacks, in bounded memory whatever the size.

The input is read in :data:`CHUNK` byte blocks. In each block the reader looks for the literal
:data:`meshdoctor.signatures.ANCHORS` with ``bytes.find`` (C speed) and decodes and matches only
the lines that hold one, plus every line while a record is open (a Python traceback); so memory
is one block, one carried partial line (at most :data:`MAX_LINE` bytes) and the findings, each
with at most :data:`meshdoctor.signatures.CONTEXT_LINES` lines of context; a signature that
repeats (``[ring] Socket 4 was closed by the peer`` x10) is kept once per rank with its count.
The anchors are looked for window by window (:data:`WINDOW` bytes) from where the reader
stands, so a block whose every line holds one costs no more than its lines read.

Identical lines are counted, not matched again: while no record is open, what a line gives
depends on its text alone, so a line read before (a bounded memo of :data:`MEMO_LINES` lines of
at most :data:`MEMO_LINE_BYTES` bytes, each known without the timestamp that opens it,
:func:`memo_key`) adds one to the count of what it gave, and a run of copies of one line
(survivors print the same error every step) is measured with one memory comparison and counted
at once. After a line the memo knew, the next line is looked up in the memo before any anchor
is sought (survivors' lines come one after another, ranks and timestamps changing).

Lines that differ in their numbers are counted by *shape*: where most lines of a block hold an
anchor (survivors print an error every step, behind a fresh timestamp, pid, step counter and
address), the block is read :data:`SHAPE_BYTES` at a time with C-level passes only (translate,
split, map, Counter): each line's :func:`shape` (digits and addresses masked) and its *values*
(the digits a signature's pattern or the rank reads, :func:`meshdoctor.signatures.shape_values`)
key it; one line of each (shape, values) is matched, in line order, and the others add to the
counts of what it gave. A line whose shape opens or names a record (a traceback, a crash
signal, a crash report's header) is fed as it comes, with the lines after it while the record is
open. The cost grows with the distinct messages, not the lines.

A lone carriage return ends a line, as a terminal shows it: tqdm / mlx-lm progress bars redraw
one line with ``\r`` for hours, and the error that ends the job is printed after the last
``\r`` on that same line (``\r\n`` stays one line end). A line still longer than
:data:`MAX_LINE` is matched in windows of :data:`MAX_LINE` bytes that overlap by :data:`OVERLAP`
bytes, so nothing past the first 64 KiB is dropped and memory stays bounded.

Undecodable bytes are replaced (U+FFFD) and reported once as a warning; a file that looks binary
(NUL bytes) is still scanned and says so.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import operator
import html
import re
from collections import Counter
from itertools import accumulate, compress, repeat
from typing import BinaryIO, Callable, Dict, List, Optional, Tuple

from meshdoctor import signatures
from meshdoctor.triage.findings import Finding, Input

CHUNK = 4 << 20  # bytes read at a time
MAX_LINE = 64 << 10  # a longer line is matched in windows of this many bytes
OVERLAP = 4 << 10  # bytes shared by consecutive windows: longer than any record line matched
MAX_FINDINGS = 200  # distinct findings kept per input
LOOKBACK_LINES = 12  # lines searched backwards for a timestamp when a line has none
WINDOW = 64 << 10  # bytes searched for anchors at a time (then up to the next line end)
MEMO_LINES = 4096  # identical-line memo: at most this many lines (cleared when full) ...
MEMO_LINE_BYTES = 1024  # ... each at most this long
RUN_BYTES = 1 << 20  # a run of identical lines is compared at most this many bytes at a time
HEAD_BYTES = 256 << 10  # the first bytes of an input kept as text (Input.head) ...
TAIL_BYTES = 64 << 10  # ... and the last ones (Input.tail), for the readings across inputs
SHAPE_BYTES = 1 << 20  # lines counted by shape this many bytes at a time (bounds its lists)
SHAPE_SAMPLE = 64 << 10  # bytes sampled to tell a block of matching lines (counted by shape)
HEX_DIGITS = 8  # a 0x number this long or longer is masked in a line's shape (an address)

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
# a timestamp that opens a line (optionally in brackets): the part of a line the memo ignores
_LEAD_TS = re.compile(
    rb"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:\s?(?:Z|[+-]\d{2}:?\d{2}(?!\d)))?\]?"
)
_Keys = Tuple[Tuple[str, Optional[int]], ...]  # what one line gave: (code, rank) per finding
# the rank a line names as its own: not one it names as a peer ("Communicator for rank 1 not
# found", "send to rank 3", "from rank 2", "Duplicate GPU detected: rank 0 and rank 2";
# mlx.launch's "Node with rank 1 exited" is the rank's own)
_RANK = re.compile(
    r"(?<!\bfor )(?<!\bto )(?<!\bfrom )(?<!\bpeer )(?<!\band )"
    r"\b[Rr]ank[ _=:#-]?(\d{1,4})\b"
)
# Open MPI's --tag-output ("[1,3]<stderr>:", mpirun(1)) and PRRTE's "[prterun-HOST-PID@1,3]<stdout>:"
# (openpmix/prrte #1405): the job id, then the rank of the process that printed the line
_MPI_TAG = re.compile(r"^\s*\[(?:[\w.-]+@)?\d+,(\d{1,6})\]<std(?:out|err|diag)>:")
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


def memo_key(raw: bytes) -> bytes:
    """What the identical-line memo knows a line by: the line without the timestamp that opens
    it (``2026-01-05 10:00:04,120 ERROR rank 1: ...`` -> ``ERROR rank 1: ...``), so the error a
    survivor prints every step behind a fresh timestamp is counted, not matched again. Safe
    because no signature matches a timestamp and the time is read only for a new finding."""
    m = _LEAD_TS.match(raw)
    return raw[m.end() :] if m else raw


_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")
_HEX_RUN = re.compile(rb"0x[0-9a-fA-F]{%d,}(?![0-9A-Za-z_])" % HEX_DIGITS)
_call = getattr(operator, "call", None) or (lambda f, x: f(x))  # operator.call: Python 3.11


def unaddressed(raw: bytes) -> bytes:
    """``raw`` with each ``0x`` number of at least :data:`HEX_DIGITS` digits (an address,
    ``0x7f3a2b10c0``) written ``0x#``: one C-level pass."""
    return _HEX_RUN.sub(b"0x#", raw) if b"0x" in raw else raw


def shape(raw: bytes) -> bytes:
    """A line's (or a block of lines') *shape*: :func:`unaddressed`, every digit written
    ``0`` (``pid 4242 iter 17 at 0x7f3a2b10c0`` -> ``pid 0000 iter 00 at 0x#``): what varies
    from step to step in the lines survivors print, masked, so the lines of one message are
    known by one key (:func:`meshdoctor.signatures.shape_values` says which digits of
    :func:`unaddressed` still count)."""
    return unaddressed(raw).translate(_DIGITS)


def _getter(spans: Optional[Tuple[Tuple[int, int], ...]], line: bytes):
    """What reads the values of a line of one shape (None: the shape is fed line by line):
    the bytes of the digit spans ``spans`` (character spans of ``line``'s text) as one
    ``itemgetter``."""
    if spans is None:
        return None
    if spans == signatures.WHOLE:
        return operator.itemgetter(slice(None))
    if not spans:
        return _NO_VALUES
    text = line.decode("utf-8", "replace")
    if not text.isascii():  # character spans -> byte spans
        spans = tuple((len(text[:a].encode()), len(text[:b].encode())) for a, b in spans)
    return operator.itemgetter(*(slice(a, b) for a, b in spans))


_NO_VALUES = operator.itemgetter(slice(0, 0))
_UNKNOWN = object()  # a shape not classified yet


def rank_from_name(name: str) -> Optional[int]:
    """A rank named by a log's file name (``rank1.log``, ``r2.txt``, ``job-rank-3.err``)."""
    base = name.rsplit("/", 1)[-1]
    m = _FILE_RANK.search(base)
    return int(m.group(1)) if m else None


# HTML's character references a log copied from a web page's source carries instead of the
# characters (NCCL's "Cuda failure 1 &#39;invalid argument&#39;")
_ENTITY = re.compile(r"&(?:#\d{1,5}|#x[0-9a-fA-F]{1,4}|quot|apos|amp|lt|gt|nbsp);")


def decode(raw: bytes) -> str:
    """``raw`` as text (UTF-8, undecodable bytes replaced), its no-break spaces (U+00A0, what a
    log copied from a web page or a chat carries between its words) read as spaces and its
    HTML character references (``&#39;``, ``&quot;``, ``&gt;``) as their characters, so the
    log's words match as the program printed them."""
    text = raw.decode("utf-8", "replace")
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    return text.replace("\xa0", " ") if "\xa0" in text else text


def line_rank(line: str) -> Optional[int]:
    """The rank a line speaks of: the rank in Open MPI's output tag (``[1,2]<stderr>:``) that
    printed it, else one it names (``[Rank 0] ...``, ``Node with rank 2 ...``, ``rank=1``)."""
    m = _MPI_TAG.match(line) or _RANK.search(line)
    return int(m.group(1)) if m else None


def _says_more(new: signatures.Match, old: signatures.Match) -> bool:
    """Whether ``new``, a later line of the finding ``old`` was read from, has a reading of
    its own (a ``Here:`` detail) where ``old`` has none."""
    return " Here: " in new.meaning and " Here: " not in old.meaning


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
        self._memo: Dict[bytes, Tuple[Tuple[str, Optional[int]], ...]] = {}  # line -> its keys
        self._getters: Dict[bytes, object] = {}  # shape -> the getter of its values, or None
        self._quiet: set = set()  # shapes without an anchor: never fed
        self._variants: Dict[tuple, _Keys] = {}  # (shape, values) -> what its lines give

    # -- per line -------------------------------------------------------------------------
    def _decode(self, raw: bytes) -> str:
        text = decode(raw)
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            self._bad_utf8 += 1
        return text

    def _add(
        self, m: signatures.Match, time_of: Callable[[], Optional[_dt.datetime]]
    ) -> Tuple[str, Optional[int]]:
        """Count ``m`` (a new finding, or one more of the same code, failure class and rank);
        its time is looked for (``time_of``) only for a new finding. Returns its key (code with
        its class, rank)."""
        rank = line_rank(m.line)
        if rank is None:
            rank = self.input.rank
        # one finding per failure class of a signature that reads many texts (NCCL's WARN
        # lines): a full /dev/shm after a socket error of the same rank is a finding of its own
        cls = m.failure_class()
        key = (m.code if cls is None else f"{m.code}:{cls.name}", rank)
        old = self._seen.get(key)
        if old is not None:
            old.count += 1
            old.last_lineno = m.lineno
            if signatures.ROLES.index(m.role) < signatures.ROLES.index(old.role):
                # a line of a stronger role than the first of its kind (a compiler's
                # diagnostic after its summary line): the finding is read from it
                old.match, old.role, old.seq = m, m.role, self.seq_base + m.lineno
                old.time = old.time or time_of()
            elif m.role == old.role and _says_more(m, old.match):
                # a later line of the same finding that says what the first did not (a
                # message printed over two lines, its reason on the second): read it there
                old.match = m
            return key
        if len(self._seen) >= MAX_FINDINGS:
            return key
        f = Finding(
            match=m,
            source=self.input.source,
            seq=self.seq_base + m.lineno,
            role=m.role,
            host=self.input.host,
            rank=rank,
            # a record that states its own time (a crash report's Date/Time) is placed there
            time=(parse_time(m.groups["time"]) if m.groups.get("time") else None) or time_of(),
            last_lineno=m.lineno,
        )
        if self.on_match is not None:
            self.on_match(f)
        self._seen[key] = f
        self.findings.append(f)
        return key

    def _again(self, keys: Tuple[Tuple[str, Optional[int]], ...], lineno: int, n: int) -> None:
        """``n`` more copies of a line that gave ``keys``, the last one at ``lineno``: each
        finding's count grows as if each copy had been matched."""
        for key in keys:
            f = self._seen.get(key)
            if f is not None:
                f.count += n
                f.last_lineno = lineno

    def _feed(
        self, lineno: int, text: str, time_of: Callable[[], Optional[_dt.datetime]]
    ) -> List[Tuple[str, Optional[int]]]:
        keys = []
        for m in self.scanner.feed(lineno, text):

            def when(m=m) -> Optional[_dt.datetime]:
                t = parse_time(text) if m.lineno == lineno else None
                return t or time_of()

            keys.append(self._add(m, when))
        return keys

    def _feed_line(
        self, lineno: int, raw: bytes, time_of: Callable[[], Optional[_dt.datetime]]
    ) -> Optional[Tuple[Tuple[str, Optional[int]], ...]]:
        """Match one line; one longer than :data:`MAX_LINE` (or a piece of one still open at
        the end of a block) in overlapping windows, each signature counted once per line.
        Returns the keys the line gave when it can be counted again instead of matched (no
        record open before or after it, short enough to remember), else None."""
        if len(raw) <= MAX_LINE and self._line_codes[0] != lineno:
            idle = self.scanner.idle
            keys = self._feed(lineno, self._decode(raw), time_of)
            if idle and self.scanner.idle and len(raw) <= MEMO_LINE_BYTES:
                if len(self._memo) >= MEMO_LINES:
                    self._memo.clear()
                found = self._memo[memo_key(raw)] = tuple(keys)
                return found
            return None
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

                def when(m=m, w=w, text=text) -> Optional[_dt.datetime]:
                    t = parse_time(text) if m.lineno == lineno and w == 0 else None
                    return t or time_of()

                self._add(m, when)
        return None

    # -- per block ------------------------------------------------------------------------
    def run(self, stream: BinaryIO) -> List[Finding]:
        """Read ``stream`` to its end (binary, any size) and return the findings."""
        carry = b""
        lineno = 0  # lines completed before the current block
        first = True
        held_cr = b""  # a \r ending a block: a line end of its own unless \n follows
        head, tail = b"", b""
        while True:
            block = stream.read(CHUNK)
            if not block:
                break
            self.input.bytes += len(block)
            if len(head) < HEAD_BYTES:
                head += block[: HEAD_BYTES - len(head)]
            tail = (tail + block)[-TAIL_BYTES:] if len(block) < TAIL_BYTES else block[-TAIL_BYTES:]
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
            self._add(m, lambda: None)
        self.input.lines = lineno
        self.input.findings = len(self.findings)
        self.input.head = decode(head)
        self.input.tail = decode(tail)
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
        """Scan ``region`` (whole lines ending in \\n); return the line count after it: a part
        where most lines hold an anchor is counted by shape (:meth:`_by_shape`), the rest read
        line by line (:meth:`_lines`)."""
        if MEMO_LINE_BYTES < 0 or not _dense(region) or _a_run(region):
            return self._lines(region, lineno)  # runner output, or one line over and over
        pos, end = 0, len(region)
        while pos < end:
            cut = region.find(b"\n", min(end, pos + SHAPE_BYTES) - 1) + 1 or end
            part = region[pos:cut] if pos or cut < end else region
            if MEMO_LINE_BYTES >= 0 and self.scanner.idle and _dense(part) and not _a_run(part):
                lineno = self._by_shape(part, lineno)
            else:
                lineno = self._lines(part, lineno)
            pos = cut
        return lineno

    def _by_shape(self, region: bytes, lineno: int) -> int:
        """Count the lines of ``region`` by shape: one line of each (shape, values) is matched,
        the others add to the counts of what it gave; a line whose shape must be fed (a
        record's) is fed, with the lines after it while a record is open. Returns the line
        count after it."""
        plain = unaddressed(region)  # what the values are read from
        shapes = plain.translate(_DIGITS).split(b"\n")
        shapes.pop()
        raws = plain.split(b"\n")
        raws.pop()
        real = raws if plain is region else []  # the lines as they are, split when one is fed

        def line(k: int) -> bytes:
            if not real:
                real.extend(region.split(b"\n"))
            return real[k]

        getters, quiet = self._getters, self._quiet
        if len(getters) >= MEMO_LINES:
            getters.clear()
            quiet.clear()
        if len(self._variants) >= MEMO_LINES:
            self._variants.clear()
        gl = list(map(getters.get, shapes, repeat(_UNKNOWN)))
        if _UNKNOWN in gl:
            for s in set(compress(shapes, map(operator.is_, gl, repeat(_UNKNOWN)))):
                if len(s) > MEMO_LINE_BYTES:
                    getters[s] = None
                elif not _has_anchor(s):  # the digits masked never make or break an anchor
                    getters[s] = _NO_VALUES
                    quiet.add(s)
                else:
                    text = s.decode("utf-8", "replace")
                    getters[s] = _getter(signatures.shape_values(text), s)
            gl = list(map(getters.__getitem__, shapes))
        fed = list(compress(range(len(gl)), map(operator.is_, gl, repeat(None))))
        offsets: List[int] = []

        def time_of(k: int) -> Callable[[], Optional[_dt.datetime]]:
            if not offsets:
                line(0)
                offsets.extend(accumulate(map(len, real), initial=0))
            return _time_before(region, offsets[k] + k)

        n = len(raws)
        i = 0
        for stop in fed + [n]:
            if stop < i:
                continue
            if stop > i:
                self._count_shapes(shapes, raws, gl, i, stop, lineno, line, time_of)
            i = stop
            while i < n and (i == stop or not self.scanner.idle):
                self._feed_line(lineno + i + 1, line(i), time_of(i))
                i += 1
        return lineno + n

    def _count_shapes(self, shapes, raws, gl, a: int, b: int, lineno: int, line, time_of) -> None:
        """Lines ``a`` to ``b`` (0-based, of a block whose first line is ``lineno + 1``; ``raws``
        :func:`unaddressed`, ``line(k)`` as read, ``gl`` the getters of their values), every
        one of a shape counted by shape, the scanner idle: each new (shape, values) is matched
        on its first line, in line order; then every one adds its other lines to the counts of
        what it gave, the last line of each last."""
        variants = list(zip(shapes[a:b], map(_call, gl[a:b], raws[a:b])))
        counts = Counter(variants)
        known = self._variants
        new = [v for v in counts if v not in known]
        if new:
            first = {v: variants.index(v) for v in new}
            for v in sorted(new, key=first.__getitem__):
                if v[0] in self._quiet:
                    known[v] = ()
                    continue
                k = a + first[v]
                keys = self._feed_line(lineno + k + 1, line(k), time_of(k))
                known[v] = keys if keys is not None else ()
                counts[v] -= 1
        last = dict(zip(variants, range(a + 1, b + 1)))  # the last line of each
        for v, k in sorted(last.items(), key=operator.itemgetter(1)):
            keys = known[v]
            if keys and counts[v] > 0:
                self._again(keys, lineno + k, counts[v])

    def _lines(self, region: bytes, lineno: int) -> int:
        """Scan ``region`` line by line: only the lines holding an anchor (and every line
        while a record is open) are matched; a line the memo knows is counted."""
        anchors = _Anchors(region)
        mv = memoryview(region)
        pos, ln = 0, lineno  # ln: number of the line that starts at pos, minus one
        end = len(region)

        def time_before(start: int) -> Callable[[], Optional[_dt.datetime]]:
            return _time_before(region, start)

        # (end, keys) of the line at pos when the memo knows it (found after a memo line: the
        # errors survivors print every step come one after another), so no anchor is sought
        peek: Optional[Tuple[int, _Keys]] = None
        keys: Optional[_Keys]
        while pos < end:
            if peek is not None:
                s, (e, keys) = pos, peek
            else:
                if self.scanner.wants_every_line:
                    s = pos
                else:
                    s = anchors.line_from(pos)
                    if s < 0:
                        ln += region.count(b"\n", pos, end)
                        break
                    ln += region.count(b"\n", pos, s)
                e = region.find(b"\n", s)
                e = end if e == -1 else e
            ln += 1
            raw = region[s:e]
            pos = e + 1
            if peek is None:
                keys = self._memo.get(memo_key(raw)) if self.scanner.idle else None
                if keys is None:
                    keys = self._feed_line(ln, raw, time_before(s))
                else:
                    self._again(keys, ln, 1)
            else:
                self._again(keys, ln, 1)
                peek = None
            if keys is not None and region.startswith(mv[s:pos], pos):  # copies follow it
                n = _copies(region, mv, s, pos)
                if n:
                    ln += n
                    pos += n * (pos - s)
                    self._again(keys, ln, n)
            if keys is not None and pos < end and self.scanner.idle:
                e = region.find(b"\n", pos)
                e = end if e == -1 else e
                known = self._memo.get(memo_key(region[pos:e]))
                if known is not None:
                    peek = (e, known)
        return ln


def _time_before(region: bytes, start: int) -> Callable[[], Optional[_dt.datetime]]:
    """What finds the time of the line at ``start`` of ``region`` when it states none: the
    first timestamp of the :data:`LOOKBACK_LINES` lines before it."""

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


def _dense(region: bytes) -> bool:
    """Whether most lines of the first :data:`SHAPE_SAMPLE` bytes of ``region`` hold an anchor
    (survivors' errors, every line: counted by shape) rather than few (runner output: only the
    lines holding one are read)."""
    if _AUTOMATON is None:
        return False
    sample = region[:SHAPE_SAMPLE]
    return 2 * len(_AUTOMATON.find_matches_as_indexes(sample)) >= sample.count(b"\n")


def _a_run(region: bytes) -> bool:
    """Whether the first :data:`SHAPE_SAMPLE` bytes of ``region`` are mostly copies of its
    first line (one error printed every step, nothing else): :meth:`LogScan._lines` counts such
    a run with a few memory comparisons, faster than by shape."""
    sample = region[:SHAPE_SAMPLE]
    first = sample[: sample.find(b"\n") + 1]
    return bool(first) and 10 * sample.count(first) * len(first) >= 9 * len(sample)


class _Anchors:
    """Where the lines holding an anchor start in one region, found :data:`WINDOW` bytes at a
    time from where the reader stands (one automaton pass per window, or ``bytes.find`` per
    anchor without the automaton)."""

    def __init__(self, region: bytes) -> None:
        self.region = region
        self.mv = memoryview(region)
        self.hits: List[int] = []  # anchor positions in region[.. self.wend], ascending
        self.i = 0
        self.wend = 0
        self.next: Optional[Dict[bytes, int]] = None  # the fallback: anchor -> next position

    def _next_hit(self, pos: int) -> int:
        if _AUTOMATON is None:
            if self.next is None:
                self.next = {a: self.region.find(a) for a in _ANCHORS}
            best = -1
            for a, p in self.next.items():
                if 0 <= p < pos:
                    p = self.next[a] = self.region.find(a, pos)
                if p >= 0 and (best < 0 or p < best):
                    best = p
            return best
        end = len(self.region)
        while True:
            self.i = bisect.bisect_left(self.hits, pos, self.i)
            if self.i < len(self.hits):
                return self.hits[self.i]
            start = max(pos, self.wend)
            if start >= end:
                return -1
            e = self.region.find(b"\n", min(end, start + WINDOW))  # windows end at a line end
            self.wend = end if e < 0 else e + 1
            found = _AUTOMATON.find_matches_as_indexes(self.mv[start : self.wend])
            self.hits, self.i = [start + p for _, p, _ in found], 0

    def line_from(self, pos: int) -> int:
        """The start of the first line at or after ``pos`` (a line start) that holds an
        anchor, or -1 when none does."""
        p = self._next_hit(pos)
        if p < 0:
            return -1
        s = self.region.rfind(b"\n", pos, p)
        return pos if s < 0 else s + 1


def _copies(region: bytes, mv: memoryview, start: int, pos: int) -> int:
    """How many exact copies of the line ``region[start:pos]`` (its \\n included) follow it
    from ``pos`` (whole lines only): the text from ``pos`` is compared with itself one line
    earlier, in chunks that double while they match (a memory comparison each)."""
    n = pos - start
    end = len(region)
    count, step = 0, 1
    cap = max(1, RUN_BYTES // n)
    while step:
        at = pos + count * n
        if at + step * n <= end and region.startswith(mv[at - n : at - n + step * n], at):
            count += step
            step = min(step * 2, cap)
        else:
            step //= 2
    return count


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
