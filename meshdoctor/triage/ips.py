"""macOS crash reports (``.ips``, the format of macOS 12 and later): summarised and matched.

Layout (Apple, "Interpreting the JSON format of a crash report"): line 1 is a JSON header
(``bug_type`` "309" for a crash, ``timestamp``, ``os_version``, ``name``); the rest is one JSON
object with ``procName``, ``pid``, ``captureTime``, ``osVersion``, ``exception.{type,signal}``,
``faultingThread``, ``threads[i].frames[j].{imageIndex,symbol}`` and ``usedImages[k].name``.

The summary names the process, pid, exception type and signal, the faulting thread's top frames
with their images, the macOS version and any MLX version found in image paths, and the signature
that matches: ``tbt_post_recv``/``tbt_post_send`` in ``libthunderboltrdma.dylib`` (MD612, mlx
#4192), ``ibv_reg_mr`` (MD609: a missing device before MLX 0.32.1), a Metal command-buffer abort
(MD661), else a native crash (MD662): the frame signatures' own patterns
(:func:`meshdoctor.signatures.classify_frames`, the classification a crash pasted as text into
a log gets too). A truncated or corrupted report gives what can be salvaged
with a warning; nothing here raises on bad input.

Other reports in the same folders, read the same way (the header's ``bug_type``): a kernel
panic (``"210"``: the body's ``panicString``, MD676), and a jetsam event (``"298"``, older
``"198"``: the body's ``processes`` list, whose killed entries carry a ``reason``; MD677 when an
MLX rank's process is among them, so a rank's SIGKILL reads as macOS killing it for memory).

GPU restart reports (``"284"``, written by DumpGPURestart after the GPU hung or faulted and was
restarted: MD693) and EXC_RESOURCE reports (``"385"``, a process over a CPU, wakeups, memory or
disk-writes limit: MD694) have no published body layout. From them only this is read: the
header (``bug_type``, ``name``, ``app_name``, ``timestamp``, ``os_version``, ``incident_id``),
then the body as JSON when it parses (``procName``/``process``/``name``, ``pid``,
``captureTime``/``date``, ``exception.{type,subtype,message}``, ``event``/``reason``,
``limit``, ``action``, and the words of its text values), else as ``Key: value`` text lines
(``Date/Time:``, ``Command:``/``Process:``, ``PID:``, ``Event:``, ``Action taken:``,
``Limit:``, the ``... exceeding limit of ...`` line); the summary says so
(:data:`UNDOCUMENTED`). A crash (309) whose exception type is ``EXC_RESOURCE`` is MD694 too:
killed for going over its limit (for ``MEMORY``, killed for memory), not a generic crash. A
summary's ``role`` is set where the report says more than its signature's role: an
EXC_RESOURCE whose process was killed is a ``cause`` (a rank's SIGKILL after it is its doing),
one that only warned stays ``either``.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.parsers import json_text
from meshdoctor import signatures
from meshdoctor.signatures.frames import readable_symbol
from meshdoctor.triage.logs import parse_time

MAX_BYTES = 16 << 20  # a crash report is read up to this size
TOP_FRAMES = 8  # frames of the faulting thread kept in the summary
CRASH_PREFIXES = ("python", "Python", "mlx", "exo")  # process names of MLX ranks
# jetsam, kernel panic, GPU restart and resource report names
SYSTEM_PREFIXES = ("JetsamEvent", "panic", "Kernel", "GPURestart", "ExcResource")
PANIC_TYPES = ("210",)
JETSAM_TYPES = ("298", "198")
TEXT_SUFFIX = ".crash"  # Apple's crash report text, as macOS 11 and before wrote it
GPU_RESTART_TYPES = ("284",)
RESOURCE_TYPES = ("385",)
UNDOCUMENTED = (
    "this report kind has no published layout: read from its header (bug_type, name, "
    "app_name, timestamp, os_version, incident_id) and the body's common fields (process "
    "name, pid, time, exception type and subtype, event, limit, action taken)"
)

_MLX_VERSION = re.compile(r"mlx[-_/ ]v?(\d+\.\d+\.\d+)")


def _salvage(text: str) -> Dict[str, Any]:
    """Fields found by pattern in a report that is not valid JSON."""

    def first(rx: str) -> Optional[str]:
        m = re.search(rx, text)
        return m.group(1) if m else None

    pid = first(r'"pid"\s*:\s*(\d+)')
    return {
        "procName": first(r'"procName"\s*:\s*"([^"]{0,200})"'),
        "pid": int(pid) if pid else None,
        "captureTime": first(r'"captureTime"\s*:\s*"([^"]{0,64})"'),
        "exception": {
            "type": first(r'"type"\s*:\s*"(EXC_[A-Z_]+)"'),
            "signal": first(r'"signal"\s*:\s*"(SIG[A-Z]+)"'),
        },
        "symbols": re.findall(r'"symbol"\s*:\s*"([^"]{1,300})"', text)[:64],
        "images": re.findall(r'"name"\s*:\s*"([^"]{1,200}\.dylib)"', text)[:64],
        "os": first(r'"(?:os_version|train)"\s*:\s*"([^"]{0,80})"'),
    }


def _frames(body: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(image, symbol) of the faulting thread's frames, top first."""
    images = body.get("usedImages") or []
    threads = body.get("threads") or []
    ft = body.get("faultingThread")
    thread = None
    if isinstance(ft, int) and 0 <= ft < len(threads):
        thread = threads[ft]
    else:
        thread = next((t for t in threads if isinstance(t, dict) and t.get("triggered")), None)
    out: List[Tuple[str, str]] = []
    for fr in (thread or {}).get("frames") or []:
        if not isinstance(fr, dict):
            continue
        idx = fr.get("imageIndex")
        img = ""
        if isinstance(idx, int) and 0 <= idx < len(images) and isinstance(images[idx], dict):
            img = str(images[idx].get("name") or images[idx].get("path") or "")
        out.append((img, str(fr.get("symbol") or "")))
    return out


