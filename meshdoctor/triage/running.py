"""``meshdoctor triage --running``: what the ranks of a job that is still running are doing, on
this host (or, with a hostfile, on every host: the others over ssh, each running the same command).

The rank processes are the ones :func:`meshdoctor.ranks.find_ranks` identifies with a rank
number (``MLX_RANK`` / ``JACCL_RANK`` in their environment), without mlx.launch's own wrappers
(``bash -c SCRIPT``, ``ssh``) and without a rank's own children (which inherit its variables);
their stacks are :func:`meshdoctor.triage.stacks.capture`'s. Nothing is signalled.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from meshdoctor.hostfile.model import Hostfile
from meshdoctor.triage import stacks
from meshdoctor.model import ERROR, FAIL, OK, WARN, HostInfo, Remediation, Result, Verdict
from meshdoctor.triage.report import input_result

REMOTE_S = 60.0  # each remote host's deadline (its stack tools run under stacks.TOOL_S each)
_WRAPPERS = ("bash", "sh", "zsh", "dash", "ssh")


def _rank_processes() -> List[Any]:
    """This host's rank processes themselves (module doc), by pid."""
    from meshdoctor.ranks import find_ranks

    found = [
        rp
        for rp in find_ranks(skip_descendants=True)
        if rp.rank is not None
        and rp.rank.isdigit()
        and os.path.basename(rp.name) not in _WRAPPERS
        and not rp.reason.startswith("mlx.launch's wrapper")
    ]
    pids = {rp.pid for rp in found}
    return [rp for rp in found if rp.ppid not in pids]


def local_stacks() -> List[Dict[str, Any]]:
    """The stacks (:meth:`meshdoctor.triage.stacks.RankStack.to_dict`, with the process's
    ``cmdline``) of every rank process running on this host, in pid order."""
    procs = _rank_processes()
    pairs = [(int(rp.rank), rp.pid) for rp in procs]
    got = stacks.capture(pairs)
    return [dict(s.to_dict(), cmdline=list(rp.cmdline)) for s, rp in zip(got, procs)]


def _results(host: str, got: List[Dict[str, Any]]) -> List[Result]:
    out = []
    for s in got:
        who = f"rank {s['rank']}" if s.get("rank") is not None else "a rank"
        out.append(
            input_result(
                host=host,
                status=WARN if s.get("state") == "stopped" else OK,
                summary=f"{who} (pid {s['pid']}): {s.get('summary') or 'no stack'}",
                evidence=s,
            )
        )
    if not got:
        out.append(
            input_result(
                host=host,
                status=ERROR,
                summary="no MLX rank process is running on this host (MLX_RANK/JACCL_RANK "
                "in the environment)",
            )
        )
    return out


def run(hostfile: Optional[Hostfile] = None) -> Verdict:
    """The verdict of ``triage --running``: one result per rank process (``ok``; ``warn`` for
    a stopped one) with its stacks in the evidence, an ``error`` for a host with none, and a
    ``fail`` (MD891) first when :func:`~.stacks.order_reading` of all the ranks finds a
    collective-order mismatch; the ``triage`` section's ``running`` holds host -> stacks and
    ``order`` that reading. ``hostfile``: also every other host
    in it, over ssh (:func:`meshdoctor.fanout.run_meshdoctor`)."""
    from meshdoctor.checker.here import this_host_name

    verdict = Verdict(command="triage")
    running: Dict[str, List[Dict[str, Any]]] = {}
    here = this_host_name()
    remote: List[str] = []
    local: List[str] = []
    if hostfile is not None:  # reached as mlx.launch reaches the ranks: here only for 127.0.0.1
        from meshdoctor.hostfile.locality import reached

        reach = reached(hostfile)
        local = [n for n, mine in reach.items() if mine]
        here = local[0] if local and local[0] else here
        remote = [n for n, mine in reach.items() if not mine]
    if hostfile is None or local:
        running[here] = local_stacks()
        verdict.hosts.append(HostInfo(host=here, reachable=True))
        verdict.results.extend(_results(here, running[here]))
    if remote:
        from meshdoctor.fanout import run_meshdoctor

        replies = run_meshdoctor(remote, ["triage", "--running", "--json"], timeout=REMOTE_S)
        for host, rep in replies.items():
            doc = rep.doc or {}
            got = ((doc.get("triage") or {}).get("running") or {}).values()
            if rep.doc is None:
                verdict.hosts.append(HostInfo(host=host, reachable=rep.reachable))
                verdict.results.append(
                    input_result(
                        host=host,
                        status=ERROR,
                        summary=f"{host}: no answer: {rep.error or 'no verdict'}",
                    )
                )
                continue
            running[host] = [s for ss in got for s in ss]
            verdict.hosts.append(HostInfo(host=host, reachable=True))
            verdict.results.extend(_results(host, running[host]))
    verdict.triage = {"inputs": [], "findings": [], "first_cause": [], "running": running}
    reading = stacks.order_reading(
        [dict(s, host=host) for host, found in running.items() for s in found]
    )
    if reading is not None:
        verdict.triage["order"] = reading.to_dict()
    if reading is not None and reading.mismatch:
        from meshdoctor.triage import mismatch

        verdict.results.insert(
            0,
            Result(
                code=mismatch.CODE,
                check=mismatch.ORDER_SIG.name,
                title=mismatch.ENTRY.title,
                host="mesh",
                status=FAIL,
                summary=reading.summary,
                evidence=reading.to_dict(),
                remediation=Remediation(text=mismatch.ORDER_SIG.remedy),
            ),
        )
    return verdict
