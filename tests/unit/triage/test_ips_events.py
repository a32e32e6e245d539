"""meshdoctor.triage.ips on GPU restart (bug_type 284) and EXC_RESOURCE (385) reports, whose body
layout is not published: any body (JSON of any shape, text, bytes) gives the report's finding
or a warning, never an exception."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshdoctor.triage import ips

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda kids: (
        st.lists(kids, max_size=6) | st.dictionaries(st.text(max_size=12), kids, max_size=6)
    ),
    max_leaves=60,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["284", "385"]), st.one_of(JSON.map(json.dumps), st.text(max_size=2000)))
def test_any_body_of_an_undocumented_report_is_read_without_raising(kind, body):
    header = json.dumps({"bug_type": kind, "name": "python3.12", "timestamp": "2026-01-05"})
    summary, match, when, warnings = ips.parse((header + "\n" + body).encode(), "r.ips")
    assert summary is not None and summary["bug_type"] == kind
    assert "no published layout" in summary["read"]
    assert match is None or match.code == {"284": "MD693", "385": "MD694"}[kind]


def test_a_body_nested_deeper_than_it_is_walked_is_still_read():
    header = json.dumps({"bug_type": "385", "name": "python3.12"})
    body = '{"a":' * 900 + '"memory"' + "}" * 900
    summary, match, _, _ = ips.parse((header + "\n" + body).encode(), "r.ips")
    assert match is not None and match.code == "MD694"


def test_a_header_only_report_says_it_is_truncated():
    header = json.dumps({"bug_type": "284", "name": "GPURestart"})
    summary, match, _, warnings = ips.parse((header + "\n").encode(), "r.ips")
    assert match.code == "MD693" and any("only its header line" in w for w in warnings)


def test_the_event_names_the_resource_before_the_rest_of_the_text():
    header = json.dumps({"bug_type": "385", "name": "python3.12"})
    body = (
        "Command:          python3.12\n"
        "PID:              48213\n"
        "Event:            cpu usage\n"
        "Action taken:     none\n"
        "CPU:              90 seconds cpu time over 107 seconds (84% cpu average), exceeding "
        "limit of 50% cpu over 180 seconds\n"
        "Footprint:        30.20 GB (memory in use)\n"
    )
    summary, match, _, _ = ips.parse((header + "\n" + body).encode(), "r.ips")
    assert (summary["resource"], summary["killed"], summary["role"]) == ("cpu", False, "either")
    assert summary["limit"] == "50% cpu over 180 seconds"
    assert match.line == (
        "python3.12[48213] EXC_RESOURCE cpu (limit 50% cpu over 180 seconds): not killed"
    )
