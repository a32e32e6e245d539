"""Parsers for "which way does this host send to an address": macOS ``route -n get IP`` and
Linux ``ip route get IP``. Pure functions; none raises on unexpected text.

Formats:

* macOS route(8), ``get`` command: ``key: value`` lines (``route to``, ``destination``,
  ``mask``, ``gateway`` when the next hop is a router, ``interface``, ``flags``), then a table
  of metrics; a lookup that finds nothing prints ``route: writing to routing socket: not in
  table`` (or ``bad address``) on stderr.
* iproute2 ip-route(8), ``get`` command: one line ``[TYPE] ADDRESS [via GATEWAY] dev IFACE
  [src ADDRESS] ...`` (TYPE e.g. ``local``, ``unreachable``, ``blackhole``; absent for unicast),
  then an indented ``cache`` line.
"""

from __future__ import annotations

from typing import Dict, Optional

ROUTE_TYPES = ("local", "broadcast", "unreachable", "prohibit", "blackhole", "throw", "multicast")


def parse_route_get(text: str) -> Dict[str, Optional[str]]:
    """macOS ``route -n get IP`` -> ``{"interface", "gateway", "destination", "mask", "flags"}``
    (values None where absent; ``interface`` None when the lookup found no route)."""
    out: Dict[str, Optional[str]] = {
        "interface": None,
        "gateway": None,
        "destination": None,
        "mask": None,
        "flags": None,
    }
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        k = key.strip().lower()
        if sep and k in out and value.strip():
            out[k] = value.strip()
    return out


def parse_ip_route_get(text: str) -> Dict[str, Optional[str]]:
    """Linux ``ip route get IP`` -> ``{"interface", "gateway", "src", "type"}`` (values None where
    absent; ``type`` ``unicast`` unless the line starts with one of :data:`ROUTE_TYPES`)."""
    out: Dict[str, Optional[str]] = {"interface": None, "gateway": None, "src": None, "type": None}
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return out
    words = lines[0].split()
    out["type"] = words[0] if words and words[0] in ROUTE_TYPES else "unicast"
    for key, name in (("dev", "interface"), ("via", "gateway"), ("src", "src")):
        if key in words:
            i = words.index(key)
            if i + 1 < len(words):
                out[name] = words[i + 1]
    return out
