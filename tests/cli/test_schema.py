"""``meshdoctor schema``: a valid JSON schema."""

from __future__ import annotations

import json

import jsonschema

from tests.helpers import run_cli


def test_schema_command_prints_a_valid_json_schema():
    r = run_cli("schema")
    assert r.rc == 0
    schema = json.loads(r.out)
    jsonschema.Draft202012Validator.check_schema(schema)
