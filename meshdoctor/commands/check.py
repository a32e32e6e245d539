"""``meshdoctor check``: inspect this node, or every host of a hostfile over ssh (fleet mode), and
give a go/no-go verdict for a launch."""

from __future__ import annotations

from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_HELP
from meshdoctor.model import Verdict
from meshdoctor.output import emit, report_to
from meshdoctor.commands.options import (
    check_environment,
    command_interrupts,
    draw_picture,
    healthy_hostfile_option,
    hostfile_option,
    hosts_option,
    json_option,
    load_checks,
    load_hostfile,
    local_only_option,
    one_host_source,
    output_options,
    picture_ready,
    python_option,
    quiet_option,
    split_list,
    strict_option,
    timeout_option,
)


def _complete_codes(ctx, param, incomplete: str):
    """Shell completion for check codes (``--only``, ``--skip``)."""
    from meshdoctor.checker.registry import ExtraCheckError, all_checks

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    try:
        checks = all_checks()
    except ExtraCheckError:
        return []
    return [prefix + c.code for c in checks if c.code.lower().startswith(last.lower())]


def _hosts_list(hosts: str):
    """The hosts of ``--hosts A,B,C`` as a hostfile; a bad list is a usage error (exit 2)."""
    from meshdoctor.hostfile.load import HostfileError, from_list

    try:
        return from_list(hosts)
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hosts") from None


@click.command(epilog=EXIT_CODES_HELP)
@json_option()
@quiet_option()
@strict_option()
@click.option(
    "--only",
    multiple=True,
    metavar="CODE,...",
    shell_complete=_complete_codes,
    help="Run only these checks (codes or names, comma-separated).",
)
@click.option(
    "--skip",
    multiple=True,
    metavar="CODE,...",
    shell_complete=_complete_codes,
    help="Do not run these checks (codes or names, comma-separated).",
)
@timeout_option(
    "Deadline in seconds for each check; each external command gets 45% of it.",
)
@hostfile_option(
    "The mlx.launch hostfile (JSON): check every host of it (fleet mode; "
    "'-': read it from standard input).",
    stdin=True,
)
@hosts_option(
    "Hosts to check instead of a hostfile (fleet mode): a,b,c or Slurm's host-list "
    "syntax mac[01-16,20].",
)
@local_only_option(
    "Check only this node (the hostfile says which rank it is).",
)
@python_option()
@click.option(
    "--slurm-drain",
    is_flag=True,
    help="On no-go drain this Slurm node (reason 'meshdoctor: CODE ...'); on go resume it "
    "only if meshdoctor drained it (needs scontrol; SLURMD_NODENAME, else hostname -s).",
)
@click.option(
    "--max-parallel",
    type=click.IntRange(1, 4096),
    default=32,
    show_default=True,
    metavar="N",
    help="Fleet mode: reach at most N hosts at once (a larger fleet goes in waves).",
)
@click.option(
    "--graph",
    "graph",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    metavar="FILE",
    help="With --hostfile: draw the mesh at FILE (.svg or .png): the hosts, each cable or ring "
    "link, failing hosts and links in red, the ring order; needs the extra meshdoctor[plot].",
)
@healthy_hostfile_option(
    "With --hostfile: write OUT, the hostfile restricted to the hosts (and jaccl "
    "cables) that passed, ranks renumbered (nothing when fewer than two pass)."
)
@click.option(
    "--facts",
    is_flag=True,
    hidden=True,
    help="Add this node's facts for the cross-node checks (used by fleet mode).",
)
@click.option(
    "--ranks",
    "ranks_opt",
    default=None,
    hidden=True,
    help="This node's ranks in the hostfile, comma-separated (used by fleet mode).",
)
@output_options
def check(
    as_json: bool,
    quiet: bool,
    strict: bool,
    only: tuple,
    skip: tuple,
    timeout: float,
    hostfile: Optional[str],
    hosts: Optional[str] = None,
    local_only: bool = False,
    python: Optional[str] = None,
    slurm_drain: bool = False,
    max_parallel: int = 32,
    facts: bool = False,
    ranks_opt: Optional[str] = None,
    healthy_hostfile: Optional[str] = None,
    graph: Optional[str] = None,
) -> None:
    """Inspect this node, or with --hostfile/--hosts every host of the mesh over ssh, and give
    a go/no-go verdict for a launch."""
    # Ctrl-C, SIGTERM, SIGHUP: stop, kill what runs, print the verdict (one installed before
    # anything was imported, meshdoctor.__main__, so a signal at any moment gives the verdict)
    interrupts = command_interrupts("check")
    from meshdoctor import checker
    from meshdoctor.checker.runner import Interrupted
    from meshdoctor.checker.selection import SelectionError

    fleet_mode = (hostfile is not None or hosts is not None) and not local_only
    one_host_source(**{"--hostfile": hostfile, "--hosts": hosts})
    if slurm_drain:
        _slurm_ready(hostfile is not None or hosts is not None, local_only)
    only_l = split_list(only, "--only", "check")
    skip_l = split_list(skip, "--skip", "check")
    check_environment()
    _files_ready(hostfile is not None and not local_only, fleet_mode, healthy_hostfile, graph)
    verdict = report_to(Verdict(command="check", strict=strict), as_json=as_json, quiet=quiet)
    try:  # a hostfile from a pipe or FIFO: a signal while it waits still gives the verdict
        hf = load_hostfile(hostfile, interrupts) if hosts is None else _hosts_list(hosts)
    except KeyboardInterrupt as exc:
        interrupts.disarm()
        _check_interrupted(verdict, exc)
        emit(verdict, as_json=as_json, quiet=quiet)
    request = checker.CheckRequest(
        hostfile=hf,
        local_only=local_only,
        only=only_l,
        skip=skip_l,
        timeout=timeout,
        python=python,
        max_parallel=max_parallel,
        facts=facts,
        ranks=_ranks(ranks_opt, hf),
        strict=strict,
    )
    try:
        interrupts.arm()
        checks = load_checks()  # loading them can take a while: an interrupt here still reports
        try:
            checker.run(request, verdict, checks)
        except SelectionError as exc:
            raise click.BadParameter(str(exc), param_hint="--only/--skip") from None
        interrupts.disarm()  # a signal from here on waits: the verdict is printed
        if request.fleet:
            _fleet_files(request, verdict, healthy_hostfile, graph)
            emit(verdict, as_json=as_json, quiet=quiet)
        from meshdoctor.fixer.engine import annotate

        annotate(verdict.results)
    except (Interrupted, KeyboardInterrupt) as exc:  # the verdict so far, never a lost one
        _check_interrupted(verdict, exc)
    finally:  # also before an internal error is reported (meshdoctor.output.internal_error)
        interrupts.disarm()
    if slurm_drain:
        _slurm_drain(verdict)
    emit(verdict, as_json=as_json, quiet=quiet)


