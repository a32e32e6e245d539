"""MD103 environment: variables left in the shell that would confuse or break a launch.

Facts (mlx jaccl sources, mlx 0.31.2+): JACCL_* variables win over the MLX_* ones mlx.launch exports, so a
stray ``JACCL_IBV_DEVICES``/``JACCL_COORDINATOR``/``JACCL_RANK``/``JACCL_RING`` silently overrides
the launch; ``MLX_JACCL_DEVICES`` was read by mlx 0.30.3 alone; ``JACCL_PROGRESS_TIMEOUT_MS``
(alias ``MLX_JACCL_PROGRESS_TIMEOUT_MS``) is an integer in ms, 0 or negative meaning no limit;
``JACCL_TIMEOUT_ACTION`` is unset (teardown, exit status 75) or ``throw``.
``MLX_METAL_FAST_SYNCH`` is reported as set (shell or hostfile ``envs``), for the record.
"""

from __future__ import annotations

import os
from typing import Dict, Mapping

from meshdoctor.check import Check, fail, ok, warn
from meshdoctor.context import NodeContext

OVERRIDING = ("JACCL_IBV_DEVICES", "JACCL_COORDINATOR", "JACCL_RANK", "JACCL_RING")
PER_RANK = ("MLX_RANK", "MLX_HOSTFILE", "MLX_IBV_DEVICES", "MLX_JACCL_COORDINATOR",
            "MLX_JACCL_RING", "MLX_WORLD_SIZE")
OBSOLETE = {"MLX_JACCL_DEVICES": "read by mlx 0.30.3 only; mlx.launch exports MLX_IBV_DEVICES"}
TIMEOUT_VARS = ("JACCL_PROGRESS_TIMEOUT_MS", "MLX_JACCL_PROGRESS_TIMEOUT_MS")
TIMEOUT_ACTIONS = ("", "throw")
MIN_SANE_TIMEOUT_MS = 1000  # below a second, a busy peer reads as a dead one


def hostfile_envs(ctx: NodeContext) -> Dict[str, str]:
    """``envs`` of the hostfile as a dict (``K=V`` strings; malformed ones are skipped)."""
    return ctx.hostfile.env_dict() if ctx.hostfile is not None else {}


def assess(env: Mapping[str, str], launch_envs: Mapping[str, str]):
    """Findings for a shell environment ``env`` and the hostfile's ``launch_envs``."""
    merged = dict(env)
    merged.update(launch_envs)
    found = []
    for k in OVERRIDING:
        if k in env:
            found.append(fail(
                f"{k}={env[k]!r} is set in this shell: JACCL_* wins over what mlx.launch "
                "exports, so every rank started from here would use it",
                evidence={"variable": k, "value": env[k]},
                remediation=f"unset {k} (and remove it from your shell profile)."))
    for k in PER_RANK:
        if k in env:
            found.append(warn(
                f"{k}={env[k]!r} is set in this shell: it is per-rank and belongs to a launch; "
                "a process started by hand from here would join a mesh as that rank",
                evidence={"variable": k, "value": env[k]}, remediation=f"unset {k}"))
    for k, why in OBSOLETE.items():
        if k in merged:
            found.append(warn(f"{k} is set: {why}", evidence={"variable": k},
                              remediation=f"unset {k}; upgrade MLX and let mlx.launch export "
                              "MLX_IBV_DEVICES."))
    for k in TIMEOUT_VARS:
        if k not in merged:
            continue
        raw = merged[k]
        try:
            ms = int(raw.strip())
        except ValueError:
            found.append(fail(f"{k}={raw!r} is not an integer number of milliseconds",
                              evidence={"variable": k, "value": raw},
                              remediation=f"set {k} to milliseconds, e.g. 30000, or unset it."))
            continue
        if ms <= 0:
            found.append(warn(f"{k}={ms}: the JACCL progress guard is disabled (no limit), so "
                              "survivors of a dead peer spin forever",
                              evidence={"variable": k, "value": ms},
                              remediation=f"unset {k} (default 30000) or set a positive value."))
        elif ms < MIN_SANE_TIMEOUT_MS:
            found.append(warn(f"{k}={ms} ms: so short that a slow but live peer is declared dead",
                              evidence={"variable": k, "value": ms},
                              remediation=f"use at least {MIN_SANE_TIMEOUT_MS} ms; 30000 is the "
                              "guard's default."))
    action = merged.get("JACCL_TIMEOUT_ACTION")
    if action is not None and action.strip().lower() not in TIMEOUT_ACTIONS:
        found.append(warn(f"JACCL_TIMEOUT_ACTION={action!r} is not a known action "
                          "(unset = teardown and exit status 75, or 'throw')",
                          evidence={"variable": "JACCL_TIMEOUT_ACTION", "value": action},
                          remediation="unset JACCL_TIMEOUT_ACTION or set it to throw."))
    return found, merged


def run(ctx: NodeContext):
    found, merged = assess(os.environ, hostfile_envs(ctx))
    if found:
        return found
    fast = merged.get("MLX_METAL_FAST_SYNCH")
    set_vars = sorted(k for k in merged if k.startswith(("MLX_", "JACCL_")))
    summary = "no stray MLX_*/JACCL_* variables"
    if fast is not None:
        summary += f"; MLX_METAL_FAST_SYNCH={fast}"
    return ok(summary, evidence={"set": {k: merged[k] for k in set_vars}})


CHECK = Check(
    code="MD103", name="node.environment", title="Launch environment", run=run,
    explain="""
Looks at the MLX_* and JACCL_* variables of the shell meshdoctor runs in (and the hostfile's
"envs") for what would confuse a launch started from it.

Fails when a JACCL_IBV_DEVICES, JACCL_COORDINATOR, JACCL_RANK or JACCL_RING is set: JACCL_*
variables win over the MLX_* ones mlx.launch exports, so every rank would use the stray value;
and when JACCL_PROGRESS_TIMEOUT_MS is not an integer. Warns on per-rank variables left in the
shell (a stray MLX_RANK), on MLX_JACCL_DEVICES (read by mlx 0.30.3 only), on a disabled or
very short progress timeout, and on an unknown JACCL_TIMEOUT_ACTION.

What to do: unset the variables named (and remove them from shell profiles).
""")
