"""Finding the catalogued signatures in text: :func:`match_line` (one line), :class:`Scanner`
(records across lines, bounded memory), :func:`classify` (a whole text), :func:`classify_exit`
(a rank's exit status) and :func:`make_match` (a match found by other means).

A record may span lines: a native crash prints the signal on one line and the faulting frame
(a signature's ``frame``: ``ibv_reg_mr``, ``tbt_post_recv``) lines later; a Python traceback
ends with its exception line. A crash record is read line by line while it is open: frames
with no thread structure (a bare ``bt``) are tried as they come; when the text lists threads
(Apple's crash text, lldb's ``bt all``) only the crashed thread's frames count, up to the end
of its block (:mod:`meshdoctor.signatures.frames` reads the shapes and names the signature, as
for an ``.ips`` report); the match carries the record's ``process``, ``pid``, ``time`` and
``thread`` as groups, and a record with its frames takes its signature's ``report_remedy``.
:class:`Scanner` matches records in bounded memory (a window of :data:`RECORD_WINDOW` lines,
:data:`REPORT_LINES` once a record lists threads, at most :data:`MAX_FRAMES` frames kept and
:data:`CONTEXT_LINES` lines of context per match).
``meshdoctor triage`` feeds it lines from files of any size. This module only reads text and
names no code: what each signature is recognised by is declared on it
(:class:`meshdoctor.signatures.model.Signature`), the catalogue order is
:data:`meshdoctor.signatures.CATALOGUE`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

try:  # the regex parser and compiler of the standard library (sre_parse, sre_compile before 3.11)
    from re import _compiler as _sre_compile, _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_compile as _sre_compile  # type: ignore[no-redef]
    import sre_parse as _sre  # type: ignore[no-redef]
try:  # one pass for every signature's literal (Rust aho-corasick)
    from ahocorasick_rs import AhoCorasick as _AhoCorasick, MatchKind as _MatchKind
except ImportError:  # pragma: no cover - a platform without its wheel: every regex is tried
    _AhoCorasick = None  # type: ignore[assignment,misc]

from meshdoctor.signatures.families import BY_CODE, CATALOGUE, FRAME_SIGNATURES
from meshdoctor.signatures.frames import (
    MAX_FRAMES,
    Frame,
    classify_frames,
    is_system_frame,
    names_crashed_thread,
    parse_frame,
    posix_signal,
    report_header,
    thread_header,
)
from meshdoctor.signatures.model import CRASH, TRACEBACK, Match, Signature
from meshdoctor.signatures.pyerrors import PLUMBING
from meshdoctor.text import CONTROL, printable as text_printable

LINE_CHARS = 300  # a matched line is kept stripped and cut to this many characters
CONTEXT_LINES = 8  # at most this many lines of context per match
RECORD_WINDOW = 64  # a crash signal waits this many lines for its faulting frame
FRAME_CHARS = 1024  # a crash record's line is read as a frame or thread header this far
REPORT_LINES = 4000  # a crash report's text (threads listed) is read this far for its crashed one
TRACEBACK_LINES = 400  # a Python traceback longer than this is closed where it stands

# Literal strings that open or mark the records and statuses the scanner reads beyond single
# line signatures (tracebacks, crash signals, launcher status lines); :data:`ANCHORS` adds each
# line signature's own required literals to them.
RECORD_ANCHORS: Tuple[str, ...] = (
    "jaccl",
    "[ring]",
    "rror",
    "ailed",
    "SIG",
    "Traceback",
    # threading's "Exception in thread" (a traceback follows) holds "xception", below
    "Node with rank",
    "Segmentation",
    "NCCL",
    "rdma",
    "ibv_",
    "environment variable",
    # mlx.launch's "exited with code" holds "exited", below
    # "was killed" (lowercase) and "Killed" share "illed", below
    "panic(cpu",
    "memorystatus:",
    "[ERROR]",  # mlx.distributed_config's log_error lines
    "[WARN]",  # mlx.launch's and mlx.distributed_config's log_warning lines
    "does not seem to have RDMA",  # its check_rdma line, [ERROR] or [WARN]
    "Fence::wait",
    "[mpi]",  # MLX's mpi backend prints its version warning with no error word in it
    "EXC_",  # macOS exception types: EXC_RESOURCE lines, lldb's "stop reason = EXC_..."
    "Process:",  # a crash report's text names its process and time before the exception
    "Date/Time:",
    "bug_type",  # a crash report's JSON header line pasted into a log
)

# UCX's signal handler's crash line: "[host:pid:thread:n] Caught signal 11 (Segmentation ...)"
_UCX_CRASH = re.compile(r"\s*\[[^\]\s:]+:\d+:\d+:\d+\] Caught signal \d+ \(")

# Multi-line records: a crash signal line, then the faulting frame within RECORD_WINDOW lines.
CRASH_SIGNAL = re.compile(
    r"\b(SIGSEGV|SIGBUS|SIGILL|SIGABRT|SIGFPE|SIGTRAP|EXC_BAD_ACCESS|"
    r"EXC_CRASH|EXC_BAD_INSTRUCTION|EXC_ARITHMETIC|EXC_BREAKPOINT|Segmentation fault|Bus error)\b"
)


class _CrashRecord:
    """An open crash record: its first line (``start``, ``line``: the crash signal), the
    ``signal`` it names and its POSIX signal (``posix``), the ``heads`` just before it
    (Apple's ``Process:`` and ``Date/Time:`` lines, :func:`report_header`), the crashed
    ``thread`` once named, whether its text lists threads (``structured``: only the crashed
    thread's frames count) and whether the lines now read are that thread's (``in_crashed``),
    its ``frames`` (``((image, symbol), line)``, top first) and how many lines it waits
    (``window``)."""

    def __init__(self, start: int, line: str) -> None:
        m = CRASH_SIGNAL.search(line)
        self.start, self.line = start, line
        self.signal = m.group(1) if m else ""
        self.posix = posix_signal(line) or ("SIGSEGV" if "Segmentation" in self.signal else None)
        self.heads: Dict[str, Tuple[str, ...]] = {}
        self.thread: Optional[int] = None
        self.structured = False
        self.in_crashed = False
        self.frames: List[Tuple[Frame, str]] = []
        self.window = RECORD_WINDOW


TRACEBACK_START = "Traceback (most recent call last):"
# PyTorch's "Last error:" (ProcessGroupNCCL: ncclGetLastError after the NCCL error it explains),
# its text on the same line or the next one, behind the same rank prefix
LAST_ERROR = re.compile(r"^(?P<prefix>.*?)\bLast error:\s*(?P<text>.*)$")
_THREAD_EXCEPTION = re.compile(r"Exception in thread [^\n]*:\s*$")  # threading's excepthook
_FRAME_LINE = re.compile(r'File "[^"]*", line \d+')  # a traceback's frame line, without its indent
_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning)?)"
    r"(: (?P<msg>.*))?$"
)
_FRAME_FILE = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in ([^\s,]+))?')
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def prefix_shape(prefix: str) -> Optional["re.Pattern[str]"]:
    """A regex for lines that carry the same launcher or rank prefix as ``prefix`` (the text
    before a traceback's first line, e.g. ``"[rank 1] "`` or ``"2026-01-05 10:00:01 rank1: "``):
    its digit runs match any number (timestamps, pids), the rest literally. None for no
    prefix."""
    if not prefix.strip():
        return None
    # two log records joined on the header's line ("(Worker pid=7) ERROR ...] Error executing
    # method. (Worker pid=7) ERROR ...] Traceback ..."): the last record's prefix is the one
    # the traceback's lines carry
    head = prefix[:12]
    if len(head) == 12 and prefix.rfind(head) > 0:
        prefix = prefix[prefix.rfind(head) :]
    parts = re.split(r"(\d+)", prefix)
    return re.compile("^" + "".join(r"\d+" if p.isdigit() else re.escape(p) for p in parts))


_ZERO_WIDTH = {_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT}  # they never split a literal run


def _better(a: Optional[FrozenSet[str]], b: Optional[FrozenSet[str]]) -> Optional[FrozenSet[str]]:
    """Of two literal sets, the one whose shortest literal is longer (fewer false candidates)."""
    if not b or any(not x for x in b):
        return a
    if not a or min(map(len, b)) > min(map(len, a)):
        return b
    return a


Better = Callable[[Optional[FrozenSet[str]], Optional[FrozenSet[str]]], Optional[FrozenSet[str]]]


def _needs(items, ignorecase: bool, better: Better = _better) -> Optional[FrozenSet[str]]:
    """Literals at least one of which every match of the parsed regex sequence ``items``
    contains (the standard library's own parse of the pattern), or None when none is certain:
    of the longest runs of literal characters, the unions of a required alternation's
    branches and what a required group or repeat (at least once) needs, the one ``better``
    keeps. Case-insensitive parts need nothing (a literal would be too narrow)."""
    best: Optional[FrozenSet[str]] = None
    run: List[str] = []
    for op, av in items:
        if op is _sre.LITERAL and not ignorecase:
            run.append(chr(av))
            continue
        if op in _ZERO_WIDTH:
            continue
        best = better(best, frozenset({"".join(run)}) if run else None)
        run = []
        if op is _sre.SUBPATTERN:
            _, add, remove, sub = av
            icase = (ignorecase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            best = better(best, _needs(sub, icase, better))
        elif op is _sre.BRANCH:
            alts = [_needs(b, ignorecase, better) for b in av[1]]
            if all(alts):
                best = better(best, frozenset().union(*alts))  # type: ignore[arg-type]
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
            best = better(best, _needs(av[2], ignorecase, better))
    return better(best, frozenset({"".join(run)}) if run else None)


def _parse(pattern: "re.Pattern[str]", better: Better) -> Optional[FrozenSet[str]]:
    try:
        return _needs(
            _sre.parse(pattern.pattern, pattern.flags), bool(pattern.flags & re.I), better
        )
    except Exception:  # pragma: no cover - a parser of another Python version
        return None


def required_literals(pattern: "re.Pattern[str]") -> Optional[FrozenSet[str]]:
    """Literal strings at least one of which is in every text ``pattern`` finds (its search
    can only succeed on a line holding one), derived from the pattern itself; None when the
    pattern has no certain literal (it is then tried on every line: no prefilter)."""
    return _parse(pattern, _better)


def anchored(pattern: "re.Pattern[str]", anchors: Optional[Sequence[str]] = None) -> bool:
    """Whether every text ``pattern`` finds holds one of ``anchors`` (default
    :data:`ANCHORS`), so a reader that feeds only lines holding an anchor never misses it:
    some set of literals the pattern requires (:func:`required_literals`' reading, keeping a
    set whose every literal holds an anchor wherever there is one) is all anchored."""
    anc = ANCHORS if anchors is None else anchors

    def held(x: Optional[FrozenSet[str]]) -> bool:
        return bool(x) and all(any(a in lit for a in anc) for lit in x)  # type: ignore[union-attr]

    def covered_first(a, b):
        return a if held(a) else b if held(b) else _better(a, b)

    return held(_parse(pattern, covered_first))


# Words of the MLX, NCCL, Open MPI and shell messages that hold no record anchor (no "rror",
# no "ailed": "[mpi] MPI found but it does not appear to be Open MPI", "Resource limit (N)
# exceeded", "zsh: killed"), chosen so that every match of every line signature's pattern
# holds one of them or a record anchor (:func:`anchored`). Few on purpose: an automaton over
# more than 64 strings loses its SIMD prefilter (Rust aho-corasick's Teddy) and reads a block
# about three times slower; tests/unit/signatures/test_signatures.py fails for a signature
# that none covers.
MESSAGE_ANCHORS: Tuple[str, ...] = (
    "n't",  # "couldn't", "Can't ", "doesn't"
    "peer",
    "xception",
    "upport",  # "not supported", "does not support", "Unsupported"
    "Unable to",
    "distributed",
    "device",
    "valid",
    "limit",
    "should",
    "illed",  # "Killed: 9", bash's "Killed", "... was killed by signal 9"
    # Open MPI's signal handler: "[host:pid] *** Process received signal ***"
    "received signal",
    "erminat",  # MLX's "Terminating due to uncaught exception", libstdc++'s "terminate called"
    "Watchdog caught",  # PyTorch's NCCL watchdog, its WorkNCCL(...) cut to the next line
    "exited",
    "MeshImpl",
    "std::",
    "what()",
    "sh: ",  # zsh's "zsh: killed", bash's "bash: -c: line 1: ..."
    ": line ",
    "Abort trap",
    "(core dumped)",
    "Broken pipe",
    "MPI_ERRORS",
    "denied",  # "Permission denied (publickey,...)", ssh's refusal
    "maximum allowed buffer",
    "hostfile is malformed",
    # MLX's strict mpi init: "Cannot initialize MPI" (mlx #1964); the dynamic loader's "cannot
    # open shared object file"
    "annot ",
    # Metal's "Function F is using language version 4.0 which is incompatible with this OS"
    "ncompatible",
    # NCCL texts PyTorch prints bare after "Last error:" (NVIDIA/nccl #1267, #1235):
    # ncclSocketInit's "... with family 0 is neither AF_INET(2) ...", CUDACHECK's "Cuda failure"
    "AF_INET",
    # CUDACHECK's "Cuda failure", nccl-tests' "Test CUDA failure common.cu:N '<text>'"
    "failure",
    # Open MPI's "Primary job  terminated normally, but 1 process returned" holds "erminat"
    # PyTorch's c10d store client: "The client socket has timed out after 600s while trying
    # to connect to (HOST, PORT)", "... has failed to connect to [HOST]:PORT"
    "client socket",
    "ismatch",  # NCCL's "Mismatched collective detected", PyTorch's "Detected mismatch between"
    "No module named",  # python -m's "python3: No module named X" (runpy, no "rror")
    # MLX's own names: its C++ namespace (mlx::core::Fence::wait, mlx::core::cu::), its item
    # calls (mlx_item), and the dynamic loader's words for an MLX library missing or of another
    # build, bare (dlopen's "libmlx.so: cannot open shared object file", "Symbol not found:
    # __ZN3mlx..."): one anchor for all of them
    "mlx",
    # NVSHMEM's bootstrap: "bootstrap_net_recv:99: Message truncated : received N bytes ..."
    "Message truncated",
    # a socket's bind refused, bare: "[Errno 48] Address already in use" (macOS, Linux's 98)
    "lready in use",
    # exo's placement: "No cycles found with sufficient memory", "no RDMA-connected cycles"
    "cycle",
    "CompletionQueueDispatch",  # Metal's completion queue, a crashed thread's in a summary
    # glibc's heap checks (malloc_printerr): "free(): corrupted unsorted chunks", "double free
    # or corruption (out)", "munmap_chunk(): invalid pointer", "free(): double free detected"
    "orrupt",
    "(): ",
)

# The strings a reader that scans gigabytes looks for first (one automaton pass): it decodes
# and matches only the lines that hold one; tests/unit/signatures/test_signatures.py checks
# every example and every literal a signature's pattern requires holds one.
ANCHORS: Tuple[str, ...] = RECORD_ANCHORS + MESSAGE_ANCHORS


@dataclass(frozen=True)
class _Index:
    """The catalogue as the scanner reads it: ``lines`` (the signatures with a pattern, in
    catalogue order), ``frames`` (the frame signatures, in the order tried on one line),
    ``exits`` (the exit-status signatures), ``fallback`` (record kind -> its signature),
    ``order`` (code -> catalogue position), ``by_code``; the prefilter: ``literals`` (one
    automaton over every line signature's :func:`required_literals`), ``by_literal`` (literal
    index -> positions in ``lines`` of the signatures that need it), ``always`` (positions of
    the signatures without a literal, tried on every line)."""

    lines: Tuple[Signature, ...]
    frames: Tuple[Signature, ...]
    exits: Tuple[Signature, ...]
    fallback: Dict[str, Signature]
    order: Dict[str, int]
    by_code: Dict[str, Signature]
    literals: Optional[object] = None
    by_literal: Tuple[Tuple[int, ...], ...] = ()
    always: Tuple[int, ...] = ()

    def candidates(self, line: str) -> Sequence[Signature]:
        """The line signatures that may match ``line``, in catalogue order: those one of whose
        required literals it holds (one automaton pass over the line) and those without one."""
        if self.literals is None:
            return self.lines
        hits = self.literals.find_matches_as_indexes(line, overlapping=True)  # type: ignore
        if not hits:
            return [self.lines[i] for i in self.always]
        pos = set(self.always)
        for k, _, _ in hits:
            pos.update(self.by_literal[k])
        return [self.lines[i] for i in sorted(pos)]


_INDEX: Optional[_Index] = None


def _prefilter(lines: Sequence[Signature]):
    """``(automaton, by_literal, always)`` for :class:`_Index` (automaton None without
    ahocorasick-rs: every signature is then tried)."""
    if _AhoCorasick is None:
        return None, (), tuple(range(len(lines)))
    literals: Dict[str, List[int]] = {}
    always: List[int] = []
    for i, sig in enumerate(lines):
        need = required_literals(sig.pattern)  # type: ignore[arg-type]
        if need is None:
            always.append(i)
        for lit in sorted(need or ()):
            literals.setdefault(lit, []).append(i)
    if not literals:
        return None, (), tuple(range(len(lines)))
    automaton = _AhoCorasick(list(literals), matchkind=_MatchKind.Standard)
    return automaton, tuple(tuple(v) for v in literals.values()), tuple(always)


def _index() -> _Index:
    """The index of :data:`meshdoctor.signatures.families.CATALOGUE`, built on first use."""
    global _INDEX
    if _INDEX is None:
        lines = tuple(s for s in CATALOGUE if s.pattern is not None)
        automaton, by_literal, always = _prefilter(lines)
        _INDEX = _Index(
            lines=lines,
            frames=tuple(FRAME_SIGNATURES),
            exits=tuple(s for s in CATALOGUE if s.exit_status is not None),
            fallback={s.fallback: s for s in CATALOGUE if s.fallback is not None},
            order={s.code: i for i, s in enumerate(CATALOGUE)},
            by_code=BY_CODE,
            literals=automaton,
            by_literal=by_literal,
            always=always,
        )
    return _INDEX


# -- counting lines by shape -----------------------------------------------------------------
# A reader that meets the same message again and again (survivors print an error every step,
# behind a fresh timestamp, pid and step counter) matches one line of each *shape* (its digits
# masked) and counts the others. That is exact where what a line gives does not depend on its
# digits, or only on digits it keeps as values: :func:`shape_values` says which.

WHOLE = ((0, -1),)  # shape_values' answer for a shape whose every digit is a value

_DIGIT = frozenset(map(ord, "0123456789"))
_LOOSE_RANK = re.compile(r"[Rr]ank[ _=:#-]?(\d+)")  # every digit run line_rank may read
_DIGIT_RUN = re.compile(r"\d+")


class _Unblind(Exception):
    """A regex construct the digit-blind twin cannot stand for (a back-reference)."""


def _set_digits(items) -> Optional[bool]:
    """Whether a parsed character set (``IN``) matches every digit (True), none (False), or
    some but not all (None)."""
    neg = False
    hit = set()
    for op, av in items:
        if op is _sre.NEGATE:
            neg = True
        elif op is _sre.LITERAL and av in _DIGIT:
            hit.add(av)
        elif op is _sre.RANGE:
            hit.update(d for d in _DIGIT if av[0] <= d <= av[1])
        elif op is _sre.CATEGORY and av in (_sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD):
            hit.update(_DIGIT)  # the other categories (\D, \W, \s, \S...) hold all or none
        elif op is _sre.CATEGORY and av in (_sre.CATEGORY_NOT_SPACE,):
            hit.update(_DIGIT)
    if len(hit) not in (0, 10):
        return None
    return (len(hit) == 10) != neg


def _blind(items) -> Tuple[list, bool]:
    r"""The digit-blind twin of a parsed regex sequence and whether it differs: a literal digit
    becomes ``\d``, a set that holds some digits but not all holds all, a negative look-around
    that reads digits is dropped; every match of the original is a match of the twin, and the
    twin matches a text exactly where it matches that text with any digit changed."""
    out: list = []
    changed = False
    for op, av in items:
        if op is _sre.LITERAL and av in _DIGIT:
            out.append((_sre.IN, [(_sre.CATEGORY, _sre.CATEGORY_DIGIT)]))
            changed = True
        elif op is _sre.NOT_LITERAL and av in _DIGIT:
            out.append((_sre.ANY, None))
            changed = True
        elif op is _sre.IN:
            if _set_digits(av) is None:
                neg = any(o is _sre.NEGATE for o, _ in av)
                out.append(
                    (_sre.ANY, None)
                    if neg
                    else (_sre.IN, list(av) + [(_sre.CATEGORY, _sre.CATEGORY_DIGIT)])
                )
                changed = True
            else:
                out.append((op, av))
        elif op is _sre.SUBPATTERN:
            group, add, rm, sub = av
            twin, c = _blind(sub)
            out.append((op, (group, add, rm, _sre.SubPattern(sub.state, twin))))
            changed |= c
        elif op is _sre.BRANCH:
            subs = [_blind(b) for b in av[1]]
            out.append(
                (op, (av[0], [_sre.SubPattern(b.state, t) for b, (t, _) in zip(av[1], subs)]))
            )
            changed |= any(c for _, c in subs)
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) or op is getattr(
            _sre, "POSSESSIVE_REPEAT", None
        ):
            twin, c = _blind(av[2])
            out.append((op, (av[0], av[1], _sre.SubPattern(av[2].state, twin))))
            changed |= c
        elif op is getattr(_sre, "ATOMIC_GROUP", None):
            twin, c = _blind(av)
            out.append((op, _sre.SubPattern(av.state, twin)))
            changed |= c
        elif op is _sre.ASSERT:
            twin, c = _blind(av[1])
            out.append((op, (av[0], _sre.SubPattern(av[1].state, twin))))
            changed |= c
        elif op is _sre.ASSERT_NOT:
            _, c = _blind(av[1])
            if c:  # it reads digits: the twin may match where the original does not
                changed = True
            else:
                out.append((op, av))
        elif op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
            raise _Unblind(op)
        else:
            out.append((op, av))
    return out, changed


def digit_twin(pattern: "re.Pattern[str]") -> Tuple[bool, Optional["re.Pattern[str]"]]:
    """``(reads_digits, twin)`` of a compiled regex (the standard library's own parse of it):
    ``reads_digits`` False when its matches are the same on a text whatever digits it holds;
    else ``twin`` is a digit-blind regex that matches wherever it may (None: no twin, every
    digit counts)."""
    try:
        tree = _sre.parse(pattern.pattern, pattern.flags)
        twin, changed = _blind(tree)
        if not changed:
            return False, None
        return True, _sre_compile.compile(_sre.SubPattern(tree.state, twin), pattern.flags)
    except Exception:  # pragma: no cover - a back-reference, or another Python's parser
        return True, None


_TWINS: Optional[Tuple[Tuple[Optional[FrozenSet[str]], Optional["re.Pattern[str]"]], ...]] = None
_MASK = str.maketrans("0123456789", "0000000000")


def _twins():
    """``(masked required literals or None, twin)`` of each line signature that reads digits,
    built on first use."""
    global _TWINS
    if _TWINS is None:
        out = []
        for sig in _index().lines:
            reads, twin = digit_twin(sig.pattern)  # type: ignore[arg-type]
            if reads:
                need = required_literals(sig.pattern)  # type: ignore[arg-type]
                lits = frozenset(x.translate(_MASK) for x in need) if need else None
                out.append((lits, twin))
        _TWINS = tuple(out)
    return _TWINS


def shape_values(shape: str) -> Optional[Tuple[Tuple[int, int], ...]]:
    """Where the lines of one *shape* (a line with each digit written ``0``) differ in what a
    :class:`Scanner` finds on them: the ``(start, end)`` character spans of the digits that a
    signature's pattern (a literal ``errno=2``) or the rank read by the triage
    (``[rank 3]``, :data:`_LOOSE_RANK`) reads, found by each digit-reading pattern's
    :func:`digit_twin` wherever it may match; :data:`WHOLE` where every digit counts. Two idle
    scanners fed two lines of the same shape and the same digits in these spans give the same
    codes and ranks. None for a shape whose lines must be fed one by one: one that opens or
    names a record (a traceback, a crash signal, a crash report's ``Process:`` line) or that is
    shown escaped (ANSI or other control characters, undecodable bytes)."""
    if (
        TRACEBACK_START in shape
        or "Last error:" in shape
        or "Exception in thread" in shape
        or "Process:" in shape
        or "Date/Time:" in shape
        or "\ufffd" in shape
        or CONTROL.search(shape)
        or CRASH_SIGNAL.search(shape)
    ):
        return None
    spans = [m.span(1) for m in _LOOSE_RANK.finditer(shape)]
    for lits, twin in _twins():
        if lits is not None and not any(x in shape for x in lits):
            continue
        if twin is None:
            return WHOLE
        at = 0
        while True:
            m = twin.search(shape, at)
            if m is None:
                break
            spans.append(m.span())
            at = m.start() + 1
    if not spans:
        return ()
    keep = []
    for d in _DIGIT_RUN.finditer(shape):  # the whole digit runs the spans touch
        if any(a <= d.end() and d.start() <= b for a, b in spans):
            keep.append(d.span())
    return tuple(keep)


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (mlx.launch colours its [WARN] lines)."""
    return _ANSI.sub("", text)


def printable(text: str) -> str:
    """A log line safe to print: its ANSI colour sequences removed (logs are often coloured),
    then every other control character shown as ``\\xNN`` (:func:`meshdoctor.text.printable`)."""
    if "\x1b" in text:
        text = strip_ansi(text)
    return text_printable(text)


def _code_lines(frames: Sequence[str]) -> List[str]:
    """The source lines among a traceback's last frames (not its ``File`` lines, nor
    Python's ``^^^`` marks)."""
    return [ln.strip() for ln in frames[-3:] if ln.strip(" ^~\t") and not _FRAME_FILE.search(ln)]


# the frames of an attribute lookup: an AttributeError raised there reports its caller
_LOOKUPS = ("__getattr__", "__getattribute__")


def innermost(frames: Sequence[str]) -> Dict[str, str]:
    """What a traceback's lines (``frames``, as read, outermost first) say of its innermost
    frame: groups ``file`` (its path), ``lineno`` and ``func`` (from its ``File "...", line N,
    in F`` line) and ``call`` (its line of code, when printed); when that frame is in a library
    that only carries the call (:data:`~meshdoctor.signatures.pyerrors.PLUMBING`: anyio,
    asyncio) or is an attribute lookup (``__getattr__``), ``own_file``, ``own_lineno`` and
    ``own_func`` of the innermost frame outside it;
    {} when no frame line was read."""
    found = [f for f in map(_FRAME_FILE.search, reversed(frames)) if f]
    if not found:
        return {}
    fm = found[0]
    out = {"file": fm.group(1), "lineno": fm.group(2)}
    if fm.group(3):
        out["func"] = fm.group(3)
    code = _code_lines(frames)
    if code:
        out["call"] = code[-1]
    if PLUMBING.search(fm.group(1).replace("\\", "/")) or fm.group(3) in _LOOKUPS:
        # raised inside an event loop's or a stream's library, or by an attribute lookup
        # (MLX's Module.__getattr__ raising AttributeError for a name it lacks): the code
        # that called it
        own = next(
            (
                f
                for f in found
                if not PLUMBING.search(f.group(1).replace("\\", "/")) and f.group(3) not in _LOOKUPS
            ),
            None,
        )
        if own is not None:
            out.update(own_file=own.group(1), own_lineno=own.group(2))
            if own.group(3):
                out["own_func"] = own.group(3)
    return out


def _cut(line: str) -> str:
    return printable(line.strip()[:LINE_CHARS])


def _match(sig: Signature, line: str, m: "re.Match[str]", lineno: int = 0) -> Match:
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    meaning = sig.meaning_for(groups)
    if m.start() > LINE_CHARS // 2:  # a long line (a progress bar, then the error): show the error
        line = "..." + line[m.start() - 40 :]
    remedy = sig.remedy_for(groups)
    return Match(sig.code, sig.name, meaning, remedy, _cut(line), groups, lineno, sig=sig)


def _match_sig(sig: Signature, line: str, lineno: int, groups: Dict[str, str]) -> Match:
    return Match(
        sig.code,
        sig.name,
        sig.meaning_for(groups),
        sig.remedy_for(groups),
        _cut(line),
        groups,
        lineno,
        sig=sig,
    )


def make_match(
    code: str,
    line: str,
    lineno: int = 0,
    meaning: Optional[str] = None,
    groups: Optional[Dict[str, str]] = None,
) -> Match:
    """A :class:`Match` for a signature recognised by other means than its regex (exit status,
    crash report), with ``meaning`` replacing the catalogue's (refined by ``groups``) when
    given."""
    s = _index().by_code[code]
    return Match(
        s.code,
        s.name,
        meaning or s.meaning_for(groups or {}),
        s.remedy_for(groups or {}),
        _cut(line),
        groups or {},
        lineno,
        sig=s,
    )


def _match_line(ix: _Index, line: str, lineno: int) -> List[Match]:
    out = []
    for sig in ix.candidates(line):
        m = sig.pattern.search(line)  # type: ignore[union-attr]
        if m:
            out.append(_match(sig, line, m, lineno))
    if len(out) > 1 and any(not x.signature.envelope for x in out):  # the specific one says it
        out = [x for x in out if not x.signature.envelope]
    return out


def match_line(line: str, lineno: int = 0) -> List[Match]:
    """Every line signature that matches ``line`` (ANSI colour codes removed first)."""
    if "\x1b" in line:
        line = strip_ansi(line)
    return _match_line(_index(), line, lineno)


class Scanner:
    """Matches records across lines in bounded memory.

    Feed lines in order with :meth:`feed` (1-based ``lineno``; lines may be skipped as long as
    every line holding an :data:`ANCHORS` string is fed, and every line is fed while
    :attr:`wants_every_line` is true); call :meth:`close` at the end. Both return the matches
    completed so far. ``generic`` adds the catalogue's fallback signatures: native.crash for a
    crash signal whose frame never came and python.exception for a traceback whose exception
    line matched no signature, or for a fallback's own line pattern (an exception line read
    without its traceback) (off for the probe, whose own codes say that)."""

    def __init__(self, generic: bool = False) -> None:
        self.generic = generic
        self._ix = _index()
        self._crash: Optional[_CrashRecord] = None  # an open crash record
        # the last crash report header lines seen: kind -> (lineno, values)
        self._heads: Dict[str, Tuple[int, Tuple[str, ...]]] = {}
        self._tb: Optional[Tuple[int, List[str]]] = None  # (lineno, last frames) of a traceback
        self._matched = False  # whether any line fed so far matched
        self._tb_prefix: Optional["re.Pattern[str]"] = None  # its lines' launcher/rank prefix
        # the last line a frame signature matched outside a record: (lineno, signature); a
        # crash record with no frame of its own right after it is that signature's crash
        self._named: Optional[Tuple[int, Signature]] = None
        # a "Last error:" line whose text is on the next line: (lineno, its prefix)
        self._last: Optional[Tuple[int, str]] = None

    @property
    def wants_every_line(self) -> bool:
        """A record is open whose lines hold no anchor (a traceback's frames, a crashed
        thread's frames)."""
        return self._tb is not None or self._crash is not None or self._last is not None

    @property
    def idle(self) -> bool:
        """No record is open: what the next line gives depends on that line alone (a reader
        may count an identical line again instead of feeding it)."""
        return self._tb is None and self._crash is None and self._last is None

    def _expire_crash(self, lineno: int) -> List[Match]:
        rec = self._crash
        if rec is None or lineno - rec.start <= rec.window:
            return []
        return self._close_crash()

    def _close_crash(self) -> List[Match]:
        """The match of the open crash record (its frames classified), closing it."""
        rec, self._crash = self._crash, None
        assert rec is not None
        sig, frame = classify_frames([f for f, _ in rec.frames], rec.posix)
        if sig is None and not self.generic:
            return []
        groups = {"signal": rec.signal} if rec.signal else {}
        if _UCX_CRASH.match(rec.line):
            groups["ucx"] = "1"
        if "process" in rec.heads:
            groups["process"], groups["pid"] = rec.heads["process"]
        if "time" in rec.heads:
            groups["time"] = rec.heads["time"][0]
        if rec.thread is not None and rec.structured:
            groups["thread"] = str(rec.thread)
        raw = dict(rec.frames)
        if (
            sig is None
            and self._named is not None
            and not any(not is_system_frame(f) for f, _ in rec.frames)
        ):
            # no frame to blame (a crash summary that quoted its frames before the exception
            # line, or none past the abort): the frame signature seen just before names it
            at, named = self._named
            if 0 <= rec.start - at <= RECORD_WINDOW:
                sig = named
        if sig is None:
            sig = self._ix.fallback[CRASH]
            if frame is not None:
                groups["frame"] = " ".join(x for x in frame if x)
            line = rec.line
        else:
            line = raw.get(frame, rec.line) if frame is not None else rec.line
            if frame is not None:
                groups["frame"] = " ".join(x for x in frame if x)
        m = _match_sig(sig, line, rec.start, groups)
        if rec.frames:  # the crash's own text, its frames with it: never "find the report"
            m.remedy = sig.report_remedy or sig.remedy
        shown = [raw[frame]] if frame is not None and frame in raw else []
        shown += [r for f, r in rec.frames if r not in shown]
        m.context = [_cut(rec.line)] + [_cut(r) for r in shown][: CONTEXT_LINES - 1]
        return [m]

    def _crash_line(self, lineno: int, line: str) -> List[Match]:
        """One line inside an open crash record: a thread header, a frame of the crashed
        thread, or the end of that thread's block (the record is then matched)."""
        rec = self._crash
        assert rec is not None
        s = line.rstrip("\r\n")[:FRAME_CHARS]
        head = thread_header(s)
        if head is not None:
            n, crashed = head
            rec.window = REPORT_LINES
            if names_crashed_thread(s):  # "Crashed Thread: 3": its block comes later
                rec.thread = n
                return []
            rec.structured = True
            if rec.frames and rec.in_crashed:  # the crashed thread's block ended
                return self._close_crash()
            rec.in_crashed = crashed or (rec.thread is not None and n == rec.thread)
            if rec.in_crashed:
                rec.thread = n
            return []
        if rec.structured and not rec.in_crashed:
            return []
        fr = parse_frame(s)
        if fr is None and any(sig.frame.search(s) for sig in self._ix.frames):  # type: ignore
            fr = ("", s.strip())  # a frame in a shape of its own ("... in tbt_post_recv")
        if fr is not None:
            rec.frames.append((fr, s.strip()[:LINE_CHARS]))
            if not rec.structured and classify_frames([fr], rec.posix)[0] is not None:
                return self._close_crash()  # frames with no thread structure: the first decides
            if len(rec.frames) >= MAX_FRAMES:
                return self._close_crash()
            return []
        if rec.frames and (not s.strip() or s.startswith("Binary Images")):
            return self._close_crash()
        return []

    def _close_tb(self, exc_line: Optional[str], lineno: int) -> List[Match]:
        assert self._tb is not None
        start, frames = self._tb
        self._tb = None
        if exc_line is None:
            return []
        fallback = self._ix.fallback[TRACEBACK]
        # the traceback's own fallback signature may match a bare exception line: here the
        # record is whole, so it is the fallback record below, never the bare-line reading
        found = [m for m in match_line(exc_line, lineno) if m.signature is not fallback]
        for m in found:
            m.context = frames[-CONTEXT_LINES:]
        if found or not self.generic:
            return found
        em = _EXC_LINE.match(exc_line.strip())
        groups = {"type": em.group("type"), "msg": em.group("msg") or ""} if em else {}
        groups.update(innermost(frames))
        m = make_match(
            fallback.code, exc_line, lineno, meaning=fallback.meaning_for(groups), groups=groups
        )
        m.context = frames[-CONTEXT_LINES:]
        return [m]

    def _last_error(self, lineno: int, line: str, found: List[Match]) -> List[Match]:
        """``found`` with what NCCL's last error says when ``line`` holds it: PyTorch prints
        ``ncclGetLastError`` (the text of NCCL's last WARN, without NCCL's ``NCCL WARN``
        prefix) after ``Last error:``, on the same line or the next one (:data:`LAST_ERROR`).
        Its matches are read as the WARN line it is (group ``last``: the text is the reason of
        the NCCL error printed above it) and shown with the line as it was printed."""
        body: Optional[str] = None
        if self._last is not None:
            at, prefix = self._last
            self._last = None
            if lineno == at + 1:
                text = line.rstrip("\r\n")
                body = text[len(prefix) :] if prefix and text.startswith(prefix) else text
        m = LAST_ERROR.search(line) if "Last error:" in line else None
        if m is not None:
            if m.group("text").strip():
                body = m.group("text")
            else:
                self._last = (lineno, m.group("prefix"))
        if body is None or not body.strip():
            return found
        extra = []
        for x in _match_line(self._ix, "NCCL WARN " + body.strip(), lineno):
            x.groups["last"] = body.strip()
            x.role = x.signature.role_for(x.groups)
            x.meaning = x.signature.meaning_for(x.groups)
            x.line = _cut(line)
            extra.append(x)
        codes = {x.code for x in found}
        both = found + [x for x in extra if x.code not in codes]
        if len(both) > 1 and any(not x.signature.envelope for x in both):
            # a generic reading gives way, except the last error's own when a class of its
            # signature names it (the error and its 'Last error:' flattened onto one line:
            # the class is the reason, the error line its result)
            both = [
                x
                for x in both
                if not x.signature.envelope
                or (x in extra and x.signature.classes and x.signature.failure_class(x.groups))
            ]
        return both

    def feed(self, lineno: int, line: str) -> List[Match]:
        """Matches completed by ``line`` (the line itself, or a record it closes)."""
        got = self._feed(lineno, line)
        self._matched = self._matched or bool(got)
        return got

    def _feed(self, lineno: int, line: str) -> List[Match]:
        out = self._expire_crash(lineno)
        if "\x1b" in line:
            line = strip_ansi(line)
        if self._tb is not None:
            start, frames = self._tb
            s = line.rstrip("\r\n")
            if self._tb_prefix is not None:  # "[rank 1]   File ...": read the record's own text
                pm = self._tb_prefix.match(s)
                if pm:
                    s = s[pm.end() :]
            if (
                s.startswith((" ", "\t"))
                or _FRAME_LINE.match(s)  # a frame whose indent was lost (pasted in a mail)
                or not s.strip()
                or s.startswith(("During handling", "The above exception", TRACEBACK_START))
            ):
                if s.strip():
                    frames.append(_cut(s))
                    del frames[:-CONTEXT_LINES]
                if lineno - start > TRACEBACK_LINES:
                    out += self._close_tb(None, lineno)
                return out
            return out + self._close_tb(s, lineno)
        th = (
            _THREAD_EXCEPTION.search(line)
            if "Exception in thread" in line and TRACEBACK_START not in line
            else None
        )
        if TRACEBACK_START in line or th:
            # threading's "Exception in thread NAME:" heads a traceback too (its own line
            # may not have been pasted)
            at = th.start() if th else line.index(TRACEBACK_START)
            self._tb = (lineno, [])
            self._tb_prefix = prefix_shape(line[:at])
            return out
        found = _match_line(self._ix, line, lineno)
        if self._crash is None:
            found = self._last_error(lineno, line, found)
        if not self.generic:  # a fallback signature's own line (a bare exception) is generic too
            found = [m for m in found if m.signature.fallback is None]
        head = report_header(line) if "Process:" in line or "Date/Time:" in line else None
        if head is not None:  # "Process:", "Date/Time:" before a crash report's exception
            self._heads[head[0]] = (lineno, head[1])
        if self._crash is not None:
            # the record's own lines (its frames, its threads, a frame signature's line) are
            # matched as the record: one match, never a stack line read as another failure
            s = line.rstrip("\r\n")[:FRAME_CHARS]
            if parse_frame(s) is not None or thread_header(s) is not None:
                found = []
            found = [m for m in found if m.signature.frame is None]
            return out + found + self._crash_line(lineno, line)
        named = [m.signature for m in found if m.signature.frame is not None]
        if named:
            self._named = (lineno, named[0])
        if not found and CRASH_SIGNAL.search(line):
            self._crash = _CrashRecord(lineno, line)
            self._crash.heads = {
                k: v for k, (at, v) in self._heads.items() if lineno - at <= RECORD_WINDOW
            }
            out += self._crash_line(lineno, line)
        return out + found

    def close(self) -> List[Match]:
        """Matches of records still open at the end of the input."""
        out: List[Match] = []
        if self._crash is not None:
            out += self._close_crash()
        if self._tb is not None:
            out += self._cut_tb()
        return out

    def _cut_tb(self) -> List[Match]:
        """A traceback still open at the end of the input: cut before its exception line (the
        error itself). In generic mode, when nothing else of the input matched, it is the
        traceback fallback's record, saying so and naming its innermost frame; else nothing
        (an error read before it says more)."""
        assert self._tb is not None
        start, frames = self._tb
        self._tb = None
        if not self.generic or self._matched:
            return []

        fallback = self._ix.fallback[TRACEBACK]
        groups = {"cut": "1"}
        groups.update(innermost(frames))
        m = make_match(
            fallback.code,
            TRACEBACK_START if not frames else frames[-1],
            start,
            meaning=fallback.meaning_for(groups),
            groups=groups,
        )
        m.context = frames[-CONTEXT_LINES:]
        return [m]


def classify(text: str, *, generic: bool = False) -> List[Match]:
    """Every catalogue signature found in ``text`` (one match per signature: its first matching
    record), in catalogue order. ``text`` is any log text (a rank's stderr tail, a log file);
    ``generic`` as in :class:`Scanner`."""
    sc = Scanner(generic=generic)
    found: List[Match] = []
    for i, line in enumerate(text.splitlines(), 1):
        found += sc.feed(i, line)
    found += sc.close()
    first: Dict[str, Match] = {}
    for m in found:
        first.setdefault(m.code, m)
    order = _index().order
    return sorted(first.values(), key=lambda m: order[m.code])


def classify_exit(returncode: Optional[int], text: str = "") -> List[Match]:
    """Signatures recognised from a rank's exit status (``returncode`` as :mod:`subprocess`
    gives it; negative = killed by a signal) together with its ``text``: each signature whose
    ``exit_status`` it is, unless ``text`` holds that signature's ``exit_unless`` (255 without
    a ``[jaccl]`` line: rank.exit-255-silent; 75: jaccl.exit-75), in catalogue order."""
    return [
        make_match(s.code, f"exit status {returncode}")
        for s in _index().exits
        if s.exit_status == returncode and not (s.exit_unless and s.exit_unless in text)
    ]
