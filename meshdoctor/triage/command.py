"""``meshdoctor triage`` from start to verdict: gather every input, relate the findings, build
the verdict. The click command in :mod:`meshdoctor.commands.triage` only parses options and calls
:func:`run`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO, Optional, Sequence

from meshdoctor.model import HostInfo, Verdict
from meshdoctor.triage import collect
from meshdoctor.triage.collect import Collected
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
) -> Verdict:
    """Triage ``files`` (paths; ``-`` is ``stdin``), crash reports (``crash_reports``: None for
    none, :data:`DEFAULT` for the default folders, else a folder) modified in the last
    ``since_s`` seconds (default one day), and, with ``hosts``, the same files and crash
    reports on every host over ssh (in parallel, ``host_deadline_s`` each; the default folders
    are always searched there). ``exit_code`` is the job's exit status as the caller saw it."""
    verdict = Verdict(command="triage")
    col = Collected()
    since = since_s if since_s is not None else collect.DEFAULT_SINCE_S
    for path in files:
        if path == "-":
            if stdin is None:
                stdin = sys.stdin.buffer
            inp = Input(source="<stdin>", kind="stdin")
            collect.read_stream(stdin, inp, col, capped=not collect.is_regular(stdin))
        elif not hosts:
            collect.read_file(path, col)
    if hosts:
        dirs = (
            [collect.USER_REPORTS, collect.SYSTEM_REPORTS] if not crash_reports else [crash_reports]
        )
        collect.fetch_hosts(
            list(hosts), [p for p in files if p != "-"], dirs, since, col, budget_s=host_deadline_s
        )
    elif crash_reports is not None:
        explicit = crash_reports != DEFAULT
        dirs = [Path(crash_reports)] if explicit else collect.default_report_dirs()
        collect.read_report_dirs(dirs, since, col, explicit=explicit)
    for host in hosts:
        verdict.hosts.append(HostInfo(host=host, reachable=host not in col.unreachable))
    if exit_code is not None:
        collect.read_exit_code(exit_code, col)
        if exit_code == 0:
            collect.launcher_zero(col)
    return build(col, verdict)
