"""``meshdoctor schema``: the JSON Schema of every ``--json`` verdict."""

from __future__ import annotations

import click


@click.command()
def schema() -> None:
    """Print the JSON Schema every --json verdict validates against."""
    from importlib import resources

    click.echo(
        resources.files("meshdoctor").joinpath("verdict.schema.json").read_text(encoding="utf-8"),
        nl=False,
    )
