"""``meshdoctor fix``: plan, apply (``--yes``) and verify repairs of the mesh."""

from __future__ import annotations

import json
import sys
from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_PLAIN_HELP
from meshdoctor.model import Verdict
from meshdoctor.output import emit, report_to
from meshdoctor.commands.options import (
    check_environment,
    hostfile_option,
    json_option,
    load_hostfile,
    output_options,
    OutputFile,
    quiet_option,
    timeout_option,
    yes_option,
)


def _complete_fixes(ctx, param, incomplete: str):
    """Shell completion for fix names."""
    from meshdoctor.fixer.registry import all_fixes

    return [f.name for f in all_fixes() if f.name.startswith(incomplete.lower())]


FIXES_MARK = "{fixes}"  # in the command's help: the names of the fixes there are


class _FixCommand(click.Command):
    """The ``fix`` command; its help names the fixes (:func:`meshdoctor.fixer.registry.all_fixes`,
    in code order), found only when the help is shown: a new fix is listed without an edit."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.help and FIXES_MARK in self.help:
            from meshdoctor.fixer.registry import all_fixes

            self.help = self.help.replace(FIXES_MARK, ", ".join(f.name for f in all_fixes()))
        super().format_help_text(ctx, formatter)


@click.command(
    cls=_FixCommand,
    epilog=EXIT_CODES_PLAIN_HELP
    + " Plan only (no --yes, no terminal): exit 1 while steps are pending.",
)
@click.argument("names", nargs=-1, metavar="[NAME]...", shell_complete=_complete_fixes)
@click.option("--list", "list_", is_flag=True, help="List the fixes with the codes they resolve.")
@yes_option("Apply the plan without asking.")
@hostfile_option(
    "The mlx.launch hostfile: act on every host in it (others over ssh).",
)
@click.option(
    "--include-running",
    is_flag=True,
    help="Also stop ranks whose job is still running (their launcher is alive).",
)
@click.option(
    "--output-hostfile",
    type=OutputFile(),
    default=None,
    help="auto-setup: where mlx.distributed_config writes the new hostfile.",
)
@timeout_option(
    "Deadline in seconds for each check the fixes run.",
)
@json_option()
@quiet_option()
@output_options
def fix(
    names: tuple,
    list_: bool,
    yes: bool,
    hostfile: Optional[str],
    include_running: bool,
    output_hostfile: Optional[str],
    timeout: float,
    as_json: bool,
    quiet: bool,
) -> None:
    """Plan, apply and verify fixes: {fixes}.

    Without NAME it runs the checks and plans the fixes for the failures found. It changes
    nothing without --yes (on a terminal it shows the plan and asks once). Every step is
    reported as an action (host, step, command, changed, outcome); the verdict is go when
    every fix verified.
    """
    from meshdoctor.fixer import plan as fixcmd

    if list_:
        rows = fixcmd.list_rows()
        if as_json:
            click.echo(json.dumps(rows, indent=2))
        else:
            for r in rows:
                click.echo(
                    f"{r['code']}  {r['name']:<12} {r['risk']:<11} resolves "
                    f"{','.join(r['resolves']):<12} {r['title']}"
                )
        return
    try:
        fixcmd.resolve(names)
    except fixcmd.UnknownFix as exc:
        raise click.BadParameter(str(exc), param_hint="NAME") from None
    check_environment()
    hf = load_hostfile(hostfile)
    tty = sys.stdin.isatty() and sys.stderr.isatty()

    def ask(actions) -> bool:
        from meshdoctor.render import verdict as render

        render.actions(
            [a.to_dict() for a in actions], out=render.console(stderr=True), heading="Plan:"
        )
        return click.confirm("Apply this plan?", default=False, err=True)

    report_to(Verdict(command="fix"), as_json=as_json, quiet=quiet)  # until fixcmd.run gives one
    verdict = fixcmd.run(
        names,
        hostfile=hf,
        yes=yes,
        include_running=include_running,
        output_hostfile=output_hostfile,
        timeout=timeout,
        ask=ask if tty and not yes else None,
        progress=fixcmd.stderr_progress if tty and not as_json else (lambda line: None),
    )
    report_to(verdict, as_json=as_json, quiet=quiet)
    shown = [
        a
        for a in verdict.actions or []
        if not quiet or str(a.get("outcome", "")).startswith("failed")
    ]
    if not as_json and shown:
        from meshdoctor.render import verdict as render

        planned = any(a.get("outcome") == "planned" for a in shown)
        render.actions(
            shown, heading="Plan (nothing changed; add --yes to apply):" if planned else "Actions:"
        )
    elif not as_json and not quiet and not verdict.results:
        click.echo("Nothing to fix: no check failed that a fix resolves.")
    emit(verdict, as_json=as_json, quiet=quiet)
