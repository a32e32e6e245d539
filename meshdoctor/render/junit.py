"""``--format junit``: a verdict document as JUnit XML, for CI pipelines that gate a deployment
on meshdoctor (GitLab's ``artifacts:reports:junit``, Jenkins' JUnit plugin, GitHub actions that
publish test reports).

One ``<testsuite>`` for the command, one ``<testcase>`` per result (``classname``
``meshdoctor.COMMAND.HOST``, ``name`` ``CODE check``): ``<failure>`` for a failed result (and a
warning under ``--strict``), ``<error>`` for a result in error, ``<skipped>`` for a skipped one;
the summary is the element's ``message``, the remediation its text. The verdict and exit code are
suite properties. Written with the standard library (xml.etree.ElementTree); control characters
other than tab and newline, bidirectional controls and characters XML 1.0 cannot hold are
written as ``\\xNN`` / ``\\uNNNN``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, Dict

from meshdoctor.text import printable

# the characters XML 1.0 allows (W3C XML 1.0, section 2.2 "Characters"); anything else escaped
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """``value`` as text XML 1.0 can hold and a person can read: control and bidirectional
    characters (:func:`meshdoctor.text.printable`: DEL, C1, U+202E too, which XML allows) and
    what XML cannot hold (NUL, lone surrogates) written as ``\\xNN`` / ``\\uNNNN``."""

    def esc(m: "re.Match[str]") -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return _NOT_XML.sub(esc, printable(value))


def _kind(status: str, strict: bool) -> str:
    if status == "fail" or (strict and status == "warn"):
        return "failure"
    return {"error": "error", "skip": "skipped"}.get(status, "")


def render(doc: Dict[str, Any]) -> str:
    """The verdict document ``doc`` as a JUnit XML document (``<testsuites>`` with one
    ``<testsuite>``), UTF-8, ending in a newline."""
    command = str(doc.get("command", ""))
    strict = bool(doc.get("strict"))
    results = doc.get("results", [])
    kinds = [_kind(r.get("status", ""), strict) for r in results]
    counts = {k: kinds.count(k) for k in ("failure", "error", "skipped")}
    attrs = {
        "tests": str(len(results)),
        "failures": str(counts["failure"]),
        "errors": str(counts["error"]),
        "skipped": str(counts["skipped"]),
        "time": f"{float(doc.get('duration_s') or 0.0):.3f}",
    }
    top = ET.Element("testsuites", {"name": "meshdoctor", **attrs})
    suite = ET.SubElement(
        top,
        "testsuite",
        {"name": f"meshdoctor {command}", **attrs, "timestamp": str(doc.get("started_at", ""))},
    )
    props = ET.SubElement(suite, "properties")
    tool = doc.get("tool") or {}
    for name, value in (
        ("verdict", doc.get("verdict", "")),
        ("exit_code", doc.get("exit_code", "")),
        ("strict", str(strict).lower()),
        ("meshdoctor_version", tool.get("version", "")),
        ("needs_reboot", ",".join(doc.get("needs_reboot") or [])),
    ):
        ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})
    for r, kind in zip(results, kinds):
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": xml_text(f"meshdoctor.{command}.{r.get('host', '')}"),
                "name": xml_text(f"{r.get('code', '')} {r.get('check', '')}"),
                "time": f"{float(r.get('duration_s') or 0.0):.3f}",
            },
        )
        summary = xml_text(r.get("summary", ""))
        if kind:
            el = ET.SubElement(case, kind, {"message": summary, "type": r.get("status", "")})
            rem = r.get("remediation") or {}
            text = "\n".join(
                x for x in (rem.get("text"), rem.get("command") and f"$ {rem['command']}") if x
            )
            el.text = xml_text(text or summary)
        else:
            ET.SubElement(case, "system-out").text = xml_text(f"{r.get('status', '')}: {summary}")
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"
