"""The command-line interface. The CLI knows every part; no part knows the CLI.

Exit codes (every command): 0 go, 1 no-go, 2 usage error, 3 could not assess. The ``--json`` path
never imports rich: rendering is imported only for human output.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import List, Optional

import click

from . import __version__
from .model import EXIT_UNKNOWN, HostInfo, Result, Verdict
from .probe.worker import DTYPES

# Each external command a check runs gets this share of the check's deadline, so that two in a
# row that both hang still end inside it as findings rather than as a check in error.
COMMAND_SHARE = 0.45

EXIT_CODES_HELP = (
    "Exit codes: 0 go (nothing failed; warnings allowed unless --strict), 1 no-go (something "
    "failed), 2 usage error, 3 could not assess (a check in error, an unreachable host, every "
    "check skipped, an internal error)."
)


class Seconds(click.ParamType):
    """A finite number of seconds within [``low``, ``high``] (rejects nan and inf, which would
    disable a deadline)."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        import math

        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(v) or not self.low <= v <= self.high:
            self.fail(
                f"{value!r} must be a number of seconds from {self.low:g} to {self.high:g}",
                param,
                ctx,
            )
        return v


def _complete_codes(ctx, param, incomplete: str):
    """Shell completion for check codes (``--only``, ``--skip``)."""
    from .registry import ExtraCheckError, all_checks

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    try:
        checks = all_checks()
    except ExtraCheckError:
        return []
    return [prefix + c.code for c in checks if c.code.lower().startswith(last.lower())]


def _complete_explain(ctx, param, incomplete: str):
    """Shell completion for ``explain``: every code of the catalogue and every name it knows
    (checks, fixes, signatures, probe result names)."""
    from . import catalogue
    from .registry import ExtraCheckError

    try:
        found = catalogue.entries()
    except ExtraCheckError:
        found = catalogue.entries([k for k in catalogue.KINDS if k != catalogue.CHECK])
    words = [e.code for e in found] + [n for e in found for n in e.names]
    return sorted({w for w in words if w.lower().startswith(incomplete.lower())})


def _checks():
    """Every check; a module in MESHDOCTOR_EXTRA_CHECKS that cannot be used is a usage error
    (exit 2) naming the module and why."""
    from .registry import ExtraCheckError, all_checks

    try:
        return all_checks()
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None


