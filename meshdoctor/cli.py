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
    "failed), 2 usage error, 3 could not assess (a check in error, an unreachable host, an "
    "internal error)."
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
            self.fail(f"{value!r} must be a number of seconds from {self.low:g} to "
                      f"{self.high:g}", param, ctx)
        return v


def _complete_codes(ctx, param, incomplete: str):
    """Shell completion for check codes (``--only``, ``--skip``, ``explain``)."""
    from .registry import all_checks

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    return [prefix + c.code for c in all_checks() if c.code.lower().startswith(last.lower())]


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


def emit(verdict: Verdict, *, as_json: bool, quiet: bool = False,
         titles: Optional[dict] = None) -> None:
    """Print ``verdict`` (JSON or rich) and exit with its exit code."""
    verdict.finish()
    try:
        if as_json:
            sys.stdout.write(to_json(verdict.to_dict()) + "\n")
            sys.stdout.flush()
        else:
            from . import render

            render.verdict(verdict, quiet=quiet, titles=titles or {})
    except BrokenPipeError:  # the reader went away (`| head`): the exit code still tells
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(verdict.exit_code)


def _load_hostfile(path: Optional[str]):
    if path is None:
        return None
    from .hostfile import HostfileError, load

    try:
        return load(path)
    except HostfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--hostfile") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="meshdoctor")
def cli() -> None:
    """Doctor and repair tool for MLX distributed meshes (JACCL over Thunderbolt, TCP ring).

    Run `meshdoctor check` before a launch and gate on its exit code; `meshdoctor explain CODE`
    says what a finding means and what to do.
    """


@cli.command(epilog=EXIT_CODES_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
@click.option("--strict", is_flag=True, help="Treat warnings as failures (no-go).")
@click.option("--only", multiple=True, metavar="CODE,...", shell_complete=_complete_codes,
              help="Run only these checks (codes or names, comma-separated).")
@click.option("--skip", multiple=True, metavar="CODE,...", shell_complete=_complete_codes,
              help="Do not run these checks (codes or names, comma-separated).")
@click.option("--timeout", type=Seconds(0.1, 3600), default=10.0, show_default=True,
              help="Deadline in seconds for each check; each external command gets 45% of it.")
@click.option("--hostfile", type=click.Path(dir_okay=False), default=None,
              help="The mlx.launch hostfile (JSON) of the mesh this node belongs to.")
def check(as_json: bool, quiet: bool, strict: bool, only: tuple, skip: tuple, timeout: float,
          hostfile: Optional[str]) -> None:
    """Inspect this node and give a go/no-go verdict for a launch."""
    from .context import NodeContext
    from .hostfile import local_ranks
    from .registry import all_checks, select
    from .runner import run_checks

    hf = _load_hostfile(hostfile)
    verdict = Verdict(command="check", strict=strict)
    try:
        checks = all_checks()
        only_l, skip_l = _split_codes(only), _split_codes(skip)
        known = {c.code.lower() for c in checks} | {c.name.lower() for c in checks}
        unknown = [k for k in only_l + skip_l if k.lower() not in known]
        if unknown:
            raise click.BadParameter(f"unknown check {', '.join(unknown)}; see "
                                     "`meshdoctor list-checks`", param_hint="--only/--skip")
        selected = select(checks, only_l, skip_l)
        if not selected:
            raise click.BadParameter("--only and --skip leave no check to run; a gate that "
                                     "runs nothing must not say go", param_hint="--only/--skip")
        ranks = local_ranks(hf) if hf is not None else []
        host = (hf.hosts[ranks[0]].ssh if hf is not None and ranks else "") or \
            socket.gethostname().split(".")[0] or "localhost"
        ctx = NodeContext(host=host, hostfile=hf, ranks=ranks,
                          command_timeout=max(0.05, timeout * COMMAND_SHARE))
        verdict.hosts.append(HostInfo(host=host, rank=ranks[0] if ranks else None,
                                      platform={"os": ctx.platform}))
        verdict.results.extend(run_checks(selected, ctx, timeout=timeout))
        titles = {c.code: c.title for c in checks}
    except click.ClickException:
        raise
    except Exception as exc:  # never lose the verdict
        verdict.results.append(Result(code="MD100", check="meshdoctor", status="error",
                                      summary=f"internal error: {type(exc).__name__}: {exc}"))
        titles = {}
    emit(verdict, as_json=as_json, quiet=quiet, titles=titles)


@cli.command("list-checks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.option("--all", "everything", is_flag=True,
              help="Also list the probe's codes (MD5xx) and the failure signatures (MD6xx).")
def list_checks(as_json: bool, everything: bool) -> None:
    """List every check with its code, name, platforms and title."""
    from .registry import all_checks

    rows = [{"code": c.code, "name": c.name, "title": c.title, "platforms": list(c.platforms)}
            for c in all_checks()]
    if everything:
        from . import codes
        from .probe import codes as _probe_codes  # noqa: F401  (registers MD5xx and MD6xx)

        rows += [{"code": k, "name": "", "title": t, "platforms": []}
                 for k, (t, _) in sorted(codes.CATALOGUE.items())]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['code']}  {r['name']:<18} {','.join(r['platforms']):<13} {r['title']}")