def _files_ready(hostfile: bool, fleet: bool, healthy_hostfile, graph) -> None:
    """Usage errors (exit 2) of the files fleet mode writes: ``--healthy-hostfile`` needs a
    hostfile (``hostfile``: one was given and not ``--local-only``), ``--graph`` fleet mode and a
    picture that can be drawn."""
    if healthy_hostfile is not None and not hostfile:
        raise click.UsageError("--healthy-hostfile needs --hostfile (fleet mode)")
    if graph is not None:
        if not fleet:
            raise click.UsageError("--graph needs --hostfile or --hosts (fleet mode)")
        picture_ready(graph, "--graph")


def _ranks(ranks_opt: Optional[str], hf):
    """This machine's ranks that ``--ranks`` names (the entries of ``hf`` that are this machine,
    as fleet mode passes them; words that are no rank of ``hf`` dropped); None without it."""
    if not ranks_opt or hf is None:
        return None
    return [int(x) for x in ranks_opt.split(",") if x.strip().isdigit() and int(x) < hf.world_size]


def _fleet_files(request, verdict: Verdict, healthy_hostfile, graph) -> None:
    """What fleet mode writes beside its verdict: the healthy hostfile (its outcome a result in
    ``verdict``) and the picture of the mesh."""
    hf = request.hostfile
    if healthy_hostfile is not None:
        from meshdoctor.submesh import select, write

        split = select.from_results(hf, verdict.results, strict=request.strict)
        verdict.results.append(write.report(hf, split, healthy_hostfile))
    if graph is not None:
        from meshdoctor.render.pictures import mesh_graph

        draw_picture(lambda: mesh_graph(hf, verdict.results, graph), graph)


def _slurm_ready(fleet: bool, local_only: bool) -> None:
    """Usage errors of ``--slurm-drain`` (exit 2): it drains this node, so not in fleet mode;
    scontrol must be installed."""
    from meshdoctor.slurm.drain import SlurmError, scontrol

    if fleet and not local_only:
        raise click.BadParameter(
            "drains this node only: add --local-only, or run check --slurm-drain on each node",
            param_hint="--slurm-drain",
        )
    try:
        scontrol()
    except SlurmError as exc:
        raise click.BadParameter(str(exc), param_hint="--slurm-drain") from None


def _slurm_drain(verdict: Verdict) -> None:
    """This node's Slurm state after ``verdict`` (:func:`meshdoctor.slurm.drain.apply`), said on
    stderr; a Slurm that refuses or does not answer is said there too and leaves the exit code
    to the verdict."""
    from meshdoctor.slurm.drain import SlurmError, apply

    try:
        said = apply(verdict)
    except SlurmError as exc:
        said = f"could not change this node's Slurm state: {exc}"
    if said:
        from meshdoctor.text import one_line

        click.echo(f"meshdoctor: {one_line(said)}", err=True)  # scontrol's words, a node name


def _check_interrupted(verdict: Verdict, exc: BaseException) -> None:
    """Stop every command ``check`` started, add the results of the checks that finished and
    the interrupt result to ``verdict``."""
    from meshdoctor import execute
    from meshdoctor.checker.here import this_host_name
    from meshdoctor.checker.runner import Interrupted, interrupt_result

    execute.stop_all(final=True)
    host = verdict.hosts[0].host if verdict.hosts else this_host_name()
    if isinstance(exc, Interrupted):
        verdict.results.extend(exc.results)
        verdict.results.append(
            interrupt_result(exc.signame, exc.host or host, exc.unfinished, exc.total, exc.unit)
        )
    else:
        verdict.results.append(interrupt_result(str(exc) or "SIGINT", host))
