"""macOS crash reports (``.ips``, the format of macOS 12 and later): summarised and matched.

Layout (Apple, "Interpreting the JSON format of a crash report"): line 1 is a JSON header
(``bug_type`` "309" for a crash, ``timestamp``, ``os_version``, ``name``); the rest is one JSON
object with ``procName``, ``pid``, ``captureTime``, ``osVersion``, ``exception.{type,signal}``,
``faultingThread``, ``threads[i].frames[j].{imageIndex,symbol}`` and ``usedImages[k].name``.

The summary names the process, pid, exception type and signal, the faulting thread's top frames
with their images, the macOS version and any MLX version found in image paths, and the signature
that matches: ``tbt_post_recv``/``tbt_post_send`` in ``libthunderboltrdma.dylib`` (MD612, mlx
#4192), ``ibv_reg_mr`` (MD609: a missing device before MLX 0.32.1), a Metal command-buffer abort
(MD661), else a native crash (MD662). A truncated or corrupted report gives what can be salvaged
with a warning; nothing here raises on bad input.

Other reports in the same folders, read the same way (the header's ``bug_type``): a kernel
panic (``"210"``: the body's ``panicString``, MD676), and a jetsam event (``"298"``, older
``"198"``: the body's ``processes`` list, whose killed entries carry a ``reason``; MD677 when an
MLX rank's process is among them, so a rank's SIGKILL reads as macOS killing it for memory).
GPU events (``"284"``) and EXC_RESOURCE reports (``"385"``) are not read: their layout is not
publicly documented ("unknown").
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Dict, List, Optional, Tuple

from meshdoctor.parsers import json_text
from meshdoctor import signatures
from meshdoctor.triage.logs import parse_time

MAX_BYTES = 16 << 20  # a crash report is read up to this size
TOP_FRAMES = 8  # frames of the faulting thread kept in the summary
CRASH_PREFIXES = ("python", "Python", "mlx", "exo")  # process names of MLX ranks
SYSTEM_PREFIXES = ("JetsamEvent", "panic", "Kernel")  # jetsam and kernel panic report names
PANIC_TYPES = ("210",)
JETSAM_TYPES = ("298", "198")

_MLX_VERSION = re.compile(r"mlx[-_/ ]v?(\d+\.\d+\.\d+)")
_METAL = re.compile(r"MTLCommandBuffer|IOGPUMetal|kIOGPUCommandBuffer|MTLReportFailure")


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


def _os(header: Dict[str, Any], body: Dict[str, Any]) -> Optional[str]:
    ov = body.get("osVersion")
    if isinstance(ov, dict):
        train, build = ov.get("train"), ov.get("build")
        if train:
            return f"{train} ({build})" if build else str(train)
    v = header.get("os_version")
    return str(v) if v else None


def _classify(
    frames: List[Tuple[str, str]], all_text: str, signal: Optional[str]
) -> Tuple[str, Optional[Tuple[str, str]]]:
    """The signature code for these frames and the frame that decided it."""
    for img, sym in frames[:32]:
        if re.search(r"tbt_post_(recv|send)", sym) or (
            "libthunderboltrdma" in img and sym.startswith("tbt_")
        ):
            return "MD612", (img, sym)
    for img, sym in frames[:32]:
        if "ibv_reg_mr" in sym:
            return "MD609", (img, sym)
    for img, sym in frames[:32]:
        if _METAL.search(sym) or ("Metal" in img and signal == "SIGABRT"):
            return "MD661", (img, sym)
    return "MD662", (frames[0] if frames else None)


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
    header: Dict[str, Any] = {}
    body: Dict[str, Any] = {}
    try:
        h = json_text.loads(head)
        header = h if isinstance(h, dict) else {}
    except json_text.TooDeep:
        warnings.append("first line nested too deeply to be the JSON header of a crash report")
    except ValueError:
        warnings.append("first line is not the JSON header of a crash report")
    try:
        b = json_text.loads(rest) if rest.strip() else None
        if isinstance(b, dict):
            body = b
        elif b is not None:
            warnings.append("body is JSON but not an object")
    except json_text.TooDeep:
        warnings.append(
            "body nested too deeply to be a crash report (arrays or objects inside each other "
            "beyond Python's limit): summary salvaged from what is there"
        )
    except ValueError as exc:
        warnings.append(
            f"truncated or corrupted body ({type(exc).__name__} at character "
            f"{getattr(exc, 'pos', '?')}): summary salvaged from what is there"
        )
    if header and not rest.strip():  # the header line alone: cut before the crash itself
        warnings.append(
            "only its header line: the body (exception, threads, images) is missing, so the "
            "report is truncated and how the process crashed is unknown"
        )
    kind = str(header.get("bug_type") or "")
    if body and kind in PANIC_TYPES + JETSAM_TYPES:
        return _system_report(kind, header, body, warnings)
    if body:
        exc = body.get("exception") if isinstance(body.get("exception"), dict) else {}
        frames = _frames(body)
        summary: Dict[str, Any] = {
            "process": body.get("procName") or header.get("app_name") or header.get("name"),
            "pid": body.get("pid") if isinstance(body.get("pid"), int) else None,
            "exception_type": exc.get("type"),
            "signal": exc.get("signal"),
            "os": _os(header, body),
            "bug_type": header.get("bug_type"),
        }
        when = str(body.get("captureTime") or header.get("timestamp") or "")
    else:
        s = _salvage(text)
        if not (s["procName"] or s["symbols"] or s["exception"]["type"] or header):
            return None, None, None, warnings + ["nothing of a crash report could be read"]
        frames = [("", sym) for sym in s["symbols"]]
        imgs = s["images"]
        if any("libthunderboltrdma" in i for i in imgs) and frames:
            frames = [
                ("libthunderboltrdma.dylib" if re.search(r"tbt_", f[1]) else "", f[1])
                for f in frames
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
        when = s["captureTime"] or str(header.get("timestamp") or "")
    code, frame = _classify(frames, text, summary.get("signal"))
    summary["faulting_frame"] = {"image": frame[0], "symbol": frame[1]} if frame else None
    summary["top_frames"] = [f"{i} {s}".strip() for i, s in frames[:TOP_FRAMES]]
    mlx = _MLX_VERSION.search(text)
    summary["mlx_version"] = mlx.group(1) if mlx else None
    summary["signature"] = code
    time = parse_time(when) if when else None
    sig = summary.get("signal") or summary.get("exception_type")
    # a frame whose image is not known (a salvaged report) is named by its symbol alone
    where = " in " + " ".join(x for x in frame if x) if frame and any(frame) else ""
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
    m = signatures.make_match(code, line, 0, meaning=meaning, groups={"signal": str(sig or "")})
    if code == "MD662" and (sig or frames):  # the report is here: do not send for another one
        m.remedy = (
            "Read the faulting frame above: report the crash with this file to the project "
            "whose library it is in (MLX for libmlx/libjaccl), with the MLX and macOS versions."
        )
    m.context = summary["top_frames"][: signatures.CONTEXT_LINES]
    return summary, m, time, warnings


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


def is_rank_report(name: str) -> bool:
    """Whether a report's file name (``<process>-<date>-<time>.ips``) is of a process that
    can be an MLX rank (python, mlx, exo), or a jetsam or kernel panic report
    (:data:`SYSTEM_PREFIXES`) that can explain a rank's end."""
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".ips") and base.startswith(CRASH_PREFIXES + SYSTEM_PREFIXES)
