"""MD103 environment: variables left in the shell that would confuse or break a launch.

Facts (MLX jaccl sources): JACCL_* variables win over the MLX_* ones mlx.launch exports, so a
stray ``JACCL_IBV_DEVICES``/``JACCL_COORDINATOR``/``JACCL_RANK``/``JACCL_RING`` silently overrides
the launch; ``MLX_JACCL_DEVICES`` was read by mlx 0.30.3 alone; ``JACCL_PROGRESS_TIMEOUT_MS``
(alias ``MLX_JACCL_PROGRESS_TIMEOUT_MS``) is an integer in ms, 0 or negative meaning no limit;
``JACCL_TIMEOUT_ACTION`` is unset (teardown, exit status 75) or ``throw``.
``MLX_METAL_FAST_SYNCH`` is reported as set (shell or hostfile ``envs``), for the record.

More (MLX sources, 0.29.3-0.32.x):

* ``MLX_JACCL_RING``/``JACCL_RING`` turn the JACCL ring on when PRESENT, whatever the value:
  ``MLX_JACCL_RING=0`` still means the ring (mlx.launch exports ``MLX_JACCL_RING=1`` for
  jaccl-ring only).
* ``NCCL_HOST_IP``/``NCCL_PORT`` (rank 0 serves the NCCL unique id there; mlx.launch sets them
  per run, port default 12345) and ``MLX_NCCL_TIMEOUT`` (bootstrap connect, ms, default 300000,
  MLX 0.29.3+) belong to one launch; left in a shell they follow every process started from it.
* ``MLX_METAL_FAST_SYNCH`` set in this shell but not in the hostfile's ``envs``: mlx.launch gives
  ranks on other nodes only the hostfile's ``envs`` (and ``--env``), so the nodes would differ.
  The same holds for the Metal tuning variables (:data:`meshdoctor.mlx.env.METAL_TUNING`:
  command-buffer size, residency sets; MLX ``mlx/utils.h``, 0.32.x).
"""

from __future__ import annotations

import json
import os
from typing import Dict, Mapping

from meshdoctor.checker.model import Check, Doc, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.mlx.env import JACCL_OVERRIDES, METAL_TUNING, PER_RANK_MLX, RING_SWITCHES

OBSOLETE = {"MLX_JACCL_DEVICES": "read by mlx 0.30.3 only; mlx.launch exports MLX_IBV_DEVICES"}
OFF_LOOKING = ("0", "false", "no", "off", "")
NCCL_LAUNCH = {
    "NCCL_HOST_IP": "the address rank 0 serves the NCCL unique id on",
    "NCCL_PORT": "the port rank 0 serves the NCCL unique id on (mlx.launch "
    "--nccl-port, default 12345)",
}
NCCL_TIMEOUT = "MLX_NCCL_TIMEOUT"
FAST_SYNCH = "MLX_METAL_FAST_SYNCH"
TIMEOUT_VARS = ("JACCL_PROGRESS_TIMEOUT_MS", "MLX_JACCL_PROGRESS_TIMEOUT_MS")
TIMEOUT_ACTIONS = ("", "throw")
MIN_SANE_TIMEOUT_MS = 1000  # below a second, a busy peer reads as a dead one


def hostfile_envs(ctx: NodeContext) -> Dict[str, str]:
    """``envs`` of the hostfile as a dict (``K=V`` strings; malformed ones are skipped)."""
    return ctx.hostfile.env_dict() if ctx.hostfile is not None else {}


