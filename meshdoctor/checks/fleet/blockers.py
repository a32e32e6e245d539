"""MD409 fleet blockers: stale ranks or leftover wired memory on any host block the launch.

From each host's own checks (MD301 stale ranks, MD302 memory): a rank left from the last run
holds RDMA resources and ports, and wired memory left by a crashed JACCL run leaves too little
for the next (runbook: no leftover ranks on any node before each launch).
"""

from __future__ import annotations

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on

BLOCKERS = {"MD301": "stale ranks", "MD302": "memory"}


def run(view: FleetView):
    found = []
    for hv in view.reachable():
        for code, what in BLOCKERS.items():
            r = hv.worst(code)
            if r is None or r["status"] != "fail":
                continue
            found.append(
                on(
                    hv.host,
                    fail(
                        f"{what} on {hv.host} block the launch: {r['summary']}",
                        evidence={"from": code, "host_result": r["summary"]},
                        remediation=f"Clear {hv.host} first: {(r.get('remediation') or {}).get('text', '')}".strip(),
                        needs_reboot=bool(r.get("needs_reboot")),
                    ),
                )
            )
    return found or ok(
        f"no stale ranks or leftover wired memory on {len(view.reachable())} host(s)"
    )


FLEET_CHECK = FleetCheck(
    code="MD409",
    name="fleet.blockers",
    title="Launch blockers",
    area="procs",
    run=run,
    doc=Doc(
        meaning="""
Collects, host by host, what blocks a launch anywhere in the mesh: stale ranks (MD301) and
leftover wired memory or too little memory (MD302) on any host fail, named by host.
""",
        why="""
A rank left from the last run holds RDMA resources and ports, and wired memory left by a crashed
JACCL run leaves too little for the next: no node may have leftover ranks before a launch.
""",
        action="""
Kill the stale ranks on the hosts named (`meshdoctor fix stale-ranks`), reboot the hosts whose
wired memory does not come back.
""",
        sources=(
            "MLX #3910, #4278 (ranks that survive SIGTERM)",
            "mlx #4192, #4319 (tbt_post_recv crash, wired memory held)",
        ),
    ),
)
