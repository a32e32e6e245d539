"""Names as a person reads them: a long one cut with its length, an empty one named."""

from __future__ import annotations

import io

from rich.console import Console

from meshdoctor.model import Result, Verdict
from meshdoctor.render import verdict as render
from meshdoctor.render.style import clean_name


def test_names_are_cut_for_display_and_an_empty_one_is_named():
    assert clean_name("h0") == "h0"
    assert clean_name("a" * 5000).endswith("... (5000 characters)")
    assert len(clean_name("a" * 5000)) < 80
    v = Verdict(
        command="check",
        results=[
            Result("MD401", "fleet.hostfile", "fail", "hosts[1].ssh: missing", host=""),
            Result("MD402", "fleet.reach", "error", "x", host="h0"),
        ],
    )
    buf = io.StringIO()
    render.verdict(v, out=Console(file=buf, width=200, highlight=False))
    assert "MD401 (no ssh name) " in buf.getvalue() and "  " not in buf.getvalue().split("\n")[0]