def _launch_facts(
    env: Mapping[str, str],
    launch_envs: Mapping[str, str],
    merged: Mapping[str, str],
    hostfile_given: bool,
) -> list:
    """Findings about the ring switch, NCCL launch variables and MLX_METAL_FAST_SYNCH."""
    found = []
    for k in RING_SWITCHES:
        if k in merged and merged[k].strip().lower() in OFF_LOOKING:
            where = "this shell" if k in env else "the hostfile's envs"
            found.append(
                warn(
                    f"{k}={merged[k]!r} is set in {where}: JACCL turns the ring on when the "
                    "variable is present, whatever its value, so this does not turn it off",
                    evidence={"variable": k, "value": merged[k], "rule": "presence counts"},
                    remediation=f"unset {k} (remove it from the hostfile's envs) to run the mesh; "
                    "use the jaccl-ring backend when a ring is meant.",
                )
            )
    for k, what in NCCL_LAUNCH.items():
        if k in env:
            found.append(
                warn(
                    f"{k}={env[k]!r} is set in this shell: it is {what}, set by mlx.launch for one "
                    "run; a process started from here would bootstrap NCCL against it",
                    evidence={"variable": k, "value": env[k]},
                    remediation=f"unset {k}",
                )
            )
    if NCCL_TIMEOUT in merged:
        raw = merged[NCCL_TIMEOUT]
        try:
            ms: "int | None" = int(raw.strip())
        except ValueError:
            ms = None
        if ms is None:
            found.append(
                warn(
                    f"{NCCL_TIMEOUT}={raw!r} is not an integer number of milliseconds",
                    evidence={"variable": NCCL_TIMEOUT, "value": raw},
                    remediation=f"unset {NCCL_TIMEOUT} (default 300000 ms) or set milliseconds.",
                )
            )
        elif NCCL_TIMEOUT in env and NCCL_TIMEOUT not in launch_envs:
            found.append(
                warn(
                    f"{NCCL_TIMEOUT}={ms} is set in this shell: NCCL's bootstrap connect timeout "
                    "(ms, default 300000, MLX 0.29.3+) for every rank started from here",
                    evidence={"variable": NCCL_TIMEOUT, "value": ms},
                    remediation=f"unset {NCCL_TIMEOUT}, or put it in the hostfile's envs so every "
                    "node uses the same value.",
                )
            )
    if hostfile_given and FAST_SYNCH in env and FAST_SYNCH not in launch_envs:
        # the entry to add, written as JSON (quotes and newlines escaped), as the hostfile holds it
        entry = json.dumps(f"{FAST_SYNCH}={env[FAST_SYNCH]}", ensure_ascii=False)
        found.append(
            warn(
                f"{FAST_SYNCH}={env[FAST_SYNCH]!r} is set on this node but not in the hostfile's "
                "envs: mlx.launch gives ranks on other nodes only the hostfile's envs, so the nodes "
                "would run with different settings",
                evidence={
                    "variable": FAST_SYNCH,
                    "value": env[FAST_SYNCH],
                    "hostfile_envs": sorted(launch_envs),
                },
                remediation=f"add {entry} to the hostfile's envs (or pass --env to mlx.launch), "
                "or unset it here.",
            )
        )
    if hostfile_given:
        for k, what in METAL_TUNING.items():
            if k in env and k not in launch_envs:
                entry = json.dumps(f"{k}={env[k]}", ensure_ascii=False)
                found.append(
                    warn(
                        f"{k}={env[k]!r} is set on this node but not in the hostfile's envs: it "
                        f"sets {what}, and mlx.launch gives ranks on other nodes only the "
                        "hostfile's envs, so the ranks would run with different settings",
                        evidence={"variable": k, "value": env[k], "governs": what},
                        remediation=f"add {entry} to the hostfile's envs (or pass --env to "
                        "mlx.launch), or unset it here.",
                    )
                )
    return found


def assess(env: Mapping[str, str], launch_envs: Mapping[str, str], hostfile_given: bool = False):
    """Findings for a shell environment ``env`` and the hostfile's ``launch_envs``
    (``hostfile_given``: a hostfile was passed, so node-vs-hostfile differences count).

    Returns ``(findings, merged environment)``."""
    merged = dict(env)
    merged.update(launch_envs)
    found = _launch_facts(env, launch_envs, merged, hostfile_given)
    for k in JACCL_OVERRIDES:
        if k in env:
            found.append(
                fail(
                    f"{k}={env[k]!r} is set in this shell: JACCL_* wins over what mlx.launch "
                    "exports, so every rank started from here would use it",
                    evidence={"variable": k, "value": env[k]},
                    remediation=f"unset {k} (and remove it from your shell profile).",
                )
            )
    for k in PER_RANK_MLX:
        if k in env and not (k in RING_SWITCHES and env[k].strip().lower() in OFF_LOOKING):
            found.append(
                warn(
                    f"{k}={env[k]!r} is set in this shell: it is per-rank and belongs to a launch; "
                    "a process started by hand from here would join a mesh as that rank",
                    evidence={"variable": k, "value": env[k]},
                    remediation=f"unset {k}",
                )
            )
    for k, why in OBSOLETE.items():
        if k in merged:
            found.append(
                warn(
                    f"{k} is set: {why}",
                    evidence={"variable": k},
                    remediation=f"unset {k}; upgrade MLX and let mlx.launch export "
                    "MLX_IBV_DEVICES.",
                )
            )
    for k in TIMEOUT_VARS:
        if k not in merged:
            continue
        raw = merged[k]
        try:
            ms = int(raw.strip())
        except ValueError:
            found.append(
                fail(
                    f"{k}={raw!r} is not an integer number of milliseconds",
                    evidence={"variable": k, "value": raw},
                    remediation=f"set {k} to milliseconds, e.g. 30000, or unset it.",
                )
            )
            continue
        if ms <= 0:
            found.append(
                warn(
                    f"{k}={ms}: the JACCL progress guard is disabled (no limit), so "
                    "survivors of a dead peer spin forever",
                    evidence={"variable": k, "value": ms},
                    remediation=f"unset {k} (default 30000) or set a positive value.",
                )
            )
        elif ms < MIN_SANE_TIMEOUT_MS:
            found.append(
                warn(
                    f"{k}={ms} ms: so short that a slow but live peer is declared dead",
                    evidence={"variable": k, "value": ms},
                    remediation=f"use at least {MIN_SANE_TIMEOUT_MS} ms; 30000 is the "
                    "guard's default.",
                )
            )
    action = merged.get("JACCL_TIMEOUT_ACTION")
    if action is not None and action.strip().lower() not in TIMEOUT_ACTIONS:
        found.append(
            warn(
                f"JACCL_TIMEOUT_ACTION={action!r} is not a known action "
                "(unset = teardown and exit status 75, or 'throw')",
                evidence={"variable": "JACCL_TIMEOUT_ACTION", "value": action},
                remediation="unset JACCL_TIMEOUT_ACTION or set it to throw.",
            )
        )
    return found, merged


