"""MD403 fleet versions: MLX (version and JACCL progress guard), macOS build, Python and
meshdoctor agree across the hosts.

Ranks of different MLX versions do not speak the same JACCL: the buffer sizes and counts each
connection registers changed in mlx 0.30.6, 0.31.0 and 0.32.1 (mlx #3901; ``rdma.cpp`` of each
tag), and a JACCL build with the progress guard (its library contains
``JACCL_PROGRESS_TIMEOUT_MS``) also sends from the GID it advertised instead of the fixed index 1
of upstream, so a mix of guarded and unguarded builds can use different GIDs on the two ends of a
link. A mix is therefore a failure for jaccl and jaccl-ring, and a warning for ring (its TCP
framing is stable, but survivors of a dead peer hang before 0.32.1 and fail cleanly after) and
for macOS build, Python and meshdoctor.

Apple GPU generations (``sysctl machdep.cpu.brand_string``: "Apple M5 Max" is generation 5):
from MLX 0.32.2, JACCL completions are lost when NAX (M5) and non-NAX ranks share a
tensor-parallel group and wired memory stays until reboot (MLX issue #4403, open in 0.32.4), so
a JACCL fleet on MLX 0.32.2 or later whose hosts' generations differ warns.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, List, Optional

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.parsers.macos import version_tuple

NAX_LOSS_FROM = (0, 32, 2)  # MLX issue #4403: lost JACCL completions, NAX and non-NAX ranks
_GENERATION = re.compile(r"\bM(\d+)\b")


def generation(chip: Optional[str]) -> Optional[int]:
    """The Apple silicon generation of a ``machdep.cpu.brand_string`` ("Apple M5 Max" -> 5),
    None when it names none."""
    m = _GENERATION.search(chip or "")
    return int(m.group(1)) if m else None


def _generations(view: FleetView, hosts) -> Optional[Any]:
    """A warning when a JACCL fleet on MLX 0.32.2+ mixes Apple GPU generations (MLX issue
    #4403), else None."""
    if view.backend not in JACCL_BACKENDS:
        return None
    gens = {
        h.host: generation((h.facts.get("platform") or {}).get("chip"))
        for h in hosts
        if generation((h.facts.get("platform") or {}).get("chip")) is not None
    }
    versions = [version_tuple(v) for v in (_mlx(h.facts) for h in hosts) if v and v[0].isdigit()]
    if len(set(gens.values())) < 2 or not any(v >= NAX_LOSS_FROM for v in versions):
        return None
    chips = {h.host: (h.facts.get("platform") or {}).get("chip") for h in hosts if h.host in gens}
    shown = ", ".join(f"{h}: {c}" for h, c in chips.items())
    return on(
        sorted(gens),
        warn(
            f"Apple GPU generations differ across hosts ({shown}): from MLX 0.32.2, JACCL "
            "completions are lost when NAX (M5) and non-NAX ranks share a tensor-parallel group, "
            "and wired memory stays until reboot (MLX issue #4403, open)",
            evidence={"what": "GPU generation", "chips": chips, "generations": gens},
            remediation="Keep a tensor-parallel group on one GPU generation (all M5 or none), "
            "or watch the open MLX issue #4403 for a fix; reboot a node whose wired memory stays.",
        ),
    )


def _mlx(f: dict) -> Optional[str]:
    m = f.get("mlx") or {}
    if not m:
        return None
    return m.get("version") if m.get("installed") else "not installed"


def _guard(f: dict) -> Optional[str]:
    g = (f.get("mlx") or {}).get("jaccl_guard")
    return None if g is None else ("with progress guard" if g else "without progress guard")


WHAT = [
    ("MLX", _mlx, True),
    ("JACCL build", _guard, True),
    ("macOS build", lambda f: (f.get("platform") or {}).get("build") or None, False),
    ("Python", lambda f: (f.get("platform") or {}).get("python") or None, False),
    ("meshdoctor", lambda f: f.get("meshdoctor") or None, False),
]


def _odd(values: Dict[str, str]) -> List[str]:
    """Hosts outside the most common value (all of them when there is no majority)."""
    counts = Counter(values.values())
    top, n = counts.most_common(1)[0]
    if list(counts.values()).count(n) > 1:
        return sorted(values)
    return [h for h, v in values.items() if v != top]


def run(view: FleetView):
    hosts = view.reachable()
    if len(hosts) < 2:
        return ok("fewer than two hosts answered; nothing to compare")
    jaccl = view.backend in JACCL_BACKENDS
    found, same = [], []
    for label, get, backend_breaking in WHAT:
        values = {h.host: get(h.facts) for h in hosts}
        values = {h: v for h, v in values.items() if v is not None}
        if not values:
            continue
        if len(set(values.values())) == 1:
            same.append(f"{label} {next(iter(values.values()))}")
            continue
        odd = _odd(values)
        detail = ", ".join(f"{h}: {v}" for h, v in values.items())
        breaks = backend_breaking and jaccl
        mk = fail if breaks else warn
        why = (
            (
                f"ranks of {view.backend} must run the same MLX build: buffer layout and GID "
                "choice differ between versions and guarded/unguarded builds, so init fails or "
                "deadlocks"
            )
            if breaks
            else "keep the fleet on one version so results compare"
        )
        found.append(
            on(
                odd,
                mk(
                    f"{label} differs across hosts ({detail}); odd one(s) out: {', '.join(odd)}",
                    evidence={"what": label, "values": values},
                    remediation=f"Install the same {label} on every host ({why}); e.g. "
                    "`pip install mlx==<version>` in the environment the ranks use.",
                ),
            )
        )
    mixed = _generations(view, hosts)
    if mixed is not None:
        found.append(mixed)
    return found or ok(
        "same on all hosts: " + (", ".join(same) or "nothing readable"), evidence={"same": same}
    )


FLEET_CHECK = FleetCheck(
    code="MD403",
    name="fleet.versions",
    title="Versions across hosts",
    area="versions",
    run=run,
    doc=Doc(
        meaning="""
Compares, host by host, the MLX version, whether its JACCL library has the progress guard
(JACCL_PROGRESS_TIMEOUT_MS), the macOS build, the Python version and meshdoctor's version.
For jaccl and jaccl-ring a different MLX version or a guarded/unguarded mix fails. Every other
difference (and MLX on ring) warns. The hosts outside the majority are named. A JACCL fleet on
MLX 0.32.2 or later whose Macs are of different Apple GPU generations warns: NAX (M5) and
non-NAX ranks in one tensor-parallel group lose JACCL completions (MLX issue #4403, open).
""",
        why="""
With a different MLX version or a guarded/unguarded mix, the ranks set up different buffers and
GIDs and init fails or deadlocks: the buffer sizes and counts each connection registers changed
in mlx 0.30.6, 0.31.0 and 0.32.1, and a guarded build sends from the GID it advertised instead of
the fixed index 1 of upstream.
""",
        action="""
Install one MLX version everywhere (pip install mlx==X in the ranks' environment).
""",
        sources=(
            "MLX PR #3901 (buffers registered per connection)",
            "MLX v0.30.6, v0.31.0, v0.32.1 rdma.cpp (buffer sizes and counts)",
            "JACCL progress guard PR (JACCL_PROGRESS_TIMEOUT_MS)",
            "MLX issue #4403 (NAX and non-NAX ranks lose JACCL completions, open)",
        ),
    ),
)
