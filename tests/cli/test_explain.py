"""``meshdoctor explain``: codes, signature and result names, completions, each check's words."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import run_cli


def test_explain_accepts_a_signature_name_and_lists_every_code():
    r = run_cli("explain", "ring.connect-failed")
    assert r.rc == 0 and r.out.startswith("MD621")
    r = run_cli("list-checks", "--all", "--json")
    codes = [x["code"] for x in json.loads(r.out)]
    assert {"MD101", "MD503", "MD510", "MD601"} <= set(codes)


def test_explain_completes_every_code_and_name_and_knows_result_names():
    from click.shell_completion import ShellComplete

    from meshdoctor.cli import cli

    comp = ShellComplete(cli, {}, "meshdoctor", "_MESHDOCTOR_COMPLETE")
    words = [c.value for c in comp.get_completions(["explain"], "")]
    assert {
        "MD101",
        "MD503",
        "MD506",
        "MD601",
        "rdma.gid",
        "ring.connect-failed",
        "probe.leftovers",
    } <= set(words)
    assert [c.value for c in comp.get_completions(["explain"], "MD5")][:2] == ["MD501", "MD502"]
    r = run_cli("explain", "probe.leftovers")
    assert r.rc == 0 and r.out.startswith("MD506: probe leftovers")
    r = run_cli("explain", "probe.all_sum")
    assert r.rc == 0 and "MD504" in r.out and "MD505" in r.out


@pytest.mark.parametrize(
    "code, words",
    [
        ("MD201", "rdma_ctl enable"),
        ("MD202", "PORT_ACTIVE"),
        ("MD203", "IPv4-mapped"),
        ("MD204", "10 QPs"),
        ("MD205", "bridge0"),
    ],
)
def test_explain(code, words):
    r = run_cli("explain", code)
    assert r.rc == 0 and words in r.out and "What to do" in r.out


def _filled(text: str, width: int) -> list:
    """Lines that end a wrapped line early: the next line of the same paragraph (same
    indentation, not a list item) would have fitted on it, i.e. an orphan-making break."""
    bad = []
    lines = text.splitlines()
    for a, b in zip(lines, lines[1:]):
        if not a.strip() or not b.strip() or a.endswith(":") or b.lstrip().startswith("- "):
            continue
        if len(a) - len(a.lstrip()) != len(b) - len(b.lstrip()) or not a.startswith("  "):
            continue
        if len(a) + 1 + len(b.split()[0]) <= width:
            bad.append((a, b))
    return bad


@pytest.mark.parametrize("columns", [80, 120])
def test_explain_wraps_whole_paragraphs_leaving_no_orphan_words(columns):
    # reported: explain re-wrapped each source line, leaving words alone on a line (MD110,
    # MD201-205, MD401, MD403, MD601, MD635, MD642, MD704), at 80 columns and at 120
    from meshdoctor import catalogue

    width = min(columns - 1, 98)
    for e in catalogue.entries():
        body = catalogue.text(e, width).split("\nSources:")[0]
        assert not _filled(body, width), (e.code, _filled(body, width)[:2])
    r = run_cli("explain", "MD110", env=dict(os.environ, COLUMNS=str(columns)))
    assert r.rc == 0 and max(len(x) for x in r.out.split("Sources:")[0].splitlines()) <= width
    assert "\n  the\n" not in r.out and "\n  when\n" not in r.out