def run(ctx: NodeContext):
    found, merged = assess(os.environ, hostfile_envs(ctx), ctx.hostfile is not None)
    if found:
        return found
    fast = merged.get("MLX_METAL_FAST_SYNCH")
    set_vars = sorted(k for k in merged if k.startswith(("MLX_", "JACCL_")))
    # what was checked: the variables known to override or break a launch (the module
    # docstring); others are named as set, not judged
    summary = "no MLX_*/JACCL_* variable known to override or break a launch"
    if fast is not None:
        summary += f"; MLX_METAL_FAST_SYNCH={fast!r}"
    other = [k for k in set_vars if k != FAST_SYNCH]
    if other:
        more = f" and {len(other) - 5} more" if len(other) > 5 else ""
        summary += f"; also set: {', '.join(other[:5])}{more}"
    return ok(summary, evidence={"set": {k: merged[k] for k in set_vars}})


CHECK = Check(
    code="MD103",
    name="node.environment",
    title="Launch environment",
    run=run,
    reports_facts=True,  # cheap and device-free: what a host runs to send its facts
    doc=Doc(
        meaning="""
Looks at the MLX_* and JACCL_* variables of the shell meshdoctor runs in (and the hostfile's
"envs") for what would confuse a launch started from it.

Fails when a JACCL_IBV_DEVICES, JACCL_COORDINATOR, JACCL_RANK or JACCL_RING is set, and when
JACCL_PROGRESS_TIMEOUT_MS is not an integer. Warns on per-rank variables left in the shell (a
stray MLX_RANK), on MLX_JACCL_DEVICES (read by mlx 0.30.3 only), on a disabled or very short
progress timeout, and on an unknown JACCL_TIMEOUT_ACTION. Also warns on MLX_JACCL_RING=0, on
NCCL_HOST_IP, NCCL_PORT or MLX_NCCL_TIMEOUT left in the shell (set by mlx.launch for one run),
and on MLX_METAL_FAST_SYNCH, or a Metal tuning variable (MLX_MAX_OPS_PER_BUFFER,
MLX_MAX_MB_PER_BUFFER: command-buffer size, GPU timeouts; MLX_RESIDENCY_SET_MAX_PCT,
MLX_METAL_RESIDENCY_REFRESH_INTERVAL_MS (MLX 0.32.4): wired memory), set on this node but missing
from the hostfile's envs.
""",
        why="""
JACCL_* variables win over the MLX_* ones mlx.launch exports, so every rank would use the stray
value. JACCL turns the ring on when MLX_JACCL_RING is present, whatever its value. mlx.launch
gives remote ranks only the hostfile's envs, so a variable set only here makes the ranks differ.
""",
        action="Unset the variables named (and remove them from shell profiles).",
        sources=(
            "mlx/_distributed_utils/launch.py (the variables mlx.launch exports)",
            "MLX mlx/distributed/jaccl (the JACCL_* variables it reads)",
            "mlx 0.30.3 (MLX_JACCL_DEVICES)",
        ),
    ),
)
