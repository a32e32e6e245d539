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
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.backends import JACCL_BACKENDS


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
difference (and MLX on ring) warns. The hosts outside the majority are named.
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
        ),
    ),
)
