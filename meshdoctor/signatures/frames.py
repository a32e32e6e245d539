"""The frames of a crashed thread, read from text, and the signature they name.

One classification for every shape a crash comes in: a macOS crash report's JSON body
(:mod:`meshdoctor.triage.ips` gives its faulting thread's frames) and a crash pasted as text
into a log (:mod:`meshdoctor.signatures.scanner` reads the record line by line with
:func:`parse_frame` and :func:`thread_header`). :func:`classify_frames` tries the catalogue's
frame signatures (:data:`meshdoctor.signatures.families.FRAME_SIGNATURES`, each declaring its
``frame`` and ``abort_frame`` patterns) on the frames, top first; this module names no code.

Text shapes read (public formats):

* Apple's crash report text (the ``.crash`` format before macOS 12, still printed by
  Console.app; Apple, "Examining the fields in a crash report"): ``Process: NAME [PID]``,
  ``Exception Type: EXC_BAD_ACCESS (SIGSEGV)``, ``Crashed Thread: N``, then one block per
  thread (``Thread N:`` or ``Thread N Crashed:``) of frame lines
  ``0   libfoo.dylib   0x0000000104c0d52c symbol + 44``;
* lldb's ``bt`` (``* thread #N, stop reason = EXC_BAD_ACCESS (...)``, then
  ``frame #0: 0x... libfoo.dylib`symbol + 44``; the ``*`` marks the stopped thread);
* gdb's ``bt`` (``Thread N "name" received signal SIGSEGV``, then
  ``#0  0x... in symbol (args) from /path/libfoo.so``);
* Abseil's failure signal handler (``PC: @ 0x7f.. (unknown) ncclLaunchPrepare()``), as Ray's
  workers print it;
* glibc's ``backtrace_symbols`` lines, as UCX (``Caught signal 11 (Segmentation fault: ...)``,
  ``==== backtrace (tid: N) ====``, `` 3  /path/libnccl.so(+0x120057) [0x7ff1c18c1057]``)
  and Open MPI's signal handler (``[host:pid] [ 3] /path/libfoo.so(sym+0x2d4)[0x...]``)
  print them.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

from meshdoctor.signatures.families import FRAME_SIGNATURES
from meshdoctor.signatures.model import Signature

Frame = Tuple[str, str]  # (image, symbol); image "" when the text does not name it
MAX_FRAMES = 32  # frames of a thread that are tried, top first

_APPLE = re.compile(r"^\s*\d+\s+(?P<img>\S(?:.*?\S)?)\s+0x[0-9a-fA-F]+\s+(?P<sym>\S.*?)\s*$")
_LLDB = re.compile(
    r"^\s*\*?\s*frame #\d+:\s*(?:0x[0-9a-fA-F]+\s+)?(?P<img>[^`\s]+)`(?P<sym>\S.*?)\s*$"
)
_GDB = re.compile(
    r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?P<sym>[^\s(]+)[^\n]*?(?:\sfrom\s+(?P<img>\S+))?\s*$"
)
# glibc's backtrace_symbols() shape, as UCX's "==== backtrace ====", Open MPI's signal
# handler ("[host:pid] [ 3] /lib/libfoo.so(+0x42520)[0x7f...]") and many runtimes print it:
# "  3  /opt/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]", "libfoo.so(sym+0x2d4) [0x...]"
_BACKTRACE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*)?(?:\[\s*\d+\]\s*|\d+\s+)?(?P<img>[\w./+-]*?\.so[\w.]*|/[\w./+-]+)"
    r"\((?P<sym>[^()]*)\)\s*\[0x[0-9a-fA-F]+\]"
)
# Abseil's failure signal handler, as Ray's and gRPC's processes print it (behind their own
# prefixes): "PC: @     0x7f32d184f03d  (unknown)  ncclLaunchPrepare()", "    @ 0x7f6.. (unknown)"
_ABSL = re.compile(r"(?:PC: |\s)@\s+0x[0-9a-fA-F]+\s+(?:\(unknown\)|\d+)\s+(?P<sym>[^\s(]\S*)\s*$")
_BT_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
# a frame as a report quotes it in short: its number, symbol and offset, no image or address
# ("  1  jaccl::MeshImpl::all_gather(char const*, char*, long long) + 1380")
_SHORT = re.compile(r"^\s*\d+\s+(?P<sym>[A-Za-z_~].*?)\s+\+\s*\d+\s*$")
# the system's own frames on top of a crashed thread (the copy, the abort, the signal
# trampoline): not the code at fault
_SYSTEM = re.compile(
    r"^(?:libsystem_\w+\.dylib|libc\+\+abi\.dylib|libdyld\.dylib|dyld|"
    r"libc\.so\.\d+|libpthread\.so\.\d+|"
    # UCX's signal handler, on top of the thread it reports ("ucs_handle_error")
    r"libucs\.so[\d.]*)$"
)
_SYSTEM_SYMBOL = re.compile(
    r"^(?:_platform_\w+|__?pthread_kill|pthread_kill|abort|__abort|_sigtramp|raise|"
    r"__cxa_throw|std::__terminate|__pthread_start|_pthread_start|thread_start|"
    # glibc's copies (__memcpy_avx512_unaligned_erms): a fault there is its caller's pointer
    r"__?mem(?:cpy|move|set|cmp)\w*)\b"
)
# Rust's panic machinery between a panic and the abort (panic=abort, or a panic that cannot
# unwind through an FFI boundary: std::panicking, core::panicking, rust_panic,
# __rust_start_panic, abort_internal): the code at fault is the first frame below it
_PANIC_SYMBOL = re.compile(
    r"(?:^|::)(?:rust_panic\w*|__rust_start_panic|__rust_\w*abort\w*|rust_begin_unwind|"
    r"__rustc::\w+)\b|^(?:core|std)::(?:panicking|panic|process::abort|sys::.*abort_internal)|"
    r"^_RNv\w*(?:rust_panic|rust_begin_unwind|__rust_start_panic)"
)
_OFFSET = re.compile(r"\s+(?:\+\s*\d+\b.*|at\s+\S+:\d+.*|\(\S+:\d+\))$")

# thread headers: Apple's "Thread 3 Crashed::", "Crashed Thread: 3"; lldb's "* thread #3";
# gdb's 'Thread 3 "python3" received signal SIGSEGV' (names the crashed thread) and its
# "Thread 3 (Thread 0x7f... (LWP 1234)):" of `thread apply all bt`
_APPLE_THREAD = re.compile(r"^Thread (?P<n>\d+)(?P<crashed> Crashed)?(?::|\s|$)")
_CRASHED_THREAD = re.compile(r"^Crashed Thread:\s+(?P<n>\d+)")
_LLDB_THREAD = re.compile(r"^\s*(?P<star>\*)?\s*thread #(?P<n>\d+)\b")
_GDB_SIGNAL = re.compile(r"^Thread (?P<n>\d+) .*received signal")
_PROCESS = re.compile(r"^Process:\s+(?P<proc>\S.*?)\s+\[(?P<pid>\d+)\]")
_POSIX = re.compile(r"\b(SIG[A-Z]{2,6})\b")
_DATE = re.compile(
    r"^Date/Time:\s+(?P<when>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\S*(?: [+-]\d{4})?)"
)


def parse_frame(line: str) -> Optional[Frame]:
    """``(image, symbol)`` of one frame line of Apple's crash text, lldb or gdb, without the
    offset (``+ 44``) and source location; None for a line that is no frame."""
    s = line.rstrip()
    m = _LLDB.match(s) or _APPLE.match(s)
    if m:
        return m.group("img"), _OFFSET.sub("", m.group("sym"))
    m = _GDB.match(s)
    if m:
        img = m.group("img") or ""
        return img.rsplit("/", 1)[-1], m.group("sym")
    m = _BACKTRACE.match(s)
    if m:
        return m.group("img").rsplit("/", 1)[-1], _BT_OFFSET.sub("", m.group("sym"))
    m = _SHORT.match(s)
    if m:
        return "", m.group("sym")
    m = _ABSL.search(s)
    if m:
        return "", m.group("sym")
    return None


def is_system_frame(frame: Frame) -> bool:
    """Whether a frame is the system's own (libsystem_*, libc++abi, dyld, the abort and signal
    trampolines) rather than code a crash can be blamed on."""
    img, sym = frame
    return bool(_SYSTEM.match(img) or _SYSTEM_SYMBOL.match(sym))


def is_panic_frame(frame: Frame) -> bool:
    """Whether a frame is Rust's panic machinery (``std::panicking::rust_panic_with_hook``,
    ``core::panicking::panic_fmt``, ``rust_panic``, ``__rust_start_panic``, ``abort_internal``):
    a crashed thread through it aborted on a Rust panic, raised by the first frame below."""
    return bool(_PANIC_SYMBOL.search(frame[1]))


def culprit(frames: Sequence[Frame]) -> Optional[Frame]:
    """The first frame of ``frames`` (top first) that is neither the system's own
    (:func:`is_system_frame`) nor Rust's panic machinery (:func:`is_panic_frame`): the code a
    crash is blamed on; the top frame when all are; None for no frames."""
    return next(
        (f for f in frames if not is_system_frame(f) and not is_panic_frame(f)),
        frames[0] if frames else None,
    )


_V0_IDENT = re.compile(r"\d+")
_V0_SKIP = re.compile(r"[0-9A-Za-z]*_")  # a disambiguator (s...) or back-reference (B...)


def readable_symbol(symbol: str) -> str:
    """A Rust v0-mangled symbol (``_RNvNtCs..._17exo_pyo3_bindings10networking6py_new``,
    RFC 2603) as its path of identifiers joined by ``::`` (a best-effort reading: its
    length-prefixed identifiers in order, disambiguators and back-references skipped); any
    other symbol unchanged."""
    if not symbol.startswith("_R"):
        return symbol
    body, parts, i = symbol[2:], [], 0
    while i < len(body):
        m = _V0_IDENT.match(body, i)
        if m:
            n, start = int(m.group(0)), m.end()
            ident = body[start : start + n]
            if n and len(ident) == n and re.fullmatch(r"[A-Za-z_]\w*", ident):
                parts.append(ident)
                i = start + n
            else:
                i = m.end()
            continue
        if body[i] in "sB":
            skip = _V0_SKIP.match(body, i + 1)
            i = skip.end() if skip else i + 1
            continue
        i += 1
    return "::".join(parts) if parts else symbol


def thread_header(line: str) -> Optional[Tuple[Optional[int], bool]]:
    """``(thread number, crashed)`` of a line that starts a thread's block (``crashed``: the
    text marks it as the crashed or stopped one); ``(N, True)`` with no block for Apple's
    ``Crashed Thread: N`` and gdb's ``received signal`` line; None for any other line."""
    s = line.rstrip()
    m = _CRASHED_THREAD.match(s) or _GDB_SIGNAL.match(s)
    if m:
        return int(m.group("n")), True
    m = _APPLE_THREAD.match(s)
    if m:
        return int(m.group("n")), bool(m.group("crashed"))
    m = _LLDB_THREAD.match(s)
    if m:
        return int(m.group("n")), bool(m.group("star"))
    return None


