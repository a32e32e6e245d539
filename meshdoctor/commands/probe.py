"""``meshdoctor probe``: real MLX collectives on every rank of the mesh, exact values, busbw."""

from __future__ import annotations

from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_HELP
from meshdoctor.mlx.backends import PROBE_BACKENDS
from meshdoctor.mlx.ports import STARTING_PORT
from meshdoctor.output import emit, report_to
from meshdoctor.probe import api
from meshdoctor.probe.worker import DTYPES
from meshdoctor.commands.options import (
    Seconds,
    check_environment,
    command_interrupts,
    one_host_source,
)


@click.command(
    epilog=EXIT_CODES_HELP + " A run whose memory need exceeds what is available on "
    "this host right now starts nothing and could not assess (MD509, exit 3), with the numbers.",
)
@click.option(
    "--hostfile",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="The mlx.launch hostfile (JSON): one rank per host entry, remote over ssh "
    "('-': read it from standard input).",
)
@click.option(
    "--hosts",
    default=None,
    metavar="A,B,C",
    help="Hosts (IPs for ring) instead of a hostfile, one rank each.",
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
    help="Message size per rank: 4096, 64KB, 256MiB, 1GiB (all_gather: the gathered "
    "output, sum_scatter: the whole input, as nccl-tests).",
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
@click.option(
    "--timeout",
    type=Seconds(0.1, 86400),
    default=None,
    help="Per-collective deadline in seconds (default: 10 s + bus bytes / 20 MB/s).",
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
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
@click.option(
    "--no-check",
    is_flag=True,
    help="With --hostfile/--hosts: skip the fleet check that gates the launch.",
)
@click.option("--strict", is_flag=True, help="Treat warnings as failures (no-go).")
def probe(
    hostfile: Optional[str],
    hosts: Optional[str],
    nranks: Optional[int],
    backend: Optional[str],
    op: str,
    size: str,
    iters: int,
    warmup: int,
    dtype: str,
    timeout: Optional[float],
    soak: int,
    pairs: bool,
    port: Optional[int],
    as_json: bool,
    quiet: bool,
    strict: bool,
    no_check: bool = False,
) -> None:
    """Prove the mesh moves data: real MLX collectives on every rank, exact values, busbw.

    Starts one rank per hostfile entry (over ssh -o BatchMode=yes for remote hosts), or -n
    ranks on this machine over loopback. Each collective has a deadline; on a hang it names the
    ranks that never arrived, captures stacks and tears every rank down. Figures follow
    nccl-tests (algbw, busbw; the JSON in GB/s = 1e9 bytes/s).
    """
    one_host_source(**{"--hostfile": hostfile, "--hosts": hosts, "-n": nranks})
    check_environment()
    request = api.ProbeRequest(
        hostfile=hostfile,
        hosts=hosts,
        nranks=nranks,
        backend=backend,
        op=op,
        size=size,
        iters=iters,
        warmup=warmup,
        dtype=dtype,
        timeout=timeout,
        soak=soak,
        pairs=pairs,
        port=port,
        strict=strict,
    )
    try:
        verdict = api.probe(
            request,
            gate=not no_check,
            # SIGINT/SIGTERM/SIGHUP: stop watching, still tear down and report
            interrupts=lambda: command_interrupts("probe"),
            progress=api.progress_for(as_json=as_json, quiet=quiet),
            on_checked=lambda v: report_to(v, as_json=as_json, quiet=quiet),
        )
    except api.ProbeSetupError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    emit(verdict, as_json=as_json, quiet=quiet)
