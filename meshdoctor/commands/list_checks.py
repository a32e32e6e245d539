"""``meshdoctor list-checks``: every check (``--all``: every code of the catalogue)."""

from __future__ import annotations

import json

import click

from meshdoctor.commands.options import load_checks


@click.command("list-checks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="List every code of the catalogue: also the internal error, the probe's "
    "codes (MD5xx), the failure signatures (MD6xx, MD8xx) and the fixes (MD7xx).",
)
def list_checks(as_json: bool, everything: bool) -> None:
    """List every check with its code, name, platforms and title."""
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
