"""``meshdoctor explain``: codes, signature and result names, completions, each check's words."""

from __future__ import annotations

import json

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
