"""``meshdoctor triage`` from start to verdict: gather every input, relate the findings, build
the verdict. The click command in :mod:`meshdoctor.commands.triage` only parses options and calls
:func:`run`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import BinaryIO, Optional, Sequence

from meshdoctor.mlx.launch_rules import LOCAL_SSH_NAME
from meshdoctor.model import HostInfo, Verdict
from meshdoctor.triage import (
    collect,
    pasted,
    silent,
    timeline,
    unheard,
)
from meshdoctor.triage.collect import Collected
from meshdoctor.triage.entries import READINGS
from meshdoctor.triage.findings import Input
from meshdoctor.triage.report import build

DEFAULT = ""  # --crash-reports given without a folder: the default DiagnosticReports folders


def run(
    files: Sequence[str],
    *,
    crash_reports: Optional[str] = None,
    since_s: Optional[float] = None,
    hosts: Sequence[str] = (),
    exit_code: Optional[int] = None,
    stdin: Optional[BinaryIO] = None,
    host_deadline_s: float = collect.HOST_DEADLINE_S,
    here: bool = False,
) -> Verdict:
    """Triage ``files`` (paths; ``-`` is ``stdin``), crash reports (``crash_reports``: None for
    none, :data:`DEFAULT` for the default folders, else a folder) modified in the last
    ``since_s`` seconds (default one day), and, with ``hosts``, the same files and crash
    reports on every host over ssh (in parallel, ``host_deadline_s`` each; the default folders
    are always searched there). ``exit_code`` is the job's exit status as the caller saw it.
    ``here``: this machine is one of the hosts as well (a hostfile entry mlx.launch runs without
    ssh, ``127.0.0.1``): its files and crash reports are read here, never over ssh. A named
    file that exists here is always read here."""
    verdict = Verdict(command="triage")
    col = Collected()
    since = since_s if since_s is not None else collect.DEFAULT_SINCE_S
    current = "the inputs"  # what was being read when an interrupt came
    try:
        for path in files:
            current = "<stdin>" if path == "-" else path
            if path == "-":
                if stdin is None:
                    stdin = sys.stdin.buffer
                inp = Input(source="<stdin>", kind="stdin")
                collect.read_stream(stdin, inp, col, capped=collect.is_device(stdin))
            elif not hosts or here or os.path.exists(path):
                collect.read_file(path, col)
        if hosts:
            current = "the hosts' files and crash reports"
            dirs = (
                [collect.USER_REPORTS, collect.SYSTEM_REPORTS]
                if not crash_reports
                else [crash_reports]
            )
            collect.fetch_hosts(
                list(hosts),
                [p for p in files if p != "-"],
                dirs,
                since,
                col,
                budget_s=host_deadline_s,
            )
        if (here or not hosts) and (crash_reports is not None or here):
            explicit = crash_reports not in (None, DEFAULT)
            dirs = [Path(crash_reports)] if explicit else collect.default_report_dirs()
            collect.read_report_dirs(dirs, since, col, explicit=explicit)
    except KeyboardInterrupt as exc:  # what was read so far is reported, with the interrupt
        from meshdoctor import execute

        execute.stop_all(final=True)
        col.add(
            Input(
                source=current,
                error=f"interrupted by {str(exc) or 'SIGINT'} while reading it: what came "
                "after was not read; every command meshdoctor had started was stopped",
            ),
            [],
        )
    if here:
        verdict.hosts.append(HostInfo(host=LOCAL_SSH_NAME, reachable=True))
    for host in hosts:
        verdict.hosts.append(HostInfo(host=host, reachable=host not in col.unreachable))
    if exit_code is not None:
        collect.read_exit_code(exit_code, col)
        if exit_code == 0:
            collect.launcher_zero(col)
    timeline.settle_exits(col.findings)  # a survivor's exit 1 follows its lost-peer traceback
    col.findings.extend(silent.suspects(col.inputs, col.findings, col.unreachable))  # MD691
    col.findings.extend(silent.wedged(col.inputs, col.findings))  # MD872, hung after a reset
    col.findings.extend(unheard.suspects(col.inputs, col.findings))  # MD691, one combined log
    pasted.decide(col.inputs, col.findings)  # MD689 decided by a pasted rdma_ctl/ibv transcript
    for read in READINGS:  # triage's own readings across the inputs, in their order
        col.findings.extend(read(col.inputs, col.findings))
    return build(col, verdict)
