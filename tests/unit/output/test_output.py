"""meshdoctor.output: JSON output is strict JSON."""

from __future__ import annotations

import json


def test_json_output_is_strict_json_even_with_nan():
    from meshdoctor.output import to_json

    text = to_json({"x": float("nan"), "y": [float("-inf"), 2.0], "z": {"w": 1}})
    assert json.loads(text) == {"x": None, "y": [None, 2.0], "z": {"w": 1}}
    assert "NaN" not in text and "Infinity" not in text