def _thread_name(body: Dict[str, Any]) -> Optional[str]:
    """The faulting thread's name (``tokio-runtime-worker``) or dispatch queue, or None."""
    threads = body.get("threads") or []
    ft = body.get("faultingThread")
    t = threads[ft] if isinstance(ft, int) and 0 <= ft < len(threads) else None
    if not isinstance(t, dict):
        return None
    name = t.get("name") or t.get("queue")
    return str(name)[:80] if name else None


def _os(header: Dict[str, Any], body: Dict[str, Any]) -> Optional[str]:
    ov = body.get("osVersion")
    if isinstance(ov, dict):
        train, build = ov.get("train"), ov.get("build")
        if train:
            return f"{train} ({build})" if build else str(train)
    v = header.get("os_version")
    return str(v) if v else None


def _classify(
    frames: List[Tuple[str, str]], signal: Optional[str]
) -> Tuple[str, Optional[Tuple[str, str]]]:
    """The signature code for the faulting thread's frames and the frame that decided it (the
    frame signatures' own patterns, :func:`meshdoctor.signatures.classify_frames`; a native
    crash, MD662, when none names them)."""
    sig, frame = signatures.classify_frames(frames, signal)
    return (sig.code if sig is not None else "MD662"), frame


def parse(
    data: bytes, source: str
) -> Tuple[Optional[Dict[str, Any]], Optional[signatures.Match], Optional[_dt.datetime], List[str]]:
    """``(summary, match, time, warnings)`` for one report's bytes. ``summary`` is None and a
    warning says why when nothing usable is there (empty, not a crash report)."""
    warnings: List[str] = []
    if len(data) >= MAX_BYTES:
        warnings.append(f"larger than {MAX_BYTES >> 20} MiB: read the first part only")
        data = data[:MAX_BYTES]
    text = data.decode("utf-8", "replace")
    if "\x00" in text:
        warnings.append("holds NUL bytes: corrupted")
    head, _, rest = text.partition("\n")
    header = _header(head, warnings)
    kind = str(header.get("bug_type") or "")
    if kind in GPU_RESTART_TYPES + RESOURCE_TYPES:
        return _event_report(kind, header, rest, warnings)
    body = _body(rest, warnings)
    if header and not rest.strip():  # the header line alone: cut before the crash itself
        warnings.append(
            "only its header line: the body (exception, threads, images) is missing, so the "
            "report is truncated and how the process crashed is unknown"
        )
    if body and kind in PANIC_TYPES + JETSAM_TYPES:
        return _system_report(kind, header, body, warnings)
    if body:
        summary, frames, when = _crash_summary(header, body)
    else:
        salvaged = _salvaged_summary(header, text)
        if salvaged is None:
            return None, None, None, warnings + ["nothing of a crash report could be read"]
        summary, frames, when = salvaged
    if str(summary.get("exception_type") or "") == "EXC_RESOURCE" and body:
        return _resource_crash(header, body, summary, warnings)
    code, frame = _classify(frames, summary.get("signal"))
    summary["faulting_frame"] = {"image": frame[0], "symbol": frame[1]} if frame else None
    summary["top_frames"] = [f"{i} {s}".strip() for i, s in frames[:TOP_FRAMES]]
    mlx = _MLX_VERSION.search(text)
    summary["mlx_version"] = mlx.group(1) if mlx else None
    summary["signature"] = code
    time = parse_time(when) if when else None
    return summary, _crash_match(summary, code, frames, frame, body), time, warnings


