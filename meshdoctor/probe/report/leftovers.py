"""What a probe leaves behind, as results: rank processes still there after teardown (killed
now, or they survived SIGKILL), GPU memory a torn-down rank still holds, hosts whose teardown was not confirmed (they
answered, their ranks ran, but the teardown's ssh did not confirm in its bounded total: slow is
not unreachable) and hosts ssh could not reach, which never answered (:func:`leftover_results`)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from meshdoctor.hostfile.phrases import ranks_phrase
from meshdoctor.model import FAIL, OK, SKIP, WARN, Remediation, Result
from meshdoctor.probe.codes import result  # a Result titled with its probe code's entry
from meshdoctor.probe import codes as C
from meshdoctor.probe.outcome import LaunchOutcome
from meshdoctor.probe.report.view import MESH, LaunchView
from meshdoctor.text import shell_line


def _gpu_note(gpu: Optional[Dict[str, Any]]) -> str:
    """What NVML said about this host's GPUs after teardown (nccl runs), for the summary."""
    if gpu is None:
        return ""
    if not gpu.get("nvml"):
        return f"; GPU memory not checked ({gpu.get('reason')})"
    used = ", ".join(
        f"GPU {g['index']} {g['used_bytes'] / (1 << 20):.0f} MiB used" for g in gpu.get("gpus", [])
    )
    return f"; no GPU memory held by the ranks (NVML: {used})"


def _gpu_held(out: LaunchOutcome, gpu: Dict[str, Any]) -> Result:
    """A local rank's pid still charged with GPU memory after it was torn down."""
    h = gpu["held"][0]
    mib = "?" if h.get("used_bytes") is None else f"{h['used_bytes'] / (1 << 20):.0f}"
    return result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"GPU {h['gpu']} still holds {mib} MiB for pid {h['pid']} of this run "
        f"{gpu.get('waited_s', 0):.1f} s after teardown"
        + (f" (and {len(gpu['held']) - 1} more)" if len(gpu["held"]) > 1 else ""),
        host="localhost",
        evidence={"run_id": out.run_id, "gpu_after": gpu},
        remediation=Remediation(
            "The driver did not free the memory of a rank that exited: reset the GPU "
            "once nothing else uses it (a reboot if that is refused).",
            shell_line(["sudo", "nvidia-smi", "--gpu-reset", "-i", h["gpu"]]),
        ),
    )


def _kill_command(f: Dict[str, Any]) -> Optional[str]:
    """``kill -9 PID`` for a leftover found on this machine; for one on a remote host
    (``local`` False) the same through ``ssh HOST`` (:func:`meshdoctor.remote.shown_remedy`),
    so that pasted on the operator's machine it never signals an unrelated local pid."""
    from meshdoctor.remote import shown_remedy

    cmd = shell_line(["kill", "-9", f["pid"]])
    return cmd if f.get("local", True) else shown_remedy(str(f["host"]), cmd)


def _survivor_result(f: Dict[str, Any], unkillable: bool) -> Result:
    """A rank process still there after teardown (killed now, or it survived SIGKILL)."""
    return result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"pid {f['pid']} (rank {f.get('rank')}, {f.get('status')}) was "
        f"still running after teardown" + ("; it survived SIGKILL" if unkillable else "; killed"),
        host=f["host"],
        evidence=f,
        needs_reboot=unkillable,
        remediation=Remediation(
            "Reboot this host: a rank that survives SIGKILL is stuck in the driver."
            if unkillable
            else "Killed now; if it keeps happening, report the evidence.",
            None if unkillable else _kill_command(f),
        ),
    )


def _unreached_result(out: LaunchOutcome, host: str, why: str) -> Result:
    """A host ssh could not reach: never ok. With no rank of this run there it was simply not
    looked at (skip); with one, that rank may still run there (fail)."""
    # ssh exiting 255 before the rank said ready: the connection never came up
    ranks = [
        s.rank
        for s in out.ranks
        if s.host == host and s.pid is not None and not (s.ready is None and s.returncode == 255)
    ]
    if not ranks:
        return result(
            C.LEFTOVER,
            "probe.leftovers",
            SKIP,
            f"{host} could not be reached over ssh ({why}): no rank of this "
            "run ran there, and it was not checked for leftovers",
            host=host,
            evidence={"ssh": why},
        )
    return result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"could not reach {host} over ssh to stop {ranks_phrase(ranks)} and "
        f"check for leftovers: {why}",
        host=host,
        evidence={
            "ranks": ranks,
            "ssh": why,  # what is known of them
            "pids": {str(s.rank): s.pid for s in out.ranks if s.host == host and s.pid is not None},
        },
        remediation=Remediation(
            f"Once {host} answers again, look for leftover ranks there "
            f"(`{_md301_there(host)}`) and check its link (cable, port state)."
        ),
    )