def names_crashed_thread(line: str) -> bool:
    """Whether ``line`` names the crashed thread without starting its block (``Crashed
    Thread: N``, gdb's ``received signal`` line)."""
    s = line.rstrip()
    return bool(_CRASHED_THREAD.match(s) or _GDB_SIGNAL.match(s))


def report_header(line: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """What a crash report text's header line before the exception says: ``("process",
    (name, pid))`` of ``Process: python3.12 [48213]``, ``("time", (when,))`` of ``Date/Time:
    2026-01-05 10:00:04.1830 +0100``; None for any other line."""
    s = line.strip()
    m = _PROCESS.match(s)
    if m:
        return "process", (m.group("proc"), m.group("pid"))
    m = _DATE.match(s)
    if m:
        return "time", (m.group("when"),)
    return None


def posix_signal(text: str) -> Optional[str]:
    """The first POSIX signal name in ``text`` (``EXC_BAD_ACCESS (SIGSEGV)`` -> ``SIGSEGV``)."""
    m = _POSIX.search(text)
    return m.group(1) if m else None


def frame_text(frame: Frame) -> str:
    """One frame as frame patterns read it: ``image`symbol`` (lldb's own notation), or the
    symbol alone when the image is unknown."""
    img, sym = frame
    return f"{img}`{sym}" if img else sym


def classify_frames(
    frames: Sequence[Frame], signal: Optional[str] = None
) -> Tuple[Optional[Signature], Optional[Frame]]:
    """The frame signature that the crashed thread's ``frames`` (top first, the first
    :data:`MAX_FRAMES` tried) name, and the frame that decided it: each frame signature in
    catalogue-family order is tried on every frame (its ``frame`` pattern; its
    ``abort_frame`` pattern only when ``signal`` is SIGABRT). ``(None, top frame)`` when none
    names them (:func:`culprit`: the top frame that is not the system's own nor Rust's panic
    machinery): the crash record's generic signature is the caller's. A frame signature that
    a panic frame decided returns the culprit below it as its frame."""
    top = list(frames[:MAX_FRAMES])
    texts = [frame_text(f) for f in top]
    for sig in FRAME_SIGNATURES:
        for n, (fr, text) in enumerate(zip(top, texts)):
            if sig.frame is not None and sig.frame.search(text):
                # a frame of Rust's panic machinery names the panic; the code at fault is below
                return sig, (culprit(top[n:]) if is_panic_frame(fr) else fr)
            if sig.abort_frame is not None and signal == "SIGABRT" and sig.abort_frame.search(text):
                return sig, fr
    return None, culprit(top)
