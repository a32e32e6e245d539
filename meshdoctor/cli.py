"""The command-line interface: the command table, the group, ``--version`` and :func:`main`.

Each command is a module of :mod:`meshdoctor.commands`, imported only when that command runs:
``meshdoctor --help`` lists the commands from :data:`COMMANDS` without importing any of them, and
``meshdoctor check --json`` imports nothing of the probe, triage or fix commands. An exception no
command handled ends as exit 3 in one place (:func:`meshdoctor.output.internal_error`).

Exit codes (every command): 0 go, 1 no-go, 2 usage error, 3 could not assess. The ``--json`` path
never imports rich: rendering is imported only for human output.
"""

from __future__ import annotations

import sys
from typing import Dict, List, NamedTuple, Optional

import click

from meshdoctor import __version__
from meshdoctor.streams import make_usable, say_unwritable, to_devnull
from meshdoctor.interrupts import Interrupts

_EXIT_CODES = (
    "Exit codes: 0 go (nothing failed; warnings allowed{strict}), 1 no-go (something "
    "failed), 2 usage error, 3 could not assess (a check in error, an unreachable host, every "
    "check skipped, an internal error)."
)
# the epilog of a command with --strict (check, probe) and of one without it (fix, triage): a
# command's help names only options it has
EXIT_CODES_HELP = _EXIT_CODES.format(strict=" unless --strict")
EXIT_CODES_PLAIN_HELP = _EXIT_CODES.format(strict="")
GROUP_EXIT_CODES_HELP = _EXIT_CODES.format(strict=" unless check or probe has --strict")


class CommandInfo(NamedTuple):
    """Where a command lives (``module``, ``attr``: its click command), its one-line help, and
    ``own_interrupts``: the command answers for an interrupt with its own verdict (``check``:
    the verdict so far and MD190; ``probe``: MD510, also before any rank started; ``launch``:
    the ranks stopped and the verdict written), so the interrupt handling stays recording (not
    raising) until the command arms it. Every other command is stopped by a signal at once
    (exit 3)."""

    module: str
    attr: str
    short_help: str
    own_interrupts: bool = False


# Every command: name -> where it lives and the one line `meshdoctor --help` and shell completion
# show for it (the command gets this line when loaded; its docstring is the long help).
COMMANDS: Dict[str, CommandInfo] = {
    "bundle": CommandInfo(
        "meshdoctor.commands.bundle",
        "bundle",
        "Collect a support archive of this machine or every host (secrets removed).",
    ),
    "check": CommandInfo(
        "meshdoctor.commands.check",
        "check",
        "Inspect this node or every host of the mesh; go or no-go.",
        own_interrupts=True,
    ),
    "explain": CommandInfo(
        "meshdoctor.commands.explain",
        "explain",
        "Say what a finding code or name means and what to do.",
    ),
    "fix": CommandInfo(
        "meshdoctor.commands.fix",
        "fix",
        "Plan, apply (--yes) and verify repairs of the mesh.",
    ),
    "launch": CommandInfo(
        "meshdoctor.commands.launch",
        "launch",
        "Gate the mesh, run the job with mlx.launch, exit with the ranks' real status.",
        own_interrupts=True,
    ),
    "list-checks": CommandInfo(
        "meshdoctor.commands.list_checks",
        "list_checks",
        "List every check with its code, name, platforms and title.",
    ),
    "probe": CommandInfo(
        "meshdoctor.commands.probe",
        "probe",
        "Prove the mesh moves data: real MLX collectives, exact values, busbw.",
        own_interrupts=True,
    ),
    "schema": CommandInfo(
        "meshdoctor.commands.schema",
        "schema",
        "Print the JSON Schema every --json verdict validates against.",
    ),
    "triage": CommandInfo(
        "meshdoctor.commands.triage",
        "triage",
        "Find the first cause of a failed MLX job in logs and crash reports.",
    ),
}


