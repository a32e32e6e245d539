"""MD414 fleet power: the Macs of the hostfile have the same sleep settings (``pmset -g``).

Each Mac reports ``sleep``, ``disksleep`` (minutes, 0 = never) and ``powernap`` (0/1) from
``pmset -g`` (pmset(1); :func:`meshdoctor.facts.power.power_summary`). A host whose settings
differ from the others' is named: one Mac that sleeps while the others stay awake stalls the job
with a timeout on its peers, and a sleeping node is a reported confounder of mesh failures (MLX
PR #3933 discussion). Whether sleep is on at all is each node's MD104.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Tuple

from meshdoctor import remote
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.checker.model import ok, skip, warn
from meshdoctor.codes.model import Doc
from meshdoctor.model import Remediation
from meshdoctor.facts.power import COMPARED, NEVER_SLEEP


def _settings(power: Dict[str, Any]) -> Tuple[Any, ...]:
    return tuple(power.get(k) for k in COMPARED)


def _shown(values: Tuple[Any, ...]) -> str:
    return ", ".join(f"{k} {'?' if v is None else v}" for k, v in zip(COMPARED, values))


def run(view: FleetView):
    got: Dict[str, Tuple[Any, ...]] = {}
    unread: List[str] = []
    for hv in view.reachable():
        power = hv.facts.get("power")
        if power is None:
            continue  # not a Mac (or a meshdoctor that does not report it)
        if "error" in power:
            unread.append(hv.host)  # MD104 on that host says why
            continue
        got[hv.host] = _settings(power)
    ev: Dict[str, Any] = {
        "settings": {h: dict(zip(COMPARED, v)) for h, v in got.items()},
        "unread": unread,
    }
    if len(got) < 2:
        return skip(
            f"{len(got)} Mac(s) reported their power settings: nothing to compare"
            + (f" ({', '.join(unread)} could not read pmset: see MD104 there)" if unread else ""),
            evidence=ev,
        )
    counts = Counter(got.values())
    if len(counts) == 1:
        (values,) = counts
        return ok(f"same on all {len(got)} Macs: {_shown(values)}", evidence=ev)
    (top, n), (_, second) = counts.most_common(2)
    odd = sorted(got) if n == second else [h for h, v in got.items() if v != top]
    shown = "; ".join(f"{h}: {_shown(v)}" for h, v in got.items())
    to_fix = [h for h, v in got.items() if any(x not in (0, None) for x in v)]
    commands = [c for c in (remote.shown_remedy(h, NEVER_SLEEP) for h in to_fix) if c]
    text = (
        "Make every Mac stay awake the same way: turn system sleep, disk sleep and Power Nap "
        "off where they are on"
        + (": " + ", ".join(f"`{c}`" for c in commands) if commands else "")
        + " (pmset(1); -a: every power source)."
    )
    return on(
        odd,
        warn(
            f"power settings differ across the Macs ({shown}); odd one(s) out: {', '.join(odd)}",
            evidence={**ev, "odd": odd},
            remediation=Remediation(text, command=commands[0] if len(commands) == 1 else None),
        ),
    )


FLEET_CHECK = FleetCheck(
    code="MD414",
    name="fleet.power",
    title="Sleep settings across the Macs",
    area="node",
    run=run,
    doc=Doc(
        meaning="""
Compares `pmset -g`'s `sleep`, `disksleep` (idle minutes, 0 = never) and `powernap` (0/1) across
the Macs of the hostfile. Warns when they differ, naming the host(s) whose settings differ
from the others' (every host when no setting is the majority's), with the command that turns
sleep off on each host where it is on. Hosts that are not Macs are left out; a Mac whose pmset
could not be read is named in the evidence (its MD104 says why).
""",
        why="""
One Mac that sleeps while the others stay awake stalls the job: its peers time out with no
cause named. A sleeping node is a reported confounder of mesh failures (MLX PR #3933).
""",
        action="""
Run `sudo pmset -a sleep 0 disksleep 0 powernap 0` on each Mac where they are on (`ssh HOST`
before it for a remote one).
""",
        sources=(
            "pmset(1) (sleep, disksleep, powernap; minutes, 0 = never)",
            "MLX PR #3933 (a sleeping node as a confounder)",
        ),
    ),
)
