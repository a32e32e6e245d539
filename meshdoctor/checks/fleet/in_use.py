"""MD411 fleet in use: a running job has ranks on hosts of the hostfile, said in one line.

From each host's own rank check (MD301: a rank whose launcher still runs is a running job's, a
warning there): the hosts, ranks, pids and launchers, in one finding about the whole mesh.
JACCL's queue pairs are shared with any job on the same devices (10 per device, MD204), and a
second job's collectives beside a serving deployment can break it; ``probe`` refuses to launch
on this finding unless ``--beside-running-job`` is given.
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.codes.model import Doc
from meshdoctor.checker.model import ok, warn
from meshdoctor.checker.fleet_model import FleetCheck, FleetView, on
from meshdoctor.model import CRITICAL, FAIL, WARN, Result

CODE = "MD411"


def running_jobs(view: FleetView) -> List[Dict[str, Any]]:
    """Every rank of a running job the hosts reported (MD301 warnings with a ``running_job``),
    as ``{host, pid, rank, launcher_pid, launcher, probe_run}``, in host order."""
    out = []
    for hv in view.reachable():
        for r in hv.results:
            ev = r.get("evidence") or {}
            job = ev.get("running_job")
            if r.get("code") != "MD301" or r.get("status") != "warn" or not job:
                continue
            out.append(
                {
                    "host": hv.host,
                    "pid": ev.get("pid"),
                    "rank": ev.get("rank"),
                    "launcher_pid": job.get("launcher_pid"),
                    "launcher": job.get("launcher"),
                    "probe_run": job.get("probe_run"),
                }
            )
    return out


def describe(jobs: List[Dict[str, Any]]) -> str:
    """One line naming each host's ranks and their launchers: ``h2 (rank 2 pid 4242, launched
    by pid 4240 bash)``."""
    parts = []
    for j in jobs:
        who = f"rank {j['rank'] if j['rank'] is not None else '?'} pid {j['pid']}"
        by = (
            f"meshdoctor probe run {j['probe_run']}"
            if j.get("probe_run")
            else f"launched by pid {j['launcher_pid']} {j['launcher']}"
        )
        parts.append(f"{j['host']} ({who}, {by})")
    return ", ".join(parts)


def run(view: FleetView):
    jobs = running_jobs(view)
    if not jobs:
        return ok(f"no running job on {len(view.reachable())} host(s)")
    hosts = list(dict.fromkeys(j["host"] for j in jobs))
    return on(
        hosts,
        warn(
            f"the mesh is in use: a running job has {len(jobs)} rank(s) on "
            f"{len(hosts)} host(s): {describe(jobs)}",
            evidence={"jobs": jobs},
            remediation="Let the job finish (or stop its launcher) before a probe or another "
            "launch on these hosts; `meshdoctor probe --beside-running-job` probes anyway.",
        ),
    )


def probe_gate(r: Result, override: str = "pass --beside-running-job to probe anyway") -> bool:
    """Before ``probe --hostfile`` launches: a warning of this check (a running job's ranks)
    refuses the launch, said in place as a fail naming the job, its remedy ending with
    ``override`` (the caller's way past it: the probe's option, or launch without --probe);
    True when it refuses."""
    if r.status != WARN:
        return False
    r.status, r.severity = FAIL, CRITICAL
    r.summary = "not launched: " + r.summary
    if r.remediation is not None:
        r.remediation.text = (
            "A probe beside a running job shares its RDMA devices' queue pairs and can "
            f"break it: let the job finish, or {override}."
        )
    return True


FLEET_CHECK = FleetCheck(
    code=CODE,
    name="fleet.in_use",
    title="Mesh in use",
    area="procs",
    run=run,
    probe_gate=probe_gate,
    doc=Doc(
        meaning="""
Says in one line when a running job has ranks on hosts of the hostfile (a rank whose launcher
still runs, MD301 on that host): each host, rank, pid and launcher. `meshdoctor probe` refuses
to launch then (this finding becomes a fail in its verdict, exit 1) unless
`--beside-running-job` is given.
""",
        why="""
JACCL's queue pairs are shared with any job running on the same RDMA devices (10 per device),
and a probe's collectives beside a serving deployment can starve or break it; a second launch
on the same ports fails.
""",
        action="""
Let the job finish or stop its launcher; probe beside it only on purpose
(`--beside-running-job`). `meshdoctor fix stale-ranks` leaves a running job's ranks alone
unless `--include-running` is given.
""",
        sources=(
            "MLX distributed documentation, JACCL (RDMA over Thunderbolt)",
            "MLX PR #4209 (10 queue pairs per device on Thunderbolt)",
        ),
    ),
)