class _Group(click.Group):
    """The command group: loads a command of :data:`COMMANDS` only when it is asked for (to run
    it, its ``--help``, completing its options), lists them without loading any, and hands an
    exception no command handled to :func:`meshdoctor.output.internal_error` (the verdict so far
    with the internal-error result, or exit 0 for a reader that went away, or exit 3)."""

    def list_commands(self, ctx: Optional[click.Context]) -> List[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: Optional[click.Context], cmd_name: str) -> Optional[click.Command]:
        info = COMMANDS.get(cmd_name)
        if info is None:
            return None
        if cmd_name not in self.commands:
            __import__(info.module)  # the import statement's path: `python -X importtime` shows it
            cmd = getattr(sys.modules[info.module], info.attr)
            cmd.short_help = info.short_help
            self.commands[cmd_name] = cmd
        return self.commands[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].short_help) for name in sorted(COMMANDS)])

    def shell_complete(self, ctx: click.Context, incomplete: str):
        from click.shell_completion import CompletionItem

        return [
            CompletionItem(name, help=COMMANDS[name].short_help)
            for name in self.list_commands(ctx)
            if name.startswith(incomplete)
        ] + click.Command.shell_complete(self, ctx, incomplete)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            from meshdoctor.output import internal_error

            internal_error(exc, ctx)
        finally:  # a signal from here on is recorded (the exit code is still set by main)
            interrupts = ctx.find_object(Interrupts)
            if interrupts is not None:
                interrupts.disarm()


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=GROUP_EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="meshdoctor")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Doctor and repair tool for MLX distributed meshes (JACCL over Thunderbolt, TCP ring).

    Run `meshdoctor check` before a launch and gate on its exit code; `meshdoctor explain CODE`
    says what a finding means and what to do.
    """
    interrupts = ctx.find_object(Interrupts)
    info = COMMANDS.get(ctx.invoked_subcommand or "")
    if interrupts is not None and not (info and info.own_interrupts):
        interrupts.arm()  # from here a signal stops the command (a pending one: now)


def main(interrupts: Optional[Interrupts] = None) -> None:
    """Run the command line. Usage errors exit 2 (click's); an interrupt (Ctrl-C, SIGTERM,
    SIGHUP) outside the probe's and check's own handling, or an unexpected crash, exits 3
    "could not assess", never 1 or 128 + signal. ``interrupts``: the handling
    :func:`meshdoctor.__main__.main` installed first thing (None: installed here). A closed or
    broken stdout or stderr is not a verdict: the command ends quietly with the exit status it
    would have had (0 for the listings)."""
    if interrupts is None:
        interrupts = Interrupts()
        interrupts.install()
    make_usable()
    try:
        rv = cli.main(
            prog_name="meshdoctor",
            complete_var="_MESHDOCTOR_COMPLETE",
            standalone_mode=False,
            obj=interrupts,
        )
    except click.ClickException as exc:
        interrupts.disarm()
        exc.show()
        _exit(exc.exit_code, interrupts)
    except (click.Abort, KeyboardInterrupt):
        interrupts.disarm()
        _interrupted()
    except SystemExit as exc:
        _exit(exc.code, interrupts)
    except Exception as exc:  # outside any command (completion, the group's options): last resort
        from meshdoctor.output import internal_error

        try:
            internal_error(exc)
        except SystemExit as end:
            _exit(end.code, interrupts)
    _exit(rv if isinstance(rv, int) else 0, interrupts)


def _interrupted() -> None:
    """End an interrupted command that gave no verdict: stop what it started, exit 3."""
    from meshdoctor import execute
    from meshdoctor.model import EXIT_UNKNOWN

    execute.stop_all(final=True)
    sys.stderr.write("meshdoctor: interrupted; nothing was assessed\n")
    _exit(EXIT_UNKNOWN)


def _exit(code, interrupts: Optional[Interrupts] = None) -> None:
    """Flush stdout (a reader gone by now is not an error) and exit with ``code``; exit 3 instead
    when ``interrupts`` holds a signal that no command answered for (it came before a command
    started, during --help, or after a command that gives no verdict). From here on a signal
    stays blocked (:func:`meshdoctor.interrupts.hold`): the exit status is decided."""
    from meshdoctor.interrupts import hold

    hold()
    shared = sys.modules.get("meshdoctor.remote")  # the run's ssh masters, if it used ssh
    if shared is not None:
        shared.close_shared()
    if interrupts is not None and interrupts.pending and interrupts.handled_by is None:
        interrupts.pending = None
        _interrupted()
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        to_devnull(1)
    except OSError as exc:  # a full disk, ...: what was printed never reached its reader
        from meshdoctor.model import EXIT_UNKNOWN

        say_unwritable(exc)
        code = EXIT_UNKNOWN
    sys.exit(code)