@cli.command()
@click.argument("code", shell_complete=_complete_codes)
def explain(code: str) -> None:
    """Say what a finding code means and what to do (e.g. MD203, MD601)."""
    from . import codes
    from .probe import codes as _probe_codes  # noqa: F401  (registers MD5xx and MD6xx)
    from .registry import all_checks

    key, name = code.strip().upper(), code.strip().lower()
    for c in all_checks():
        if c.code == key or c.name.lower() == name:
            click.echo(f"{c.code} {c.name}: {c.title}\n")
            click.echo(c.explain.strip())
            click.echo(f"\nApplies to: {', '.join(c.platforms)}")
            return
    found = codes.lookup(code)
    if found is not None:
        k, title, text = found
        click.echo(f"{k}: {title}\n")
        click.echo(text.strip())
        return
    raise click.BadParameter(f"no code {code!r}; `meshdoctor list-checks --all` lists every "
                             "code (checks MD1xx-MD4xx, probe MD5xx, signatures MD6xx)",
                             param_hint="CODE")


@cli.command()
def schema() -> None:
    """Print the JSON Schema every --json verdict validates against."""
    from importlib import resources

    click.echo(resources.files("meshdoctor").joinpath("verdict.schema.json")
               .read_text(encoding="utf-8"), nl=False)


@cli.command(epilog=EXIT_CODES_HELP + " A run whose memory need exceeds what is available on "
             "this host is refused as a usage error (exit 2) with the numbers.")
@click.option("--hostfile", type=click.Path(dir_okay=False), default=None,
              help="The mlx.launch hostfile (JSON): one rank per host entry, remote over ssh.")
@click.option("--hosts", default=None, metavar="A,B,C",
              help="Hosts (IPs for ring) instead of a hostfile, one rank each.")
@click.option("-n", "nranks", type=click.IntRange(2, 64), default=None,
              help="Ranks on this machine over loopback (default 2, ring).")
@click.option("--backend", type=click.Choice(["ring", "jaccl", "jaccl-ring"]), default=None,
              help="Backend (default: the hostfile's, else ring).")
@click.option("--op", type=click.Choice(["all_sum", "all_gather", "send_recv", "all_max",
                                         "all_min", "sum_scatter", "all"]),
              default="all", show_default=True,
              help="Collective(s) to probe; all: every op the backend has in the installed MLX "
                   "(the others are listed as skipped, with the MLX version that adds them).")
@click.option("--size", default="256MiB", show_default=True,
              help="Message size per rank: 4096, 64KB, 256MiB, 1GiB (all_gather: the gathered "
                   "output, sum_scatter: the whole input, as nccl-tests).")
