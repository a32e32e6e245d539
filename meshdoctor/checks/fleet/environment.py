"""MD407 fleet environment: MLX_METAL_FAST_SYNCH and the JACCL_*/MLX_* variables agree across
hosts and with the hostfile's ``envs``.

mlx.launch exports the hostfile's ``envs`` to every rank (``launch.py``), so what a rank sees is
the host's environment overridden by them. One node without ``MLX_METAL_FAST_SYNCH`` while the
others have it is a reported cause of stalls, so a disagreement there fails; other MLX_*/JACCL_*
disagreements warn. Per-rank variables (MLX_RANK, MLX_HOSTFILE, ...) are each node's own business
(MD103). The Metal tuning variables (``MLX_MAX_OPS_PER_BUFFER``, ``MLX_MAX_MB_PER_BUFFER``,
``MLX_RESIDENCY_SET_MAX_PCT``, ``MLX_METAL_RESIDENCY_REFRESH_INTERVAL_MS``:
:data:`meshdoctor.mlx.env.METAL_TUNING`) say what they govern when they differ.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Optional

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.env import METAL_TUNING, PER_RANK

CRITICAL = ("MLX_METAL_FAST_SYNCH",)


def run(view: FleetView):
    hosts = [h for h in view.reachable() if "env" in h.facts]
    if not hosts:
        return ok("no host reported its environment")
    launch = view.hostfile.env_dict()
    found = []
    effective: Dict[str, Dict[str, Optional[str]]] = {}
    keys = sorted({k for h in hosts for k in h.facts["env"]} | set(launch))
    for k in keys:
        if k in PER_RANK:
            continue
        values = {h.host: launch.get(k, h.facts["env"].get(k)) for h in hosts}
        effective[k] = values
        for h in hosts:
            shell = h.facts["env"].get(k)
            if k in launch and shell is not None and shell != launch[k]:
                found.append(
                    on(
                        h.host,
                        warn(
                            f"{k}={shell!r} in the environment of {h.host}, but the hostfile's envs say "
                            f"{launch[k]!r}: ranks from mlx.launch get {launch[k]!r}, anything started "
                            "by hand there gets the other",
                            evidence={"variable": k, "shell": shell, "hostfile": launch[k]},
                            remediation=f"Set {k} in one place: the hostfile's envs (or remove it from "
                            f"the shell profile on {h.host}).",
                        ),
                    )
                )
        if len(set(values.values())) < 2:
            continue
        counts = Counter(values.values())
        top, n = counts.most_common(1)[0]
        odd = (
            sorted(values)
            if list(counts.values()).count(n) > 1
            else [h for h, v in values.items() if v != top]
        )
        shown = ", ".join(f"{h}: {'unset' if v is None else v}" for h, v in values.items())
        mk = fail if k in CRITICAL else warn
        found.append(
            on(
                odd,
                mk(
                    f"{k} differs across hosts ({shown}); odd one(s) out: {', '.join(odd)}"
                    + (
                        f" (it sets {METAL_TUNING[k]}: ranks with different values behave "
                        "differently under the same load)"
                        if k in METAL_TUNING
                        else ""
                    ),
                    evidence={"variable": k, "values": values},
                    remediation=f'Put {k}=<value> in the hostfile\'s "envs" so mlx.launch exports it '
                    "to every rank, or set it the same way on every host"
                    + (
                        " (one node without it is a reported cause of stalls)."
                        if k in CRITICAL
                        else "."
                    ),
                ),
            )
        )
    if found:
        return found
    same = {k: next(iter(v.values())) for k, v in effective.items()}
    shown = ", ".join(f"{k}={v}" for k, v in same.items() if v is not None)
    return ok(
        f"same on all {len(hosts)} hosts"
        + (f": {shown}" if shown else " (no MLX_*/JACCL_* variables)"),
        evidence={"effective": same},
    )


FLEET_CHECK = FleetCheck(
    code="MD407",
    name="fleet.environment",
    title="Environment across hosts",
    area="env",
    run=run,
    doc=Doc(
        meaning="""
Compares the MLX_* and JACCL_* variables each host's ranks would see (the host's environment,
overridden by the hostfile's "envs", which mlx.launch exports to every rank). A
MLX_METAL_FAST_SYNCH set on some hosts and not others fails; other differences, and a shell
value that the hostfile overrides, warn. Per-rank variables are left to MD103. A differing Metal
tuning variable (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER: command-buffer size, GPU timeouts;
MLX_RESIDENCY_SET_MAX_PCT, MLX_METAL_RESIDENCY_REFRESH_INTERVAL_MS: wired memory) says what it
governs.
""",
        why="""
One node without MLX_METAL_FAST_SYNCH while the others have it is a reported cause of stalls;
other differences make the ranks of one job run with different settings.
""",
        action="""
Put shared settings in the hostfile's "envs".
""",
        sources=(
            "MLX mlx.launch (mlx/_distributed_utils/launch.py: exports the hostfile's envs "
            "to every rank)",
            "MLX mlx/distributed/jaccl (the JACCL_* variables it reads)",
        ),
    ),
)
