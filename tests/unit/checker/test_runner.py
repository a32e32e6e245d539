"""meshdoctor.checker.runner: what a check returns is checked."""

from __future__ import annotations

from meshdoctor.checker.model import Check, Doc, ok
from meshdoctor.checker.runner import run_checks
from meshdoctor.facts.context import NodeContext


def test_runner_turns_a_wrong_return_type_into_error():
    doc = Doc(meaning="m", why="w", action="a", sources=("s",))
    bad = Check(code="MD197", name="t.bad", title="t", run=lambda ctx: ["not a finding"], doc=doc)
    good = Check(code="MD196", name="t.good", title="t", run=lambda ctx: ok("fine"), doc=doc)
    res = run_checks([bad, good], NodeContext(), timeout=2)
    assert [r.status for r in res] == ["error", "ok"]
    assert "TypeError" in res[0].summary