@click.option("--iters", type=click.IntRange(1, 100000), default=5, show_default=True,
              help="Timed iterations per op.")
@click.option("--warmup", type=click.IntRange(0, 1000), default=1, show_default=True,
              help="Untimed iterations per op first.")
@click.option("--dtype", type=click.Choice(list(DTYPES)),
              default="float32", show_default=True, help="Element type.")
@click.option("--timeout", type=Seconds(0.1, 86400), default=None,
              help="Per-collective deadline in seconds (default: 10 s + bus bytes / 20 MB/s).")
@click.option("--soak", type=click.IntRange(0, 1000000), default=0,
              help="Run each op N times with a per-call deadline, relaunching after a hang; "
                   "report the hang rate.")
@click.option("--pairs", is_flag=True, help="send/recv between every pair of ranks: N x N "
              "bandwidth matrix, slowest or failing pair named.")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="ring: first TCP port (rank ports follow); jaccl: coordinator port (32323).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failures and errors.")
def probe(hostfile: Optional[str], hosts: Optional[str], nranks: Optional[int],
          backend: Optional[str], op: str, size: str, iters: int, warmup: int, dtype: str,
          timeout: Optional[float], soak: int, pairs: bool, port: Optional[int],
          as_json: bool, quiet: bool) -> None:
    """Prove the mesh moves data: real MLX collectives on every rank, exact values, busbw.

    Starts one rank per hostfile entry (over ssh -o BatchMode=yes for remote hosts), or -n
    ranks on this machine over loopback. Each collective has a deadline; on a hang it names the
    ranks that never arrived, captures stacks and tears every rank down. Figures follow
    nccl-tests (algbw, busbw in GB/s = 1e9 bytes/s).
    """
    from .probe import codes as probe_codes
    from .probe.setup import ProbeSetupError, make_config

    try:
        cfg = make_config(hostfile=_load_hostfile(hostfile), hosts=hosts, nranks=nranks,
                          backend=backend, op=op, size=size, iters=iters, warmup=warmup,
                          dtype=dtype, timeout=timeout, soak=soak, pairs=pairs, port=port,
                          given=[x for x, v in (("--hostfile", hostfile), ("--hosts", hosts),
                                                ("-n", nranks)) if v is not None])
    except ProbeSetupError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param) from None
    verdict = Verdict(command="probe")
    from .probe.interrupts import Interrupts

    interrupts = Interrupts()  # SIGINT/SIGTERM/SIGHUP: stop watching, still tear down and report
    interrupts.install()
    try:
        from .probe.config import steps_per_rank
        from .probe.launcher import run_probe
        from .probe.report import build

        if not as_json and sys.stderr.isatty():
            from .probe.progress import ProbeProgress

            with ProbeProgress(steps_per_rank(cfg), cfg.world_size) as bar:
                run = run_probe(cfg, on_event=bar.on_event, interrupts=interrupts)
        else:
            run = run_probe(cfg, interrupts=interrupts)
        build(run, verdict)
    except Exception as exc:  # never lose the verdict
        verdict.results.append(Result(code="MD100", check="meshdoctor", status="error",
                                      summary=f"internal error: {type(exc).__name__}: {exc}"))
    emit(verdict, as_json=as_json, quiet=quiet, titles=probe_codes.TITLES)


def main() -> None:
    """Console entry point. Usage errors exit 2 (click's); an interrupt (Ctrl-C) outside the
    probe's own handling, or an unexpected crash, exits 3 "could not assess", never 1."""
    try:
        rv = cli.main(prog_name="meshdoctor", complete_var="_MESHDOCTOR_COMPLETE",
                      standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        sys.stderr.write("meshdoctor: interrupted; nothing was assessed\n")
        sys.exit(EXIT_UNKNOWN)
    except SystemExit:
        raise
    except Exception as exc:  # pragma: no cover - last resort
        sys.stderr.write(f"meshdoctor: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(EXIT_UNKNOWN)
    sys.exit(rv if isinstance(rv, int) else 0)