def _header(head: str, warnings: List[str]) -> Dict[str, Any]:
    """The report's first line read as its JSON header (``{}`` when it is none; ``warnings``
    says why)."""
    try:
        h = json_text.loads(head)
    except json_text.TooDeep:
        warnings.append("first line nested too deeply to be the JSON header of a crash report")
        return {}
    except ValueError:
        warnings.append("first line is not the JSON header of a crash report")
        return {}
    return h if isinstance(h, dict) else {}


def _body(rest: str, warnings: List[str]) -> Dict[str, Any]:
    """The report after its header line read as its JSON body (``{}`` when it is none, cut or
    corrupted; ``warnings`` says which, the summary then salvaged from the text)."""
    try:
        b = json_text.loads(rest) if rest.strip() else None
    except json_text.TooDeep:
        warnings.append(
            "body nested too deeply to be a crash report (arrays or objects inside each other "
            "beyond Python's limit): summary salvaged from what is there"
        )
        return {}
    except ValueError as exc:
        warnings.append(
            f"truncated or corrupted body ({type(exc).__name__} at character "
            f"{getattr(exc, 'pos', '?')}): summary salvaged from what is there"
        )
        return {}
    if isinstance(b, dict):
        return b
    if b is not None:
        warnings.append("body is JSON but not an object")
    return {}


def _crash_summary(header: Dict[str, Any], body: Dict[str, Any]):
    """``(summary, frames, when)`` of a crash report whose body was read: the process, pid,
    exception, OS; the crashed thread's ``(image, symbol)`` frames; the capture time's text."""
    exc = body.get("exception") if isinstance(body.get("exception"), dict) else {}
    summary: Dict[str, Any] = {
        "process": body.get("procName") or header.get("app_name") or header.get("name"),
        "pid": body.get("pid") if isinstance(body.get("pid"), int) else None,
        "exception_type": exc.get("type"),
        "signal": exc.get("signal"),
        "os": _os(header, body),
        "bug_type": header.get("bug_type"),
    }
    when = str(body.get("captureTime") or header.get("timestamp") or "")
    return summary, _frames(body), when


