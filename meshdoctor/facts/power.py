"""The power-management fact of a Mac: the ``pmset -g`` settings in use.

A Mac that sleeps mid-job takes its rank with it, and a sleeping node is a reported confounder of
mesh failures (MLX PR #3933 discussion). Apple's pmset(1): ``sleep`` is the system sleep timer,
``disksleep`` the disk spin-down timer (minutes, 0 = never), ``powernap`` whether the Mac wakes
from sleep for Power Nap (0/1). Read through ``ctx.command`` under the command deadline; the
parsing is :func:`meshdoctor.parsers.macos.parse_pmset`.
"""

from __future__ import annotations

from typing import Any, Dict

from meshdoctor.facts.context import NodeContext, hang_proven
from meshdoctor.parsers.macos import parse_pmset

PMSET = ("pmset", "-g")
# the settings compared across the fleet (MD414) and set by the remedy
COMPARED = ("sleep", "disksleep", "powernap")
NEVER_SLEEP = "sudo pmset -a sleep 0 disksleep 0 powernap 0"


def gather_power(ctx: NodeContext) -> Dict[str, Any]:
    """``pmset -g`` on this Mac (use as ``ctx.fact(gather_power)``).

    Returns ``{"readable": bool, "settings": {name: int | str}, "notes": {name: str},
    "detail": str, "timed_out": bool, "hang": bool}``: ``settings`` as pmset prints them
    (minutes for the timers, 0/1 for flags), ``notes`` the text in parentheses after a value
    (``sleep prevented by sharingd``); ``detail`` why it is not readable; ``hang`` when the
    command overran a deadline long enough to prove a hang
    (:func:`meshdoctor.facts.context.hang_proven`), ``timed_out`` for any overrun.
    """
    res = ctx.command(*PMSET)
    out: Dict[str, Any] = {
        "readable": False,
        "settings": {},
        "notes": {},
        "detail": "",
        "timed_out": bool(res.timed_out),
        "hang": hang_proven(res),
    }
    if not res.ok:
        out["detail"] = res.describe()
        return out
    parsed = parse_pmset(res.stdout)
    out["settings"] = {k: v["value"] for k, v in parsed.items()}
    out["notes"] = {k: v["note"] for k, v in parsed.items() if v["note"]}
    if not isinstance(out["settings"].get("sleep"), int):
        out["detail"] = "`pmset -g` printed no numeric `sleep` line"
        return out
    out["readable"] = True
    return out


def power_summary(ctx: NodeContext) -> Dict[str, Any]:
    """The part of :func:`gather_power` the fleet compares (:data:`COMPARED`), for
    :mod:`meshdoctor.facts.summary`: ``{"sleep": int, "disksleep": int, "powernap": int,
    "notes": {...}}`` (a setting pmset did not print is absent), or ``{"error": str}``."""
    got = ctx.fact(gather_power)
    if not got["readable"]:
        return {"error": got["detail"]}
    out: Dict[str, Any] = {k: got["settings"][k] for k in COMPARED if k in got["settings"]}
    if got["notes"]:
        out["notes"] = {k: v for k, v in got["notes"].items() if k in COMPARED}
    return out
