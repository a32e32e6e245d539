"""The first step the NVML checks share (MD111, MD112, MD113), built from the NVML fact
(:mod:`meshdoctor.facts.nvml`): :func:`gpus_or_finding`.

A private module of ``meshdoctor.checks``: the registry skips it (its name starts with ``_``).
The facts stay free of findings; the checks speak in them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from meshdoctor.checker.model import error, skip
from meshdoctor.facts import nvml


def gpus_or_finding(ctx, remediation: Optional[str] = None) -> Tuple[Dict[str, Any], Any]:
    """``(snapshot, None)`` when NVML answered on this node, else ``({}, finding)``: a ``skip``
    without an NVIDIA driver, an ``error`` (``remediation`` attached) when NVML is unusable or
    did not answer in time. The shared first step of every GPU check."""
    snap = ctx.fact(nvml.gather_gpus)
    if not snap.get("driver"):
        return {}, skip(snap.get("reason", "no NVIDIA driver"))
    if not snap.get("nvml"):
        return {}, error(
            f"cannot read the GPUs: {snap.get('reason')}", evidence=snap, remediation=remediation
        )
    return snap, None
