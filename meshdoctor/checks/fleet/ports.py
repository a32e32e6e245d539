"""MD408 fleet ports: the JACCL coordinator port on rank 0 and the ring ports are free.

mlx.launch (``launch.py``, mlx 0.32.4) has rank 0 listen on ``--starting-port`` (default
:data:`meshdoctor.mlx.ports.STARTING_PORT`) as the JACCL coordinator, and for ring gives each IP
of each rank its own port counting up from the same start (:func:`meshdoctor.mlx.ports.ring_ports`).
A port already taken (often by a stale rank of the last run) makes init fail with ``Couldn't bind
socket`` or connect the ranks to the wrong process.
"""

from __future__ import annotations

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import fail, ok, skip, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.mlx.ports import STARTING_PORT


def run(view: FleetView):
    found, free = [], 0
    for hv in view.reachable():
        ports = hv.facts.get("ports")
        if ports is None:
            err = (hv.facts.get("errors") or {}).get("ports")
            if err:
                found.append(
                    on(hv.host, warn(f"could not read the listening ports on {hv.host}: {err}"))
                )
            continue
        for port in ports.get("needed") or []:
            who = (ports.get("busy") or {}).get(str(port))
            if who is None:
                free += 1
                continue
            role = (
                "JACCL coordinator port (rank 0)"
                if view.backend.startswith("jaccl")
                else "ring port"
            )
            found.append(
                on(
                    hv.host,
                    fail(
                        f"{role} {port} is already in use on {hv.host} by {who}",
                        evidence={"port": port, "by": who},
                        remediation=f"Stop what listens on {port} on {hv.host} (a stale rank: "
                        "`meshdoctor check --only MD301` there lists them), or launch with "
                        "another --starting-port.",
                    ),
                )
            )
    if found:
        return found
    if not free:
        return skip("no launch ports to check for this backend")
    return ok(f"{free} launch port(s) free")


FLEET_CHECK = FleetCheck(
    code="MD408",
    name="fleet.ports",
    title="Launch ports",
    area="ports",
    run=run,
    doc=Doc(
        meaning=f"""
The JACCL coordinator port ({STARTING_PORT}, mlx.launch --starting-port) must be free on rank 0, and for
ring each rank's ports (one per IP, counting up from the same start) on its host. Fails naming
the host, the port and the process holding it.
""",
        why="""
A port already taken (often by a stale rank of the last run) makes init fail with "Couldn't bind
socket" or connect the ranks to the wrong process.
""",
        action="""
Stop the process (often a stale rank), or launch with another --starting-port.
""",
        sources=(
            "MLX v0.32.4 mlx.launch (mlx/_distributed_utils/launch.py: --starting-port, "
            f"default {STARTING_PORT})",
        ),
    ),
)