def _salvaged_summary(header: Dict[str, Any], text: str):
    """``(summary, frames, when)`` salvaged from a report whose body is cut or corrupted
    (:func:`_salvage`; ``"salvaged": True``), or None when nothing of a crash report is there."""
    s = _salvage(text)
    if not (s["procName"] or s["symbols"] or s["exception"]["type"] or header):
        return None
    frames = [("", sym) for sym in s["symbols"]]
    if any("libthunderboltrdma" in i for i in s["images"]) and frames:
        frames = [
            ("libthunderboltrdma.dylib" if re.search(r"tbt_", f[1]) else "", f[1]) for f in frames
        ]
    summary = {
        "process": s["procName"] or header.get("app_name") or header.get("name"),
        "pid": s["pid"],
        "exception_type": s["exception"]["type"],
        "signal": s["exception"]["signal"],
        "os": s["os"] or header.get("os_version"),
        "bug_type": header.get("bug_type"),
        "salvaged": True,
    }
    return summary, frames, s["captureTime"] or str(header.get("timestamp") or "")


def _crash_match(
    summary: Dict[str, Any], code: str, frames, frame, body: Dict[str, Any]
) -> signatures.Match:
    """The match of a crash report classified as ``code`` (its faulting ``frame``, None when
    none was found): the line naming the process, the signal and the frame; what an unknown
    native crash means; the remedy of a whole report or of one cut before the crash."""
    sig = summary.get("signal") or summary.get("exception_type")
    # a frame whose image is not known (a salvaged report) is named by its symbol alone
    named = (frame[0], readable_symbol(frame[1])) if frame else None  # Rust v0 symbols read
    where = " in " + " ".join(x for x in named if x) if named and any(named) else ""
    pid = f"[{summary['pid']}]" if summary.get("pid") else ""
    line = f"{summary.get('process') or 'a process'}{pid} {sig or 'crashed'}{where}"
    meaning = None
    if code == "MD662" and not (sig or frames):
        meaning = (
            f"{summary.get('process') or 'A process'} crashed, but its report is cut before "
            "the exception and the threads: how and where it crashed is unknown. Find the "
            "whole report on that Mac (Console.app, DiagnosticReports) and triage it again."
        )
    elif code == "MD662":
        how = f" with {sig}" if sig else ""
        meaning = (
            f"{summary.get('process') or 'A process'} crashed{how}{where}: a native "
            "crash with no known signature. "
            + (
                "Frames in libjaccl point at JACCL (report it to MLX with this file)."
                if any("jaccl" in i for i, _ in frames[:TOP_FRAMES])
                else ""
            )
        )
    groups = {"signal": str(sig or "")}
    if where:
        groups["frame"] = where[len(" in ") :]
    thread = _thread_name(body) if body else None
    if thread:
        groups["thread"] = thread
    m = signatures.make_match(code, line, 0, meaning=meaning, groups=groups)
    if sig or frames:  # the report is here: its remedy never sends the reader to find it
        m.remedy = m.signature.report_remedy or m.remedy
    else:  # this very report is cut: what helps is a whole copy of it, not "find a report"
        m.remedy = (
            "Copy this report again, whole, from that Mac (Console.app > Crash Reports, or "
            "the DiagnosticReports folder it came from) and triage the copy."
        )
    m.context = summary["top_frames"][: signatures.CONTEXT_LINES]
    return m


