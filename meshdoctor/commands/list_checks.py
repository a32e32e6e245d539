"""``meshdoctor list-checks``: every check (``--all``: every code of the catalogue)."""

from __future__ import annotations

import json

import click

from meshdoctor.commands.options import (
    json_option,
    load_checks,
)


@click.command("list-checks")
@json_option("Print the list as JSON.")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="List every code of the catalogue: also the internal error, the probe's "
    "codes (MD5xx), the failure signatures (MD6xx, MD8xx) and the fixes (MD7xx).",
)
@click.option(
    "--coverage",
    is_flag=True,
    help="Print how many of MLX's and NCCL's own error and warning sites (the tables read "
    "from their sources and wheels) the failure signatures read, per component.",
)
def list_checks(as_json: bool, everything: bool, coverage: bool) -> None:
    """List every check with its code, name, platforms and title."""
    if coverage:
        if as_json:  # the --json document is a list of codes (verdict.schema.json)
            raise click.UsageError("--coverage prints a table, not JSON: drop --json")
        _coverage()
        return
    from meshdoctor.codes.engine import FLEET_REACH
    from meshdoctor.checker.fleet_model import all_fleet_checks

    rows = [
        {
            "code": c.code,
            "name": c.name,
            "title": c.title,
            "platforms": list(c.platforms),
            "kind": "check",
        }
        for c in [*load_checks(), *all_fleet_checks()]
    ]
    # fleet mode's own check (every host answered), listed with the cross-node checks
    rows.append(
        {
            "code": FLEET_REACH.code,
            "name": FLEET_REACH.name,
            "title": FLEET_REACH.title,
            "platforms": ["fleet"],
            "kind": "check",
        }
    )
    rows.sort(key=lambda r: r["code"])
    if everything:  # every catalogued code, checks with their platforms
        from meshdoctor import catalogue

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
    from meshdoctor.render.style import plain  # a site's extra check is text from outside

    width = max([18] + [len(r["name"]) for r in rows])
    for r in rows:
        click.echo(
            plain(f"{r['code']}  {r['name']:<{width}} {','.join(r['platforms']):<13} {r['title']}")
        )


def _coverage() -> None:
    """``--coverage``: per table and component, rows, rows covered and rows on a generic
    reading, each row no signature reads (``not read: ...``), then the total line
    (:func:`meshdoctor.signatures.coverage.total_line`)."""
    from meshdoctor.signatures import coverage

    rs = coverage.readings()
    rows = coverage.summary(rs)
    from meshdoctor.render.style import plain

    click.echo(f"{'table':<6} {'component':<14} {'rows':>5} {'covered':>8} {'generic':>8}")
    for d in rows:
        click.echo(
            plain(
                f"{d['table']:<6} {d['component']:<14} {d['rows']:>5} {d['covered']:>8} "
                f"{d['generic']:>8}"
            )
        )
    for r in rs:
        if r.status == coverage.MISSED:
            click.echo(plain(f"not read: {r.site.component} {r.site.where}: {r.site.pattern}"))
    click.echo(coverage.total_line(rs))
