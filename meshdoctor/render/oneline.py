"""``--format oneline``: a verdict document as one line of at most :data:`MAX_BYTES` bytes, for
node-problem-detector's custom plugin monitor (kubernetes/node-problem-detector,
docs/custom_plugin_monitor.md: a plugin's exit status is 0 OK, 1 NonOK, anything else
Unknown, and its stdout is cut to ``max_output_length``, 80 bytes by default). meshdoctor's
exit contract already reads that way: 0 go, 1 no-go, 2 usage, 3 could not assess.

``NO-GO MD113 gpu.health GPU 3 row remap pending (+2 more)``: the verdict, then the first
failure (fails first, then errors, then warnings under ``--strict``), its host when the run
looked at several, ``(+N more)`` for the others; ``GO 9 ok, 1 warn, 6 skip`` when nothing
failed. The summary is what gets cut, on a UTF-8 character boundary, so the line and its
newline never pass :data:`MAX_BYTES`.
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.text import one_line

MAX_BYTES = 80  # node-problem-detector's default max_output_length, newline included
WORDS = {"go": "GO", "no-go": "NO-GO", "unknown": "UNKNOWN"}
ELLIPSIS = "..."


def cut_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: max(limit, 0)].decode("utf-8", errors="ignore")


def fit(head: str, body: str, tail: str, limit: int = MAX_BYTES - 1) -> str:
    """``head + body + tail`` in at most ``limit`` bytes: ``body`` cut (with ``...``) first,
    then, if even that is too long, the whole line cut."""
    line = head + body + tail
    if len(line.encode("utf-8")) <= limit:
        return line
    room = limit - len((head + tail + ELLIPSIS).encode("utf-8"))
    if room > 0:
        return head + cut_utf8(body, room).rstrip() + ELLIPSIS + tail
    return cut_utf8(head + tail, limit)


def problems(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The results that make the verdict what it is, the first cause first: failures, errors,
    then warnings when the run was ``--strict`` (each group in the verdict's order)."""
    results = doc.get("results", [])
    order = ["fail", "error"] + (["warn"] if doc.get("strict") else [])
    return [r for status in order for r in results if r.get("status") == status]


def render(doc: Dict[str, Any]) -> str:
    """The verdict document ``doc`` as one line and a newline, at most :data:`MAX_BYTES` bytes
    of UTF-8 in all."""
    word = WORDS.get(doc.get("verdict", ""), "UNKNOWN")
    bad = problems(doc)
    multi_host = len(doc.get("hosts", [])) > 1  # fleet mode, a probe of several hosts
    if bad:
        first = bad[0]
        head = f"{word} {one_line(first.get('code', '?'))} {one_line(first.get('check', '?'))} "
        body = one_line(first.get("summary", ""))
        if multi_host:
            body = f"{one_line(first.get('host', '?'))}: {body}"
        tail = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
        return fit(head, body, tail) + "\n"
    hosts = doc.get("hosts", [])
    unreachable = [one_line(h.get("host", "?")) for h in hosts if not h.get("reachable", True)]
    if unreachable:
        return fit(f"{word} ", "unreachable: " + ", ".join(unreachable), "") + "\n"
    counts: Dict[str, int] = {}
    for r in doc.get("results", []):
        counts[r.get("status", "?")] = counts.get(r.get("status", "?"), 0) + 1
    told = ", ".join(f"{counts[s]} {s}" for s in ("ok", "warn", "skip") if counts.get(s))
    return fit(f"{word} ", told or "no results", "") + "\n"