def _md301_there(host: str) -> str:
    """The command that lists the ranks left on ``host``, to paste here (``ssh HOST ...``;
    the bare command when the host-name rule refuses ``host``)."""
    from meshdoctor import remote

    argv = ["meshdoctor", "check", "--only", "MD301"]
    return remote.shown_command(host, argv) or " ".join(argv)


def _unconfirmed_result(out: LaunchOutcome, host: str, how: Dict[str, Any]) -> Result:
    """A host that answered (its ranks ran) whose teardown did not confirm within its bounded
    total: its ranks may remain (fail), but it is not called unreachable."""
    pids = {s.rank: s.pid for s in out.ranks if s.host == host and s.pid is not None}
    ranks = [s.rank for s in out.ranks if s.host == host]
    known = ", ".join(
        f"rank {r}" + (f" (pid {pids[r]})" if r in pids else " (pid not known)") for r in ranks
    )
    within = how.get("within_s", 0.0)
    silent = how.get("silent_s")
    if how.get("ranks_ended"):  # each rank ended on its own: only the search is missing
        return result(
            C.LEFTOVER,
            "probe.leftovers",
            WARN,
            f"could not look for leftovers on {host} after the run ({how.get('why')}); "
            f"{known or 'its ranks'} had ended on their own before the teardown",
            host=host,
            evidence={
                "ranks": ranks,
                "pids": {str(r): p for r, p in pids.items()},
                "ssh": how.get("why"),
                "within_s": within,
                "ranks_ended": True,
            },
            remediation=Remediation(
                f"Its ranks exited, but nothing looked for processes they may have left on "
                f"{host}: look there (`{_md301_there(host)}`) once ssh to it works again."
            ),
        )
    return result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"teardown of {host} not confirmed within {within:g} s; ranks may remain: "
        f"{known or 'none known'} ({how.get('why')})"
        + (
            f"; nothing had arrived from its ranks for {silent:g} s while the other hosts "
            "were heard (its link down or its traffic dropped): not asked again"
            if silent is not None
            else ""
        ),
        host=host,
        evidence={
            "ranks": ranks,
            "pids": {str(r): p for r, p in pids.items()},
            "ssh": how.get("why"),
            "within_s": within,
            **({"silent_s": silent} if silent is not None else {}),
        },
        remediation=Remediation(
            f"{host} answered during the probe, but its teardown did not confirm in time (a "
            "loaded machine, or its link went down since): look for leftover ranks there "
            f"(`{_md301_there(host)}`) and check its link."
        ),
    )


def leftover_results(lc: LaunchView) -> List[Result]:
    """Survivors of teardown, the GPU memory check, and every host that could not be reached
    (in teardown, or when its rank could not start; adds those hosts to ``lc.unreachable``), and
    every host that answered but did not confirm its teardown (never added there)."""
    out = lc.out
    res: List[Result] = []
    stuck = {(f["host"], f["pid"]) for f in out.unkillable}
    for f in out.survivors:
        res.append(_survivor_result(f, (f["host"], f["pid"]) in stuck))
    unreached = dict(out.unreachable)
    for s in out.ranks:
        if s.host in lc.unreachable and s.host not in unreached:
            unreached[s.host] = "its rank could not be started over ssh"
    unconfirmed = {h: v for h, v in out.unconfirmed.items() if h not in unreached}
    reached = sorted({s.host for s in out.ranks} - set(unreached) - set(unconfirmed))
    if not out.survivors and reached:
        where = "" if not unreached else f" on the hosts reached ({', '.join(reached)})"
        if unconfirmed:
            where = f" on the hosts that confirmed ({', '.join(reached)})"
        gpu = out.gpu_after
        if gpu is not None and gpu.get("held"):
            res.append(_gpu_held(out, gpu))
        else:
            res.append(
                result(
                    C.LEFTOVER,
                    "probe.leftovers",
                    OK,
                    f"no rank process left after teardown{where}" + _gpu_note(gpu),
                    host=MESH,
                    evidence={"run_id": out.run_id, "hosts": reached, "gpu_after": gpu},
                )
            )
    for host, how in sorted(unconfirmed.items()):
        res.append(_unconfirmed_result(out, host, how))
    for host, why in sorted(unreached.items()):
        lc.unreachable.add(host)
        res.append(_unreached_result(out, host, why))
    return res
