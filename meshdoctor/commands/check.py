"""``meshdoctor check``: inspect this node, or every host of a hostfile over ssh (fleet mode), and
give a go/no-go verdict for a launch."""

from __future__ import annotations

from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_HELP
from meshdoctor.model import HostInfo, Verdict
from meshdoctor.output import emit, report_to
from meshdoctor.commands.options import (
    Seconds,
    check_environment,
    command_interrupts,
    load_checks,
    load_hostfile,
    one_host_source,
    split_list,
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
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
@click.option("--strict", is_flag=True, help="Treat warnings as failures (no-go).")
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
@click.option(
    "--timeout",
    type=Seconds(0.1, 3600),
    default=10.0,
    show_default=True,
    help="Deadline in seconds for each check; each external command gets 45% of it.",
)
@click.option(
    "--hostfile",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="The mlx.launch hostfile (JSON): check every host of it (fleet mode; "
    "'-': read it from standard input).",
)
@click.option(
    "--hosts",
    default=None,
    metavar="A,B,C",
    help="Hosts to check instead of a hostfile (fleet mode).",
)
@click.option(
    "--local-only", is_flag=True, help="Check only this node (the hostfile says which rank it is)."
)
@click.option(
    "--python",
    "python",
    default=None,
    metavar="PATH",
    help="Interpreter that runs meshdoctor on remote hosts (default: "
    "MESHDOCTOR_REMOTE_PYTHON, else this interpreter's path).",
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
    facts: bool = False,
    ranks_opt: Optional[str] = None,
) -> None:
    """Inspect this node, or with --hostfile/--hosts every host of the mesh over ssh, and give
    a go/no-go verdict for a launch."""
    # Ctrl-C, SIGTERM, SIGHUP: stop, kill what runs, print the verdict (one installed before
    # anything was imported, meshdoctor.__main__, so a signal at any moment gives the verdict)
    interrupts = command_interrupts("check")
    from meshdoctor.checker import here
    from meshdoctor.checker.runner import Interrupted
    from meshdoctor.checker.selection import SelectionError, chosen

    one_host_source(**{"--hostfile": hostfile, "--hosts": hosts})
    only_l = split_list(only, "--only", "check")
    skip_l = split_list(skip, "--skip", "check")
    check_environment()
    verdict = report_to(Verdict(command="check", strict=strict), as_json=as_json, quiet=quiet)
    try:  # a hostfile from a pipe or FIFO: a signal while it waits still gives the verdict
        hf = load_hostfile(hostfile, interrupts) if hosts is None else _hosts_list(hosts)
    except KeyboardInterrupt as exc:
        interrupts.disarm()
        _check_interrupted(verdict, exc)
        emit(verdict, as_json=as_json, quiet=quiet)
    try:
        interrupts.arm()
        checks = load_checks()  # loading them can take a while: an interrupt here still reports
        if hf is not None and not local_only:  # fleet mode: every host (meshdoctor.checker.fleet)
            from meshdoctor.checker.fleet import FleetOptions, check_fleet

            try:
                check_fleet(
                    hf,
                    verdict,
                    FleetOptions(timeout=timeout, only=only_l, skip=skip_l, python=python),
                )
            except SelectionError as exc:
                raise click.BadParameter(str(exc), param_hint="--only/--skip") from None
            interrupts.disarm()
            emit(verdict, as_json=as_json, quiet=quiet)
        try:
            chosen(checks, only_l, skip_l)
        except SelectionError as exc:
            raise click.BadParameter(str(exc), param_hint="--only/--skip") from None
        ranks = None  # the entries that are this machine (meshdoctor.checker.here.context)
        if ranks_opt and hf is not None:
            ranks = [
                int(x)
                for x in ranks_opt.split(",")
                if x.strip().isdigit() and int(x) < hf.world_size
            ]
        ctx = here.context(hostfile=hf, ranks=ranks, timeout=timeout)
        verdict.hosts.append(
            HostInfo(
                host=ctx.host,
                rank=ctx.ranks[0] if ctx.ranks else None,
                platform={"os": ctx.platform},
            )
        )
        verdict.results.extend(
            here.run_here(
                ctx,
                checks,
                only_l,
                skip_l,
                timeout=timeout,
                facts=verdict.hosts[0] if facts else None,
            )
        )
        from meshdoctor.fixer.engine import annotate

        annotate(verdict.results)
        interrupts.disarm()  # a signal from here on waits: the verdict is printed
    except (Interrupted, KeyboardInterrupt) as exc:  # the verdict so far, never a lost one
        _check_interrupted(verdict, exc)
    finally:  # also before an internal error is reported (meshdoctor.output.internal_error)
        interrupts.disarm()
    emit(verdict, as_json=as_json, quiet=quiet)


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