def _system_report(
    kind: str, header: Dict[str, Any], body: Dict[str, Any], warnings: List[str]
) -> Tuple[Optional[Dict[str, Any]], Optional[signatures.Match], Optional[_dt.datetime], List[str]]:
    """:func:`parse` for a kernel panic (``kind`` in :data:`PANIC_TYPES`) or a jetsam event
    (:data:`JETSAM_TYPES`): the summary, the MD676/MD677 match (None with a warning when a
    jetsam event killed no MLX rank) and the report's time."""
    when = str(body.get("date") or header.get("timestamp") or "")
    time = parse_time(when) if when else None
    summary: Dict[str, Any] = {"bug_type": kind, "os": _os(header, body)}
    if kind in PANIC_TYPES:
        text = str(body.get("panicString") or "")
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        summary.update(process="kernel", panic=first[:300], signature="MD676")
        m = signatures.classify(first)
        match = next((x for x in m if x.code == "MD676"), None)
        if match is None:
            match = signatures.make_match("MD676", first or "kernel panic", 0)
        return summary, match, time, warnings
    killed = [
        p
        for p in body.get("processes") or []
        if isinstance(p, dict) and p.get("reason") and str(p.get("name") or "")
    ]
    ranks = [p for p in killed if str(p.get("name")).startswith(CRASH_PREFIXES)]
    summary.update(
        process=", ".join(str(p.get("name")) for p in ranks) or None,
        killed=[
            {"process": p.get("name"), "pid": p.get("pid"), "reason": p.get("reason")}
            for p in killed[:16]
        ],
        largest=body.get("largestProcess"),
        signature="MD677" if ranks else None,
    )
    if not ranks:
        return summary, None, time, warnings + ["a jetsam event that killed no MLX rank"]
    p = ranks[0]
    line = f"jetsam killed {p.get('name')}[{p.get('pid') or '?'}] ({p.get('reason')})"
    match = signatures.make_match(
        "MD677", line, 0, groups={"proc": str(p.get("name")), "cause": str(p.get("reason"))}
    )
    summary["pid"] = p.get("pid") if isinstance(p.get("pid"), int) else None
    return summary, match, time, warnings


