"""MD207 competing network manager: something on this Mac known to rewrite its Thunderbolt
networking behind mlx.distributed_config's back.

Known: exo's LaunchDaemon ``io.exo.networksetup`` (``/Library/LaunchDaemons/io.exo.networksetup
.plist``, exo PR #1270: at boot and periodically it destroys bridge0 and disables Thunderbolt
Bridge; exo #2067: its script re-creates network services on the Thunderbolt ports), asked with
``launchctl print system/LABEL`` (launchctl(1): exit 0 when the service is loaded); and the exo
app's process ``EXO`` (exo PR #1222: it watches and changes the Thunderbolt Bridge).
"""

from __future__ import annotations

from typing import List, Tuple

from meshdoctor.proctable import psutil

from meshdoctor.checker.model import Check, Doc, ok, skip, warn

# (launchd label, what it does, public source)
DAEMONS: Tuple[Tuple[str, str, str], ...] = (
    (
        "io.exo.networksetup",
        "destroys bridge0 and rewrites the Thunderbolt network services at boot and periodically",
        "exo PR #1270, exo #2067",
    ),
)
# (process name, what it does, public source)
PROCESSES: Tuple[Tuple[str, str, str], ...] = (
    ("EXO", "watches and changes the Thunderbolt Bridge", "exo PR #1222"),
)


def run(ctx):
    found: List[str] = []
    evidence = {"daemons": [], "processes": []}
    unknown = []
    for label, what, src in DAEMONS:
        r = ctx.command("launchctl", "print", f"system/{label}")
        if r.missing:
            unknown.append("launchctl")
            continue
        if r.ok:
            found.append(f"LaunchDaemon {label} is loaded: it {what} ({src})")
            evidence["daemons"].append(label)
    names = {n for n, _, _ in PROCESSES}
    for p in psutil.process_iter(["pid", "name"]):
        name = p.info.get("name")
        if name in names:
            what, src = next((w, s) for n, w, s in PROCESSES if n == name)
            found.append(f"process {name} (pid {p.info['pid']}) runs: it {what} ({src})")
            evidence["processes"].append({"name": name, "pid": p.info["pid"]})
    if found:
        return warn(
            "a competing network manager rewrites this Mac's Thunderbolt networking: "
            + "; ".join(found),
            evidence=evidence,
            remediation="Unload it while the mesh runs (`sudo launchctl bootout "
            "system/io.exo.networksetup` for exo's daemon; quit the EXO app), or expect "
            "mlx.distributed_config's setup to be undone; then run auto-setup once again.",
        )
    if unknown and not evidence["processes"]:
        return skip("cannot ask launchd (no launchctl); no known process found")
    return ok("no known competing network manager (exo's LaunchDaemon, the EXO app)")


CHECK = Check(
    code="MD207",
    name="thunderbolt.network_manager",
    title="Competing network manager",
    run=run,
    platforms=("darwin",),
    doc=Doc(
        meaning="""
Names a LaunchDaemon or process on this Mac known to rewrite its Thunderbolt networking: exo's
LaunchDaemon io.exo.networksetup (`launchctl print system/io.exo.networksetup`), the EXO app's
process. Either found warns, naming it and what it does.
""",
        why="""
exo's LaunchDaemon takes bridge0 down and re-creates the Thunderbolt interfaces' network
services at boot and periodically (exo PR #1270, #2067), undoing what
`mlx.distributed_config --auto-setup` set up: the mesh works, then drifts.
""",
        action="""
Unload the daemon (`sudo launchctl bootout system/io.exo.networksetup`) or quit the app while
an MLX mesh uses the cables; run auto-setup once afterwards.
""",
        sources=(
            "exo PR #1270 (Thunderbolt Bridge LaunchDaemon io.exo.networksetup)",
            "exo #2067 (its script rewrites the Thunderbolt network services)",
            "exo PR #1222 (the app watches the Thunderbolt Bridge)",
            "launchctl(1)",
        ),
    ),
)
