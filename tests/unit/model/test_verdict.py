"""meshdoctor.model: a verdict's exit codes, and its document against the schema."""

from __future__ import annotations

from meshdoctor.model import Result, Verdict
from tests.helpers import validate


def test_verdict_model_exit_codes_and_schema():
    v = Verdict(command="check")
    assert (v.verdict, v.exit_code) == ("go", 0)
    v.results.append(Result("MD101", "x", "warn", "w"))
    assert v.exit_code == 0
    v.strict = True
    assert v.exit_code == 1
    v.strict = False
    v.results.append(Result("MD102", "x", "error", "e"))
    assert (v.verdict, v.exit_code) == ("unknown", 3)
    v.results.append(Result("MD103", "x", "fail", "f", needs_reboot=True, host="m2"))
    assert (v.verdict, v.exit_code) == ("no-go", 1)
    assert v.needs_reboot == ["m2"]
    validate(v.finish().to_dict())
