"""Parsers for macOS command output: ``sw_vers``, ``vm_stat``, ``sysctl``, ``pmset -g``.

Formats: Apple's and rdma-core's tool output. Every parser takes text and returns data; none raises on unexpected
text (lines it cannot read are skipped, missing values are absent from the result).
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

_PAGE_SIZE = re.compile(r"page size of (\d+) bytes")
_VM_LINE = re.compile(r"^\s*([^:]+):\s*(\d+)\.?\s*$")


def parse_sw_vers(text: str) -> Dict[str, str]:
    """``ProductName:``/``ProductVersion:``/``BuildVersion:`` lines -> dict of those keys."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and value.strip():
            out[key.strip()] = value.strip()
    return out


def version_tuple(text: str) -> Tuple[int, ...]:
    """``"26.3.1"`` -> ``(26, 3, 1)``; non-numeric parts end the tuple; ``""`` -> ``()``."""
    parts = []
    for p in re.split(r"[.\-+]", (text or "").strip()):
        m = re.match(r"\d+", p)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def parse_vm_stat(text: str) -> Dict[str, int]:
    """``vm_stat`` -> ``{"page_size": bytes, "<counter name>": pages, ...}``.

    The first line gives the page size (``(page size of 16384 bytes)``); each counter line is
    ``Pages wired down:    <n>.``. Keys are the counter names as printed (``Pages wired down``).
    """
    out: Dict[str, int] = {}
    for line in (text or "").splitlines():
        m = _PAGE_SIZE.search(line)
        if m:
            out["page_size"] = int(m.group(1))
            continue
        m = _VM_LINE.match(line)
        if m:
            out[m.group(1).strip()] = int(m.group(2))
    return out


def wired_bytes(vm: Dict[str, int]) -> Optional[int]:
    """Wired memory in bytes from :func:`parse_vm_stat` output, or None if unreadable."""
    if "page_size" not in vm or "Pages wired down" not in vm:
        return None
    return vm["page_size"] * vm["Pages wired down"]


def parse_sysctl(text: str) -> Dict[str, str]:
    """``name: value`` (or ``name = value``) lines -> dict; ``sysctl -n`` output has no names."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^\s*([\w.\-]+)\s*[:=]\s*(.*?)\s*$", line)
        if m and "." in m.group(1):
            out[m.group(1)] = m.group(2)
    return out


def to_int(text: Optional[str]) -> Optional[int]:
    """An integer from text such as ``"68719476736"``; None when it is not one."""
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


_PMSET_LINE = re.compile(r"^\s+(\S(?:.*?\S)?)\s+(-?\d+|\S+)(?:\s+\((.*)\))?\s*$")


def parse_pmset(text: str) -> Dict[str, Dict[str, Any]]:
    """``pmset -g`` -> ``{setting: {"value": int | str, "note": str}}``.

    Apple's pmset(1) prints the settings in use as indented ``name  value`` lines after
    ``Currently in use:`` (`` sleep                1 (sleep prevented by sharingd)``,
    `` disksleep            10``, `` powernap             1``, `` hibernatefile /var/vm/sleepimage``);
    a name may hold spaces (``Sleep On Power Button 1``). Timer values (``sleep``,
    ``disksleep``, ``displaysleep``) are minutes, 0 = never; flags (``powernap``, ``standby``)
    are 0/1. A value that is a number is an int; ``note`` is the text in parentheses after it
    (why sleep is prevented now), '' when none. Heading lines (not indented) are skipped.
    """
    out: Dict[str, Dict[str, Any]] = {}
    for line in (text or "").splitlines():
        m = _PMSET_LINE.match(line)
        if not m:
            continue
        name, raw, note = m.group(1), m.group(2), (m.group(3) or "").strip()
        value: Any = int(raw) if re.fullmatch(r"-?\d+", raw) else raw
        out[name] = {"value": value, "note": note}
    return out
