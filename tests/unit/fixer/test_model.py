"""meshdoctor.fixer.model: typed fix actions and the schema that admits them."""

from __future__ import annotations

import jsonschema
import pytest

from meshdoctor.fixer.model import Action
from tests.helpers import validate


def _doc(actions):
    return {
        "schema_version": 2,
        "tool": {"name": "meshdoctor", "version": "0"},
        "command": "fix",
        "verdict": "go",
        "exit_code": 0,
        "needs_reboot": [],
        "started_at": "2026-11-30T00:00:00+00:00",
        "duration_s": 0.1,
        "hosts": [],
        "results": [
            {
                "code": "MD701",
                "check": "fix.stale-ranks",
                "host": "m1",
                "status": "ok",
                "severity": "info",
                "summary": "ok",
                "evidence": {},
                "duration_s": 0,
                "remediation": {"text": "t", "fix": "MD701"},
            }
        ],
        "actions": actions,
    }


def test_schema_admits_typed_actions_and_md7xx_and_refuses_a_bad_one():
    a = Action(
        "MD701",
        "m1",
        "stop pid 5",
        ["kill", "-TERM", "5"],
        changed=True,
        outcome="done: exited after SIGTERM",
    )
    validate(_doc([a.to_dict(), {"action": "SIGTERM rank 0", "outcome": "sent"}]))
    bad = dict(a.to_dict(), code="MD301")
    with pytest.raises(jsonschema.ValidationError):
        validate(_doc([bad]))
    assert Action.from_dict(a.to_dict()) == a
