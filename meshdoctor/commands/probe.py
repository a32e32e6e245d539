"""``meshdoctor probe``: real MLX collectives on every rank of the mesh, exact values, busbw."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_HELP
from meshdoctor.mlx.backends import PROBE_BACKENDS
from meshdoctor.mlx.ports import STARTING_PORT
from meshdoctor.output import emit, report_to
from meshdoctor.probe import api
from meshdoctor.probe.expected import LINK_CLASSES
from meshdoctor.probe.worker import DTYPES
from meshdoctor.commands.options import (
    check_environment,
    command_interrupts,
    draw_picture,
    healthy_hostfile_option,
    hostfile_option,
    hosts_option,
    json_option,
    load_hostfile,
    no_check_option,
    one_host_source,
    output_options,
    OutputFile,
    picture_ready,
    quiet_option,
    strict_option,
    timeout_option,
)
from meshdoctor.checker.runner import Interrupted


@click.command(
    epilog=EXIT_CODES_HELP + " A run whose memory need exceeds what is available on "
    "this host right now starts nothing and could not assess (MD509, exit 3), with the numbers.",
)
@hostfile_option(
    "The mlx.launch hostfile (JSON): one rank per host entry, remote over ssh "
    "('-': read it from standard input).",
    stdin=True,
)
@hosts_option(
    "Hosts (IPs for ring) instead of a hostfile, one rank each: a,b,c or Slurm's "
    "host-list syntax mac[01-16,20].",
)
@click.option(
    "-n",
    "nranks",
    type=click.IntRange(2, 64),
    default=None,
    help="Ranks on this machine over loopback (default 2; ring, or nccl with one "
    "GPU per rank when MLX is the CUDA build).",
)
@click.option(
    "--backend",
    type=click.Choice(list(PROBE_BACKENDS)),
    default=None,
    help="Backend (default: the hostfile's, else nccl when MLX is the "
    "CUDA build, else ring, as mlx.launch).",
)
@click.option(
    "--op",
    type=click.Choice(
        ["all_sum", "all_gather", "send_recv", "all_max", "all_min", "sum_scatter", "all"]
    ),
    default=api.ProbeRequest.op,
    show_default=True,
    help="Collective(s) to probe; all: every op the backend has in the installed MLX "
    "(the others are listed as skipped, with the MLX version that adds them).",
)
@click.option(
    "--size",
    default=api.ProbeRequest.size,
    show_default=True,
    help="Message size per rank: 4096, 64KB, 256MiB, 1GiB (B: bytes, b: bits, as in "
    "--min-busbw; all_gather: the gathered output, sum_scatter: the whole input, as nccl-tests).",
)
@click.option(
    "--iters",
    type=click.IntRange(1, 100000),
    default=api.ProbeRequest.iters,
    show_default=True,
    help="Timed iterations per op.",
)
@click.option(
    "--warmup",
    type=click.IntRange(0, 1000),
    default=api.ProbeRequest.warmup,
    show_default=True,
    help="Untimed iterations per op first.",
)
@click.option(
    "--dtype",
    type=click.Choice(list(DTYPES)),
    default=api.ProbeRequest.dtype,
    show_default=True,
    help="Element type.",
)
@timeout_option(
    "Per-collective deadline in seconds (default: 10 s + bus bytes / 20 MB/s + 0.05 s "
    "per ring step, times the ranks per CPU when this host is oversubscribed, and at least "
    "5 x the slowest warm-up call).",
    high=86400,
    default=None,
)
@click.option(
    "--soak",
    type=click.IntRange(0, 1000000),
    default=api.ProbeRequest.soak,
    help="Run each op N times with a per-call deadline, relaunching after a hang; "
    "report the hang rate.",
)
@click.option(
    "--pairs",
    is_flag=True,
    help="send/recv between every pair of ranks: N x N "
    "bandwidth matrix, slowest or failing pair named.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="ring: first TCP port (rank ports follow); jaccl: coordinator port "
    f"({STARTING_PORT}); "
    "nccl: NCCL_PORT on rank 0 (default: a free port).",
)
@click.option(
    "--launcher",
    type=click.Choice(["srun", "env"]),
    default=None,
    help="This process is one rank started by another launcher (ring backend): srun "
    "(SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST; ring ports from --port) or env "
    "(MLX_RANK, MLX_HOSTFILE, MLX_WORLD_SIZE). Rank 0 prints the verdict, the others their part.",
)
@click.option(
    "--min-busbw",
    "min_busbw",
    default=None,
    metavar="RATE",
    help="Fail an op or pair whose busbw is below RATE (10GB/s, 800Mb/s, 25Gbps; B: bytes, "
    "b: bits).",
)
@click.option(
    "--link",
    type=click.Choice(list(LINK_CLASSES)),
    default=None,
    help="The class of link the mesh runs over: warn where busbw is below the stated "
    "fraction of what that class carries (`meshdoctor explain MD513`).",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Compare with a healthy run's figures saved by --save-baseline: warn below 80 %.",
)
@click.option(
    "--save-baseline",
    "save_baseline",
    type=OutputFile(),
    default=None,
    metavar="FILE",
    help="Save this run's figures (per op, size, pair and wire) to FILE when it is go.",
)
@json_option()
@quiet_option()
@no_check_option("With --hostfile/--hosts: skip the fleet check that gates the launch.")
@strict_option()
@click.option(
    "--beside-running-job",
    is_flag=True,
    help="Probe even when a running job has ranks on a host of the mesh (refused otherwise: "
    "the probe shares its RDMA devices' queue pairs).",
)
@healthy_hostfile_option(
    "With --hostfile and --pairs: write OUT, the hostfile restricted to the hosts that "
    "passed, ranks renumbered (nothing when fewer than two pass)."
)
@click.option(
    "--plot",
    "plot",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    metavar="FILE",
    help="With --pairs: draw the bandwidth matrix as a heat map at FILE (.svg or .png, the "
    "busbw in each cell, the slowest pair outlined); needs the extra meshdoctor[plot].",
)
@output_options
def probe(
    hostfile: Optional[str],
    as_json: bool,
    quiet: bool,
    no_check: bool,
    healthy_hostfile: Optional[str],
    plot: Optional[str],
    **asked,
) -> None:
    """Prove the mesh moves data: real MLX collectives on every rank, exact values, busbw.

    Starts one rank per hostfile entry (over ssh -o BatchMode=yes for remote hosts), or -n
    ranks on this machine over loopback. Each collective has a deadline; on a hang it names the
    ranks that never arrived, captures stacks and tears every rank down. Figures follow
    nccl-tests (algbw, busbw; the JSON in GB/s = 1e9 bytes/s).
    """
    # Ctrl-C, SIGTERM, SIGHUP from the first moment: the verdict (MD510), one JSON document with
    # --json, never "nothing was assessed"; the launch takes them over once ranks start
    interrupts = command_interrupts("probe")
    # every other option is a field of the request, by name (its default is the field's); the
    # hostfile is read below, where a signal while it waits still gives the verdict
    request = api.ProbeRequest(hostfile=None, **asked)
    _usage(request, hostfile, healthy_hostfile, plot)
    filled = []  # the verdict api.probe fills, once the request passed its checks

    def checked(v):
        filled.append(v)
        return report_to(v, as_json=as_json, quiet=quiet)

    during = "reading the hostfile"
    hf, interrupted = None, False
    try:
        hf = load_hostfile(hostfile, interrupts)  # a pipe or FIFO: under a deadline
        gated = (hostfile or request.hosts) and not no_check
        during = "the fleet check" if gated else "the set-up"
        interrupts.arm()
        verdict = _probe(replace(request, hostfile=hf), no_check, as_json, quiet, checked)
    except (KeyboardInterrupt, Interrupted) as exc:
        interrupts.disarm()
        interrupted = True
        verdict = _interrupted(
            filled, exc, during, as_json=as_json, quiet=quiet, strict=request.strict
        )
    finally:
        interrupts.disarm()
    if not interrupted:
        _afterwards(verdict, hf, request.strict, healthy_hostfile, plot)
    emit(verdict, as_json=as_json, quiet=quiet)


def _usage(request, hostfile: Optional[str], healthy_hostfile, plot) -> None:
    """The usage errors (exit 2) of the command line's own options, before anything runs: one
    source of the mesh, the environment, ``--healthy-hostfile`` and ``--plot`` with what they
    need (a picture that cannot be drawn)."""
    one_host_source(
        **{
            "--hostfile": hostfile,
            "--hosts": request.hosts,
            "-n": request.nranks,
            "--launcher": request.launcher,
        }
    )
    check_environment()
    if healthy_hostfile is not None and (hostfile is None or not request.pairs):
        raise click.UsageError("--healthy-hostfile needs --hostfile and --pairs")
    if plot is not None:
        if not request.pairs:
            raise click.UsageError("--plot needs --pairs")
        picture_ready(plot, "--plot")


def _afterwards(verdict, hf, strict: bool, healthy_hostfile, plot) -> None:
    """What the verdict of a probe that was not interrupted gives beside itself: the healthy
    hostfile (its outcome a result in ``verdict``) and the heat map of the pairs."""
    pf = (verdict.probe or {}).get("pairs")
    if hf is not None and healthy_hostfile is not None:
        from meshdoctor.submesh import select, write

        split = (
            select.from_pairs(hf, pf)
            if pf is not None
            else select.from_results(hf, verdict.results, strict=strict)
        )
        verdict.results.append(write.report(hf, split, healthy_hostfile))
    if plot is not None and pf is not None:
        from meshdoctor.render.pictures import pairs_heatmap

        labels = [f"rank {h.rank} {h.ssh}" for h in hf.hosts] if hf is not None else None
        draw_picture(lambda: pairs_heatmap(pf, plot, labels), plot)


def _interrupted(filled, exc, during: str, *, as_json: bool, quiet: bool, strict: bool):
    """The verdict of a probe interrupted before any rank started: what was filled so far
    (``filled``: the verdict api.probe was filling, if any) and MD510; everything meshdoctor had
    started (the fleet check's calls) is stopped first."""
    from meshdoctor import execute
    from meshdoctor.model import Verdict
    from meshdoctor.probe.report.outcomes import interrupted_before_launch

    execute.stop_all(final=True)
    verdict = filled[0] if filled else Verdict(command="probe", strict=strict)
    report_to(verdict, as_json=as_json, quiet=quiet)
    signame = getattr(exc, "signame", None) or str(exc) or "SIGINT"
    verdict.results.append(interrupted_before_launch(signame, during))
    return verdict


def _probe(request, no_check: bool, as_json: bool, quiet: bool, checked):
    """The verdict of ``request`` (:class:`meshdoctor.probe.api.ProbeRequest`, its hostfile
    loaded); a request the probe cannot run is a usage error on the option at fault."""
    try:
        # under a launcher, a rank other than 0 relays to rank 0 and prints its own part
        code = api.follow(
            request,
            stream=sys.stderr if as_json else sys.stdout,
            quiet=quiet,
            interrupts=lambda: command_interrupts("probe"),
        )
        if code is not None:
            sys.exit(code)
        verdict = api.probe(
            request,
            gate=not no_check,
            # SIGINT/SIGTERM/SIGHUP: stop watching, still tear down and report
            interrupts=lambda: command_interrupts("probe"),
            progress=api.progress_for(as_json=as_json, quiet=quiet),
            on_checked=checked,
        )
    except api.ProbeSetupError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    return verdict