def _split_codes(values: tuple) -> List[str]:
    out: List[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _finite(obj):
    """``obj`` with every NaN or infinity replaced by None (they are not JSON)."""
    import math

    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(doc: dict) -> str:
    """Strict JSON text of a verdict document: no NaN/Infinity, unknown types as strings."""
    try:
        return json.dumps(doc, indent=2, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(doc), indent=2, default=str, allow_nan=False)


def emit(verdict: Verdict, *, as_json: bool, quiet: bool = False) -> None:
    """Print ``verdict`` (JSON or rich) and exit with its exit code. Results without a title
    get their code's title from the catalogue first."""
    from .catalogue import stamp

    verdict.finish()
    stamp(verdict.results)
    try:
        if as_json:
            sys.stdout.write(to_json(verdict.to_dict()) + "\n")
            sys.stdout.flush()
        else:
            from . import render

            render.verdict(verdict, quiet=quiet)
    except BrokenPipeError:  # the reader went away (`| head`): the exit code still tells
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(verdict.exit_code)


def _load_hostfile(path: Optional[str]):
    if path is None:
        return None
    from .hostfile import HostfileError, load, parse

    try:
        return parse(sys.stdin.read(), "<stdin>") if path == "-" else load(path)
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hostfile") from None


def _hosts_list(hosts: str):
    from .hostfile import HostfileError, from_list

    try:
        return from_list(hosts)
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hosts") from None


class _Group(click.Group):
    """The command group, except that a reader going away (``| head``, EPIPE) ends the command
    quietly with status 0 instead of click's 1: a closed pipe is not a verdict (``check`` and
    ``probe`` exit with their verdict's code, :func:`emit`)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _silence_stdout()
            raise click.exceptions.Exit(0) from None


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null, so that nothing more (not even the flush at exit) fails."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


@click.group(
    cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP
)
@click.version_option(__version__, prog_name="meshdoctor")
def cli() -> None:
    """Doctor and repair tool for MLX distributed meshes (JACCL over Thunderbolt, TCP ring).

    Run `meshdoctor check` before a launch and gate on its exit code; `meshdoctor explain CODE`
    says what a finding means and what to do.
    """


@cli.command(
    short_help="Inspect this node or every host of the mesh; go or no-go.", epilog=EXIT_CODES_HELP
)
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
    from .context import NodeContext
    from .hostfile import local_ranks
    from .interrupts import Interrupts
    from .registry import select
    from .runner import Interrupted, run_checks

    hf = _load_hostfile(hostfile) if hosts is None else _hosts_list(hosts)
    verdict = Verdict(command="check", strict=strict)
    interrupts = Interrupts()  # Ctrl-C, SIGTERM, SIGHUP: stop, kill what runs, print the verdict
    interrupts.install()
    try:
        interrupts.arm()
        checks = _checks()  # loading them can take a while: an interrupt here still reports
        only_l, skip_l = _split_codes(only), _split_codes(skip)
        if hf is not None and not local_only:  # fleet mode: every host (meshdoctor.fleet)
            from .fleet import FleetOptions, FleetUsageError, check_fleet

            try:
                check_fleet(
                    hf,
                    verdict,
                    FleetOptions(timeout=timeout, only=only_l, skip=skip_l, python=python),
                )
            except FleetUsageError as exc:
                raise click.BadParameter(str(exc), param_hint="--only/--skip") from None
            interrupts.disarm()
            emit(verdict, as_json=as_json, quiet=quiet)
        known = {c.code.lower() for c in checks} | {c.name.lower() for c in checks}
        unknown = [k for k in only_l + skip_l if k.lower() not in known]
        if unknown:
            raise click.BadParameter(
                f"unknown check {', '.join(unknown)}; see `meshdoctor list-checks`",
                param_hint="--only/--skip",
            )
        selected = select(checks, only_l, skip_l)
        if not selected:
            raise click.BadParameter(
                "--only and --skip leave no check to run; a gate that runs nothing must not say go",
                param_hint="--only/--skip",
            )
        ranks = local_ranks(hf) if hf is not None else []
        if ranks_opt and hf is not None:
            ranks = [
                int(x)
                for x in ranks_opt.split(",")
                if x.strip().isdigit() and int(x) < hf.world_size
            ]
        host = (
            (hf.hosts[ranks[0]].ssh if hf is not None and ranks else "")
            or socket.gethostname().split(".")[0]
            or "localhost"
        )
        ctx = NodeContext(
            host=host, hostfile=hf, ranks=ranks, command_timeout=max(0.05, timeout * COMMAND_SHARE)
        )
        verdict.hosts.append(
            HostInfo(host=host, rank=ranks[0] if ranks else None, platform={"os": ctx.platform})
        )
        if facts:
            from .fleet import node_facts_bounded

            node_facts_bounded(
                ctx,
                verdict.hosts[0],
                timeout,
                lambda: verdict.results.extend(run_checks(selected, ctx, timeout=timeout)),
            )
        else:
            verdict.results.extend(run_checks(selected, ctx, timeout=timeout))
        from .fixengine import annotate

        annotate(verdict.results)
        interrupts.disarm()  # a signal from here on waits: the verdict is printed
    except click.ClickException:
        raise
    except (Interrupted, KeyboardInterrupt) as exc:  # the verdict so far, never a lost one
        _check_interrupted(verdict, exc)
    except Exception as exc:  # never lose the verdict
        interrupts.disarm()
        verdict.results.append(
            Result(
                code="MD100",
                check="meshdoctor",
                status="error",
                summary=f"internal error: {type(exc).__name__}: {exc}",
            )
        )
    emit(verdict, as_json=as_json, quiet=quiet)


def _check_interrupted(verdict: Verdict, exc: BaseException) -> None:
    """Stop every command ``check`` started, add the results of the checks that finished and
    the interrupt result to ``verdict``."""
    from . import execute
    from .runner import Interrupted, interrupt_result

    execute.stop_all(final=True)
    host = (
        verdict.hosts[0].host
        if verdict.hosts
        else (socket.gethostname().split(".")[0] or "localhost")
    )
    if isinstance(exc, Interrupted):
        verdict.results.extend(exc.results)
        verdict.results.append(interrupt_result(exc.signame, host, exc.unfinished, exc.total))
    else:
        verdict.results.append(interrupt_result(str(exc) or "SIGINT", host))


@cli.command("list-checks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="List every code of the catalogue: also the internal error, the probe's "
    "codes (MD5xx), the failure signatures (MD6xx) and the fixes (MD7xx).",
)
def list_checks(as_json: bool, everything: bool) -> None:
    """List every check with its code, name, platforms and title."""
    from .fleetcheck import all_fleet_checks

    rows = [
        {
            "code": c.code,
            "name": c.name,
            "title": c.title,
            "platforms": list(c.platforms),
            "kind": "check",
        }
        for c in [*_checks(), *all_fleet_checks()]
    ]
    rows.sort(key=lambda r: r["code"])
    if everything:  # every catalogued code, checks with their platforms
        from . import catalogue

        have = {r["code"] for r in rows}
        rows += [
            {"code": e.code, "name": e.name, "title": e.title, "platforms": [], "kind": e.kind}
            for e in catalogue.entries()
            if e.code not in have
        ]
        rows.sort(key=lambda r: r["code"])
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from .render import plain  # a site's extra check is text from outside

    width = max([18] + [len(r["name"]) for r in rows])
    for r in rows:
        click.echo(
            plain(f"{r['code']}  {r['name']:<{width}} {','.join(r['platforms']):<13} {r['title']}")
        )


@cli.command(short_help="Say what a finding code or name means and what to do.")
@click.argument("code", shell_complete=_complete_explain)
def explain(code: str) -> None:
    """Say what a finding code means and what to do (e.g. MD203, MD601, a check name such as
    rdma.gid, a signature name such as ring.connect-failed, or a probe result name such as
    probe.leftovers)."""
    from . import catalogue
    from .registry import ExtraCheckError
    from .render import plain  # a site's extra check is text from outside

    try:
        found = catalogue.resolve(code)
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None
    if found:
        click.echo("\n\n".join(plain(catalogue.text(e)) for e in found))
        return
    raise click.BadParameter(
        f"no code {code!r}; `meshdoctor list-checks --all` lists every "
        "code (checks MD1xx-MD4xx, probe MD5xx, signatures MD6xx, fixes "
        "MD7xx)",
        param_hint="CODE",
    )


@cli.command()
def schema() -> None:
    """Print the JSON Schema every --json verdict validates against."""
    from importlib import resources

    click.echo(
        resources.files("meshdoctor").joinpath("verdict.schema.json").read_text(encoding="utf-8"),
        nl=False,
    )


@cli.command(
    epilog=EXIT_CODES_HELP + " A run whose memory need exceeds what is available on "
    "this host is refused as a usage error (exit 2) with the numbers.",
    short_help="Prove the mesh moves data: real MLX collectives, exact values, busbw.",
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
    type=click.Choice(["ring", "jaccl", "jaccl-ring", "nccl"]),
    default=None,
    help="Backend (default: the hostfile's, else nccl when MLX is the "
    "CUDA build, else ring, as mlx.launch).",
)
@click.option(
    "--op",
    type=click.Choice(
        ["all_sum", "all_gather", "send_recv", "all_max", "all_min", "sum_scatter", "all"]
    ),
    default="all",
    show_default=True,
    help="Collective(s) to probe; all: every op the backend has in the installed MLX "
    "(the others are listed as skipped, with the MLX version that adds them).",
)
@click.option(
    "--size",
    default="256MiB",
    show_default=True,
    help="Message size per rank: 4096, 64KB, 256MiB, 1GiB (all_gather: the gathered "
    "output, sum_scatter: the whole input, as nccl-tests).",
)
@click.option(
    "--iters",
    type=click.IntRange(1, 100000),
    default=5,
    show_default=True,
    help="Timed iterations per op.",
)
@click.option(
    "--warmup",
    type=click.IntRange(0, 1000),
    default=1,
    show_default=True,
    help="Untimed iterations per op first.",
)
@click.option(
    "--dtype",
    type=click.Choice(list(DTYPES)),
    default="float32",
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
    default=0,
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
    help="ring: first TCP port (rank ports follow); jaccl: coordinator port (32323); "
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
    from .probe.setup import ProbeSetupError, make_config

    try:
        cfg = make_config(
            hostfile=_load_hostfile(hostfile),
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
            given=[
                x
                for x, v in (("--hostfile", hostfile), ("--hosts", hosts), ("-n", nranks))
                if v is not None
            ],
        )
    except ProbeSetupError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    verdict = Verdict(command="probe", strict=strict)
    if cfg.hostfile is not None and (hostfile or hosts) and not no_check:
        from .fleet import FleetOptions, gate_probe

        # the fleet check runs with the interpreter the remote ranks will use
        if not gate_probe(cfg.hostfile, verdict, FleetOptions(python=cfg.remote_python)):
            emit(verdict, as_json=as_json, quiet=quiet)
    from .interrupts import Interrupts

    interrupts = Interrupts()  # SIGINT/SIGTERM/SIGHUP: stop watching, still tear down and report
    interrupts.install()
    try:
        from .probe.config import collective_deadline, steps_per_rank
        from .probe.launcher import run_probe
        from .probe.report import build

        if not as_json and sys.stderr.isatty():
            from .probe.progress import ProbeProgress

            with ProbeProgress(steps_per_rank(cfg), cfg.world_size) as bar:
                run = run_probe(cfg, on_event=bar.on_event, interrupts=interrupts)
        elif not quiet and not sys.stderr.isatty():  # a log: a line at a bounded rate
            from .probe.log import ProbeLog

            with ProbeLog(cfg.world_size, collective_deadline(cfg), sys.stderr) as log:
                run = run_probe(cfg, on_event=log.on_event, interrupts=interrupts)
        else:
            run = run_probe(cfg, interrupts=interrupts)
        build(run, verdict)
    except Exception as exc:  # never lose the verdict
        verdict.results.append(
            Result(
                code="MD100",
                check="meshdoctor",
                status="error",
                summary=f"internal error: {type(exc).__name__}: {exc}",
            )
        )
    emit(verdict, as_json=as_json, quiet=quiet)


class Duration(click.ParamType):
    """A positive duration: ``90s``, ``30m``, ``2h``, ``1d`` (a bare number is seconds)."""

    name = "duration"

    def convert(self, value, param, ctx):
        from .triage.collect import parse_duration

        if isinstance(value, float):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@cli.command(
    short_help="Find the first cause of a failed MLX job in logs and crash reports.",
    epilog=EXIT_CODES_HELP + " triage: 1 when a failure was found, 0 when the inputs "
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
    help="Also read macOS crash reports (.ips) of python/MLX processes from DIR, or "
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
@click.option(
    "--hostfile",
    type=click.Path(dir_okay=False),
    default=None,
    help="Read FILEs and the recent crash reports on every host of this mlx.launch "
    "hostfile over ssh (in parallel, each host under a deadline).",
)
@click.option(
    "--exit-code",
    "exit_code",
    type=int,
    default=None,
    metavar="N",
    help="The job's exit status as the wrapper saw it (mlx.launch's 0 proves "
    "nothing; 255, 75, -15, 137 and the like are explained).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
def triage(
    files: tuple,
    crash_reports: Optional[str],
    since: Optional[float],
    hostfile: Optional[str],
    exit_code: Optional[int],
    as_json: bool,
    quiet: bool,
) -> None:
    """Find the first cause of a failed MLX job in its logs, exit status and crash reports.

    Reads rank logs, mlx.launch output ('[WARN] Node with rank R exited with code C'), exo-style
    runner logs, Python tracebacks and macOS crash reports from FILEs or standard input (-), in
    bounded memory whatever their size. Every finding goes on one timeline; the earliest
    failure that explains the others is the FIRST CAUSE, the rest are marked as its
    consequences.
    """
    from .triage.command import run as run_triage

    hf = _load_hostfile(hostfile)
    if not files and crash_reports is None and hf is None and exit_code is None:
        raise click.UsageError(
            "nothing to triage: give log FILEs, - for standard input, "
            "--crash-reports, --hostfile or --exit-code"
        )
    hosts = list(dict.fromkeys(h.ssh for h in hf.hosts if h.ssh)) if hf is not None else []
    try:
        verdict = run_triage(
            list(files),
            crash_reports=crash_reports,
            since_s=since,
            hosts=hosts,
            exit_code=exit_code,
        )
    except Exception as exc:  # never lose the verdict
        verdict = Verdict(command="triage")
        verdict.results.append(
            Result(
                code="MD100",
                check="meshdoctor",
                status="error",
                summary=f"internal error: {type(exc).__name__}: {exc}",
            )
        )
    emit(verdict, as_json=as_json, quiet=quiet)


def _complete_fixes(ctx, param, incomplete: str):
    """Shell completion for fix names."""
    from .fixengine import all_fixes

    return [f.name for f in all_fixes() if f.name.startswith(incomplete.lower())]


@cli.command(
    short_help="Plan, apply (--yes) and verify repairs of the mesh.",
    epilog=EXIT_CODES_HELP + " Plan only (no --yes, no terminal): exit 1 while steps are pending.",
)
@click.argument("names", nargs=-1, metavar="[NAME]...", shell_complete=_complete_fixes)
@click.option("--list", "list_", is_flag=True, help="List the fixes with the codes they resolve.")
@click.option("--yes", "-y", is_flag=True, help="Apply the plan without asking.")
@click.option(
    "--hostfile",
    type=click.Path(dir_okay=False),
    default=None,
    help="The mlx.launch hostfile: act on every host in it (others over ssh).",
)
@click.option(
    "--include-running",
    is_flag=True,
    help="Also stop ranks whose job is still running (their launcher is alive).",
)
@click.option(
    "--output-hostfile",
    type=click.Path(dir_okay=False),
    default=None,
    help="auto-setup: where mlx.distributed_config writes the new hostfile.",
)
@click.option(
    "--timeout",
    type=Seconds(0.1, 3600),
    default=10.0,
    show_default=True,
    help="Deadline in seconds for each check the fixes run.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
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
    """Plan, apply and verify fixes: stale-ranks, reset-group, auto-setup, bridge0.

    Without NAME it runs the checks and plans the fixes for the failures found. It changes
    nothing without --yes (on a terminal it shows the plan and asks once). Every step is
    reported as an action (host, step, command, changed, outcome); the verdict is go when
    every fix verified.
    """
    from . import fixcmd

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
    hf = _load_hostfile(hostfile)
    tty = sys.stdin.isatty() and sys.stderr.isatty()

    def ask(actions) -> bool:
        from . import render

        render.actions(
            [a.to_dict() for a in actions], out=render.console(stderr=True), heading="Plan:"
        )
        return click.confirm("Apply this plan?", default=False, err=True)

    try:
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
    except Exception as exc:  # never lose the verdict
        verdict = Verdict(command="fix")
        verdict.results.append(
            Result(
                code="MD100",
                check="meshdoctor",
                status="error",
                summary=f"internal error: {type(exc).__name__}: {exc}",
            )
        )
    shown = [
        a
        for a in verdict.actions or []
        if not quiet or str(a.get("outcome", "")).startswith("failed")
    ]
    if not as_json and shown:
        from . import render

        planned = any(a.get("outcome") == "planned" for a in shown)
        render.actions(
            shown, heading="Plan (nothing changed; add --yes to apply):" if planned else "Actions:"
        )
    elif not as_json and not quiet and not verdict.results:
        click.echo("Nothing to fix: no check failed that a fix resolves.")
    emit(verdict, as_json=as_json, quiet=quiet)


def _usable_streams() -> None:
    """A closed stdout or stderr (``>&-``) becomes /dev/null; a stream whose encoding cannot
    carry every character (``PYTHONIOENCODING=ascii``, a latin-1 terminal) replaces what it
    cannot encode instead of raising (the renderer also falls back to ASCII symbols)."""
    import os

    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        if stream is None:
            try:
                os.fstat(fd)
            except OSError:
                devnull = os.open(os.devnull, os.O_WRONLY)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))
            continue
        try:
            "\u2714\u2192".encode(stream.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            try:
                stream.reconfigure(errors="replace")
            except (AttributeError, ValueError):
                pass


def _exit_3_on_termination() -> None:
    """SIGTERM and SIGHUP end any command like Ctrl-C does (exit 3, could not assess), not with
    the shell's 128 + signal; ``check`` and ``probe`` install their own handling on top
    (:mod:`meshdoctor.interrupts`)."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), handler)


def main() -> None:
    """Console entry point. Usage errors exit 2 (click's); an interrupt (Ctrl-C, SIGTERM) outside
    the probe's and check's own handling, or an unexpected crash, exits 3 "could not assess",
    never 1. A closed or broken stdout is not a verdict: the command ends quietly with the exit
    status it would have had (0 for the listings)."""
    _usable_streams()
    _exit_3_on_termination()
    try:
        rv = cli.main(
            prog_name="meshdoctor", complete_var="_MESHDOCTOR_COMPLETE", standalone_mode=False
        )
    except click.ClickException as exc:
        exc.show()
        _exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        from . import execute

        execute.stop_all(final=True)
        sys.stderr.write("meshdoctor: interrupted; nothing was assessed\n")
        _exit(EXIT_UNKNOWN)
    except SystemExit as exc:
        _exit(exc.code)
    except Exception as exc:  # pragma: no cover - last resort
        sys.stderr.write(f"meshdoctor: internal error: {type(exc).__name__}: {exc}\n")
        _exit(EXIT_UNKNOWN)
    _exit(rv if isinstance(rv, int) else 0)


def _exit(code) -> None:
    """Flush stdout (a reader gone by now is not an error) and exit with ``code``."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        _silence_stdout()
    except OSError:
        pass
    sys.exit(code)
