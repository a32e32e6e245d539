"""``meshdoctor launch``: the gate, then the job through the real mlx.launch, and an honest exit
status."""

from __future__ import annotations

import sys
from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_HELP
from meshdoctor.mlx.backends import BACKENDS
from meshdoctor.commands.options import (
    check_environment,
    command_interrupts,
    Duration,
    hostfile_option,
    hosts_option,
    json_file_option,
    load_hostfile,
    no_check_option,
    one_host_source,
    OutputFile,
    yes_option,
)

EPILOG = (
    (
        "Exit status: the job's. 0 when every rank exited 0; else the first failing rank's status "
        "as mlx.launch reported it (a signal N as 128+N: 137 for SIGKILL), never 0 when a rank "
        "failed (mlx.launch itself exits 0 then); 124 when --hang-after caught a hang; mlx.launch's "
        "own non-zero status (2: its usage error) passed through. Before the job: 1 when the gate "
        "said no-go, 2 for a usage error, 3 when the gate could not assess or on an interrupt "
        "(Ctrl-C is forwarded to mlx.launch, the ranks are stopped, --json is still written). "
    )
    + EXIT_CODES_HELP.split(":", 1)[0]
    + " of the gate: see `meshdoctor check --help`."
)


@click.command(
    epilog=EPILOG,
    context_settings={"allow_interspersed_args": False},
)
@hostfile_option(
    "The mlx.launch hostfile (JSON), checked then given to mlx.launch as it is "
    "('-': read it from standard input).",
    stdin=True,
)
@hosts_option(
    "Hosts instead of a hostfile (mlx.launch --hosts), one rank each.",
    metavar="A,B,C",
)
@click.option(
    "--backend",
    type=click.Choice(list(BACKENDS)),
    default=None,
    help="mlx.launch's --backend (default: the hostfile's, else mlx.launch's own choice).",
)
@click.option(
    "--probe",
    "probe_size",
    default=None,
    metavar="SIZE",
    help="Also probe the mesh in the gate: one all_sum of SIZE per rank (4096, 64MiB).",
)
@no_check_option("Skip the gate: run the job at once.")
@click.option(
    "--fix",
    is_flag=True,
    help="After a failure, plan `fix stale-ranks` for ranks left behind (apply with --yes).",
)
@yes_option("With --fix: apply the plan.")
@json_file_option(
    "Write the verdict (gate, job, ranks, triage, stacks, cleanup) as one JSON document "
    "to FILE (the job's stdout stays the job's)."
)
@click.option(
    "--log",
    "log_path",
    default=None,
    metavar="FILE",
    type=OutputFile(),
    help="Also write the job's whole output (stdout and stderr, as read) to FILE.",
)
@click.option(
    "--hang-after",
    type=Duration(),
    default=None,
    metavar="DURATION",
    help="When no output came and no rank ended for DURATION (90s, 5m), capture every "
    "rank's stacks (py-spy; eu-stack or gdb) and stop the job.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
def launch(
    hostfile: Optional[str],
    hosts: Optional[str],
    backend: Optional[str],
    probe_size: Optional[str],
    no_check: bool,
    fix: bool,
    yes: bool,
    json_path: Optional[str],
    log_path: Optional[str],
    hang_after: Optional[float],
    command: tuple,
) -> None:
    """Gate the mesh, then run COMMAND on every rank with the installed MLX's mlx.launch.

    The gate is `meshdoctor check` on the same hosts (and a probe with --probe); a no-go
    starts nothing. The job's stdout and stderr pass through unchanged; meshdoctor's own lines
    go to stderr, starting `meshdoctor:`. When a rank fails, the ranks still running a moment
    later are stopped and named, the output is triaged and the first cause printed.
    """
    interrupts = command_interrupts("launch")
    one_host_source(**{"--hostfile": hostfile, "--hosts": hosts})
    if command[:1] == ("--",):
        command = command[1:]
    if not command:
        raise click.UsageError("no COMMAND: meshdoctor launch [OPTIONS] -- COMMAND [ARGS]...")
    if yes and not fix:
        raise click.UsageError("--yes applies the plan of --fix: give --fix too")
    if probe_size is not None and no_check:
        raise click.UsageError("--probe is part of the gate, which --no-check skips")
    if probe_size is not None and hostfile is None and hosts is None:
        raise click.BadParameter(
            "needs --hostfile or --hosts (a mesh to probe)", param_hint="--probe"
        )
    if probe_size is not None:
        from meshdoctor.probe.sizes import parse_size

        try:
            parse_size(probe_size)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--probe") from None
    if not no_check:  # the variables the gate reads
        check_environment()
    hf = load_hostfile(hostfile)
    if hosts is not None:
        from meshdoctor.hostfile.load import HostfileError, from_list

        try:  # a list that cannot be used is a usage error here, not in the gate
            from_list(hosts)
        except HostfileError as exc:
            raise click.BadParameter(str(exc), param_hint="--hosts") from None
    from meshdoctor.launch import api, locate
    from meshdoctor.output import program

    req = api.LaunchRequest(
        command=tuple(command),
        hostfile=hf,
        hosts=hosts,
        backend=backend,
        probe_size=probe_size,
        check=not no_check,
        fix=fix,
        yes=yes,
        log=log_path,
        hang_after=hang_after,
        rerun=(program(), *sys.argv[1:]),
    )
    from meshdoctor.probe.errors import ProbeSetupError

    try:
        got = api.launch(req, interrupts=interrupts)
    except locate.LauncherMissing as exc:
        sys.stderr.write(f"meshdoctor: {exc}\n")
        sys.exit(3)
    except ProbeSetupError as exc:  # the gate's probe refused the request before any rank ran
        said = str(exc)
        if exc.param == "--size":  # the probe's --size is launch's --probe SIZE
            said = said.replace("--size ", "SIZE ", 1)
        hint = {"--size": "--probe", "-n": "--probe"}.get(exc.param, exc.param)
        raise click.BadParameter(said, param_hint=hint) from None
    if json_path is not None:
        why = api.write_verdict(got.verdict, json_path)
        if why:
            sys.stderr.write(f"meshdoctor: cannot write --json {json_path}: {why}\n")
    interrupts.disarm()
    sys.exit(got.exit_status)
