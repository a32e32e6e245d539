"""``meshdoctor bundle``: one support archive of this machine or every host of a hostfile."""

from __future__ import annotations

from typing import Optional

import click

from meshdoctor.cli import EXIT_CODES_PLAIN_HELP
from meshdoctor.commands.options import (
    Duration,
    hostfile_option,
    hosts_option,
    json_option,
    load_hostfile,
    local_only_option,
    one_host_source,
    output_option,
    python_option,
    quiet_option,
    timeout_option,
)

DEFAULT_SINCE_S = 24 * 3600.0


@click.command(epilog=EXIT_CODES_PLAIN_HELP)
@hostfile_option(
    "The mlx.launch hostfile (JSON): collect on every host of it over ssh "
    "('-': read it from standard input).",
    stdin=True,
)
@hosts_option(
    "Hosts to collect on instead.",
    metavar="A,B,C",
)
@output_option(
    "Where to write the archive (default: meshdoctor-bundle-<UTC stamp>.tar.gz here).",
    metavar="FILE.tar.gz",
    short=True,
)
@click.option(
    "--since",
    type=Duration(),
    default=DEFAULT_SINCE_S,
    metavar="DURATION",
    help="Crash and panic reports newer than this (90s, 30m, 2h, 1d; default 1d).",
)
@timeout_option(
    "Deadline in seconds of each host's check; each host's whole share is bounded too.",
    high=600,
)
@python_option()
@json_option()
@quiet_option()
@local_only_option(
    "Collect this host's share and print it as JSON (used on each host).",
    hidden=True,
)
def bundle(
    hostfile: Optional[str],
    hosts: Optional[str],
    output: Optional[str],
    since: float,
    timeout: float,
    python: Optional[str],
    as_json: bool,
    quiet: bool,
    local_only: bool,
) -> None:
    """Collect a support archive (.tar.gz): per host the check verdict, the raw outputs of the
    tools the checks run, versions, the MLX_*/JACCL_*/NCCL_* environment (secrets removed),
    recent crash reports; the hostfile; a MANIFEST of what was collected and what failed."""
    import time

    from meshdoctor.bundle import archive, collect, gather
    from meshdoctor.codes.engine import SUPPORT_BUNDLE
    from meshdoctor.model import ERROR, OK, WARN, Remediation, Result, Verdict
    from meshdoctor.output import emit, report_to, to_json

    one_host_source(**{"--hostfile": hostfile, "--hosts": hosts})
    if hosts is not None:
        from meshdoctor.hostfile.load import HostfileError, from_list

        try:
            hf = from_list(hosts)
        except HostfileError as exc:
            raise click.BadParameter(str(exc), param_hint="--hosts") from None
    else:
        hf = load_hostfile(hostfile)
    text = hf.to_launch_json() if hf is not None else None
    if local_only:  # one host's share, for the operator's meshdoctor (meshdoctor.bundle.gather)
        share = collect.collect_here(text, since, timeout)
        click.echo(to_json({"bundle": share.to_json()}))
        return
    from meshdoctor.checker.here import this_host_name
    from meshdoctor.hostfile.locality import reached

    if hf is None:
        names, local = [this_host_name()], [this_host_name()]
    else:  # as mlx.launch reaches the ranks (and triage the logs): here only for 127.0.0.1
        reach = reached(hf)
        names = list(reach)
        local = [n for n, here in reach.items() if here]
    verdict = report_to(Verdict(command="bundle"), as_json=as_json, quiet=quiet)
    shares = gather.gather(names, local, text, since, timeout, python)
    path = output or time.strftime("meshdoctor-bundle-%Y%m%d-%H%M%S.tar.gz", time.gmtime())

    def result(host: str, status: str, summary: str, **ev) -> Result:
        return Result(
            code=SUPPORT_BUNDLE.code,
            check=SUPPORT_BUNDLE.names[0],
            title=SUPPORT_BUNDLE.title,
            status=status,
            summary=summary,
            host=host,
            evidence=ev,
        )

    for host, share in shares.items():
        if isinstance(share, str):
            verdict.results.append(result(host, WARN, share, archive=path))
            continue
        bad = [m for m in share.manifest if m.get("status") == collect.FAILED]
        got = [m for m in share.manifest if m.get("status") in (collect.COLLECTED, collect.CUT)]
        summary = f"{len(got)} item(s) collected" + (
            f"; failed: {', '.join(m['item'] for m in bad)}" if bad else ""
        )
        verdict.results.append(result(host, WARN if bad else OK, summary, archive=path, failed=bad))
    try:
        archive.write(path, archive.build(shares, text))
    except OSError as exc:
        r = result("mesh", ERROR, f"could not write {path}: {exc.strerror or exc}")
        r.remediation = Remediation("Name a file in a folder you can write with -o.")
        verdict.results.append(r)
    else:
        verdict.results.append(
            result(
                "mesh",
                OK,
                f"wrote {path} ({len(shares)} host(s); MANIFEST.txt inside)",
                archive=path,
            )
        )
    emit(verdict, as_json=as_json, quiet=quiet)
