"""``meshdoctor explain``: what a finding code or name means and what to do."""

from __future__ import annotations

import click


def _complete_explain(ctx, param, incomplete: str):
    """Shell completion for ``explain``: every code of the catalogue and every name it knows
    (checks, fixes, signatures, probe result names)."""
    from meshdoctor import catalogue
    from meshdoctor.checker.registry import ExtraCheckError

    try:
        found = catalogue.entries()
    except ExtraCheckError:
        found = catalogue.entries([k for k in catalogue.KINDS if k != catalogue.CHECK])
    words = [e.code for e in found] + [n for e in found for n in e.names]
    return sorted({w for w in words if w.lower().startswith(incomplete.lower())})


@click.command()
@click.argument("code", shell_complete=_complete_explain)
def explain(code: str) -> None:
    """Say what a finding code means and what to do (e.g. MD203, MD601, a check name such as
    rdma.gid, a signature name such as ring.connect-failed, or a probe result name such as
    probe.leftovers)."""
    from meshdoctor import catalogue
    from meshdoctor.checker.registry import ExtraCheckError
    from meshdoctor.render.style import plain  # a site's extra check is text from outside

    try:
        found = catalogue.resolve(code)
    except ExtraCheckError as exc:
        raise click.UsageError(str(exc)) from None
    if found:
        import shutil

        # prose wrapped to the terminal (COLUMNS, else the tty's width; 99 for a pipe), at most
        # 98 columns: paragraphs are re-flowed, so no word is left alone on a line
        width = max(40, min(shutil.get_terminal_size((99, 24)).columns - 1, 98))
        click.echo("\n\n".join(plain(catalogue.text(e, width)) for e in found))
        return
    raise click.BadParameter(
        f"no code {code!r}; `meshdoctor list-checks --all` lists every "
        "code (checks MD1xx-MD4xx, probe MD5xx, signatures MD6xx and MD8xx, fixes "
        "MD7xx)",
        param_hint="CODE",
    )