def has_header(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts with a crash report's JSON header line
    (an object with a ``bug_type``): such a file is a report whatever its name."""
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{") or b"bug_type" not in first:
        return False
    try:
        h = json_text.loads(first.decode("utf-8", "replace"))
    except (ValueError, json_text.TooDeep):
        return False
    return isinstance(h, dict) and "bug_type" in h


def is_rank_report(name: str) -> bool:
    """Whether a report's file name (``<process>-<date>-<time>.ips``) is of a process that
    can be an MLX rank (python, mlx, exo; a resource report is named by its process too), or
    a jetsam, kernel panic, GPU restart or resource report (:data:`SYSTEM_PREFIXES`) that can
    explain a rank's end; a rank's crash report as text (:data:`TEXT_SUFFIX`, read as a log:
    the scanner's crash record). A file given by name is read whatever its name (its header's
    ``bug_type`` decides)."""
    base = name.rsplit("/", 1)[-1]
    if base.endswith(TEXT_SUFFIX):  # a crash report as text (macOS 11 and before): a rank's
        return base.startswith(CRASH_PREFIXES)
    return base.endswith(".ips") and base.startswith(CRASH_PREFIXES + SYSTEM_PREFIXES)


_KEY_LINE = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z /_-]{0,40}?)\s*:\s+(?P<value>\S.*?)\s*$")
_LIMIT = re.compile(
    r"exceeding limit of (?P<limit>[^\n]{1,120})|\blimit[= ]\s*(?P<l2>[\w. ]{1,40}MB)"
)
_RESOURCES = (
    ("memory", re.compile(r"\bmem(ory)?\b", re.I)),
    ("cpu", re.compile(r"\bcpu\b", re.I)),
    ("wakeups", re.compile(r"\bwakeups?\b", re.I)),
    ("disk writes", re.compile(r"\b(disk writes|io|writes)\b", re.I)),
)


def _resource(*texts: str) -> Optional[str]:
    """The resource the first of ``texts`` that names one names (the event before the
    exception before the limit before the body's other words)."""
    for text in texts:
        for name, rx in _RESOURCES:
            if rx.search(text):
                return name
    return None


def _strings(value: Any, out: List[str], budget: int = 64, depth: int = 16) -> None:
    """Up to ``budget`` string values found in a JSON value (depth-first, at most ``depth``
    levels down: a body nested deeper is not walked further), for their words."""
    if len(out) >= budget or depth <= 0:
        return
    if isinstance(value, str):
        out.append(value[:400])
    elif isinstance(value, dict):
        for v in list(value.values())[:256]:
            _strings(v, out, budget, depth - 1)
    elif isinstance(value, list):
        for v in value[:64]:
            _strings(v, out, budget, depth - 1)


def _event_fields(header: Dict[str, Any], rest: str, warnings: List[str]) -> Dict[str, Any]:
    """What a GPU restart or resource report says, read as :data:`UNDOCUMENTED` describes:
    ``process``, ``pid``, ``when``, ``exception`` (``type subtype message``), ``event``,
    ``limit``, ``action``, ``text`` (the body's words, for what the fields do not say)."""
    f: Dict[str, Any] = {}
    body: Any = None
    if rest.strip():
        try:
            body = json_text.loads(rest)
        except (ValueError, json_text.TooDeep):
            body = None
    if isinstance(body, dict):
        exc = body.get("exception") if isinstance(body.get("exception"), dict) else {}
        words: List[str] = []
        _strings(body, words)
        pid = body.get("pid")
        f.update(
            process=body.get("procName") or body.get("process") or body.get("name"),
            pid=pid if isinstance(pid, int) else None,
            when=body.get("captureTime") or body.get("date"),
            exception=" ".join(
                str(exc.get(k)) for k in ("type", "subtype", "message") if exc.get(k)
            ),
            event=body.get("event") or body.get("resource") or body.get("reason"),
            limit=body.get("limit"),
            action=body.get("action") or body.get("actionTaken"),
            text="\n".join(words),
        )
    else:
        kv: Dict[str, str] = {}
        for ln in rest.splitlines()[:400]:
            m = _KEY_LINE.match(ln)
            if m:
                kv.setdefault(m.group("key").strip().lower(), m.group("value")[:300])
        proc = kv.get("command") or kv.get("process")
        if proc:
            proc = re.sub(r"\s*\[\d+\]$", "", proc)
        pid = kv.get("pid") or ""
        f.update(
            process=proc,
            pid=int(pid) if pid.isdigit() else None,
            when=kv.get("date/time") or kv.get("date"),
            exception=kv.get("exception type") or "",
            event=kv.get("event"),
            limit=kv.get("limit"),
            action=kv.get("action taken"),
            text=rest[:20000],
        )
        if not kv and rest.strip():
            warnings.append("body is neither JSON nor 'Key: value' lines: only the header read")
    if not f.get("limit"):
        m = _LIMIT.search(str(f.get("text") or "") + "\n" + str(f.get("exception") or ""))
        if m:
            f["limit"] = (m.group("limit") or m.group("l2")).strip().rstrip(".")
    f["process"] = f.get("process") or header.get("app_name") or header.get("name")
    f["when"] = f.get("when") or header.get("timestamp")
    return {k: (str(v) if k not in ("pid",) and v is not None else v) for k, v in f.items()}


def _event_report(
    kind: str, header: Dict[str, Any], rest: str, warnings: List[str]
) -> Tuple[Optional[Dict[str, Any]], Optional[signatures.Match], Optional[_dt.datetime], List[str]]:
    """:func:`parse` for a GPU restart report (:data:`GPU_RESTART_TYPES`, MD693) or an
    EXC_RESOURCE report (:data:`RESOURCE_TYPES`, MD694; None with a warning when the process
    is not an MLX rank). Their layout is not published: see :data:`UNDOCUMENTED`."""
    if not rest.strip():
        warnings.append("only its header line: the body is missing, so the report is truncated")
    f = _event_fields(header, rest, warnings)
    when = f.get("when") or ""
    time = parse_time(when) if when else None
    summary: Dict[str, Any] = {
        "bug_type": kind,
        "os": header.get("os_version"),
        "incident_id": header.get("incident_id"),
        "process": f.get("process"),
        "pid": f.get("pid"),
        "read": UNDOCUMENTED,
    }
    pid = f"[{f['pid']}]" if f.get("pid") else ""
    if kind in GPU_RESTART_TYPES:
        what = f.get("event") or f.get("exception") or ""
        proc = f.get("process")
        if proc in ("GPURestart", "DumpGPURestart"):  # the report's own name, not a process
            proc = summary["process"] = None
        summary.update(event=what or None, signature="MD693")
        line = (
            "GPU restart"
            + (f" ({what})" if what and "restart" not in what.lower() else "")
            + (f" while {proc}{pid} ran" if proc else "")
        )
        meaning = signatures.BY_CODE["MD693"].meaning + (
            f" Here: {proc}{pid} had GPU work in flight." if proc else ""
        )
        return summary, signatures.make_match("MD693", line, 0, meaning=meaning), time, warnings
    words = " ".join(str(f.get(k) or "") for k in ("event", "exception", "limit", "text"))
    resource = _resource(*(str(f.get(k) or "") for k in ("event", "exception", "limit", "text")))
    action = str(f.get("action") or "")
    killed = bool(re.search(r"kill|terminat", action, re.I)) or bool(
        re.search(r"(?<!non-)\bfatal\b", words, re.I) and not action.lower().startswith("none")
    )
    summary.update(
        resource=resource,
        limit=f.get("limit"),
        action=action or None,
        killed=killed,
        role=signatures.CAUSE if killed else signatures.EITHER,
    )
    proc = str(f.get("process") or "")
    if proc and not proc.startswith(CRASH_PREFIXES):
        return (
            summary,
            None,
            time,
            warnings + [f"an EXC_RESOURCE report of {proc}, not an MLX rank"],
        )
    match = _resource_match(proc, pid, resource, f.get("limit"), killed, action)
    return summary, match, time, warnings


def _resource_match(
    proc: str, pid: str, resource: Optional[str], limit: Optional[str], killed: bool, action: str
) -> signatures.Match:
    """The MD694 match of a process over a ``resource`` limit, ``killed`` or not."""
    who = f"{proc or 'a process'}{pid}"
    res = resource or "a resource"
    lim = f" (limit {limit})" if limit else ""
    line = f"{who} EXC_RESOURCE {res}{lim}: " + ("killed" if killed else "not killed")
    if killed and resource == "memory":
        detail = (
            f"{who} was killed by macOS for going over its memory limit{lim}: a rank that ended "
            "with SIGKILL and no error of its own was taken by the system for memory, not by MLX."
        )
    elif killed:
        detail = f"{who} was killed by macOS for going over its {res} limit{lim}."
    else:
        detail = (
            f"{who} went over its {res} limit{lim} and macOS only reported it"
            + (f" (action taken: {action})" if action else "")
            + ": a warning, the process was not killed, so look for the first failure elsewhere."
        )
    groups = {"resource": res, "killed": "yes" if killed else "no"}
    return signatures.make_match("MD694", line, 0, meaning=detail, groups=groups)


def _resource_crash(
    header: Dict[str, Any], body: Dict[str, Any], summary: Dict[str, Any], warnings: List[str]
) -> Tuple[Optional[Dict[str, Any]], Optional[signatures.Match], Optional[_dt.datetime], List[str]]:
    """:func:`parse` for a crash (309) whose exception type is EXC_RESOURCE: the process was
    killed for going over a resource limit (``exception.subtype``: MEMORY, CPU, WAKEUPS, IO),
    MD694, not a native crash."""
    exc = body.get("exception") if isinstance(body.get("exception"), dict) else {}
    term = body.get("termination") if isinstance(body.get("termination"), dict) else {}
    words = " ".join(str(exc.get(k) or "") for k in ("subtype", "message"))
    resource = _resource(str(exc.get("subtype") or ""), str(exc.get("message") or ""))
    m = _LIMIT.search(words + " " + str(term.get("indicator") or ""))
    limit = (m.group("limit") or m.group("l2")).strip() if m else None
    pid = f"[{summary['pid']}]" if summary.get("pid") else ""
    summary.update(
        resource=resource, limit=limit, killed=True, signature="MD694", role=signatures.CAUSE
    )
    summary["exception_subtype"] = exc.get("subtype")
    match = _resource_match(str(summary.get("process") or ""), pid, resource, limit, True, "")
    when = str(body.get("captureTime") or header.get("timestamp") or "")
    return summary, match, (parse_time(when) if when else None), warnings
