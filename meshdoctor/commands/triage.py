"""``meshdoctor triage``: the first cause of a failed MLX job, from its logs, exit status and crash
reports."""

from __future__ import annotations

from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_PLAIN_HELP
from meshdoctor.model import Verdict
from meshdoctor.output import emit, report_to
from meshdoctor.commands.options import (
    Duration,
    hostfile_option,
    json_option,
    load_hostfile,
    output_options,
    quiet_option,
)


@click.command(
    epilog=EXIT_CODES_PLAIN_HELP + " triage: 1 when a failure was found, 0 when the inputs "
    "show none, 3 when nothing could be read.",
)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--crash-reports",
    "crash_reports",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[DIR]",
    type=click.Path(file_okay=False),
    help="Also read macOS crash reports (.ips) of python/MLX processes, and kernel panic, "
    "jetsam, GPU restart and resource reports, from DIR, or "
    "without DIR from ~/Library/Logs/DiagnosticReports and "
    "/Library/Logs/DiagnosticReports (without DIR, put it after the FILEs: "
    "a word right after it is taken as DIR).",
)
@click.option(
    "--since",
    type=Duration(),
    default=None,
    metavar="DURATION",
    help="Only crash reports newer than this (90s, 30m, 2h, 1d; default 1d).",
)
@hostfile_option(
    "Read FILEs and the recent crash reports on every host of this mlx.launch "
    "hostfile over ssh (in parallel, each host under a deadline).",
)
@click.option(
    "--exit-code",
    "exit_code",
    # what an exit status can be: 0-255 (exit(3)), or -1..-64 for a signal as Python's
    # subprocess reports it (signal(7): at most SIGRTMAX, 64 on Linux)
    type=click.IntRange(-64, 255),
    default=None,
    metavar="N",
    help="The job's exit status as the wrapper saw it, 0-255 or -1..-64 for a signal "
    "(mlx.launch's 0 proves nothing; 255, 75, -15, 137 and the like are explained).",
)
@click.option(
    "--running",
    is_flag=True,
    help="Show what the ranks of a job still running are doing: each rank's Python stack "
    "(py-spy) and native frames (eu-stack or gdb), on this host, or with --hostfile on every "
    "host.",
)
@json_option()
@quiet_option()
@output_options
def triage(
    files: tuple,
    crash_reports: Optional[str],
    since: Optional[float],
    hostfile: Optional[str],
    exit_code: Optional[int],
    as_json: bool,
    quiet: bool,
    running: bool = False,
) -> None:
    """Find the first cause of a failed MLX job in its logs, exit status and crash reports.

    Reads rank logs, mlx.launch output ('[WARN] Node with rank R exited with code C'), exo-style
    runner logs, Python tracebacks and macOS crash reports from FILEs or standard input (-), in
    bounded memory whatever their size. Every finding goes on one timeline; the earliest
    failure that explains the others is the FIRST CAUSE, the rest are marked as its
    consequences.
    """
    from meshdoctor.triage.command import run as run_triage
    from meshdoctor.triage.collect import stdin_is_piped

    hf = load_hostfile(hostfile)
    if running:
        if files or crash_reports is not None or exit_code is not None or since is not None:
            raise click.UsageError(
                "--running reads the live ranks: it takes no FILEs, --crash-reports, "
                "--since or --exit-code"
            )
        from meshdoctor.triage.running import run as run_running

        report_to(Verdict(command="triage"), as_json=as_json, quiet=quiet)  # for an internal error
        verdict = run_running(hf)
        emit(verdict, as_json=as_json, quiet=quiet)
    if not files and hf is None and stdin_is_piped():  # `... | meshdoctor triage`: read it
        files = ("-",)
    if not files and crash_reports is None and hf is None and exit_code is None:
        raise click.UsageError(
            "nothing to triage: give log FILEs, - for standard input, "
            "--crash-reports, --hostfile or --exit-code"
        )
    # mlx.launch's rule (MLX 0.32.4 launch.py): only the ssh name 127.0.0.1 runs here without
    # ssh; every other name is read over ssh, as its ranks were launched
    from meshdoctor.hostfile.locality import reached

    reach = reached(hf) if hf is not None else {}
    here = any(reach.values())
    hosts = [n for n, local in reach.items() if not local]
    report_to(Verdict(command="triage"), as_json=as_json, quiet=quiet)  # for an internal error
    verdict = run_triage(
        list(files),
        crash_reports=crash_reports,
        since_s=since,
        hosts=hosts,
        exit_code=exit_code,
        here=here,
    )
    emit(verdict, as_json=as_json, quiet=quiet)
