"""No RDMA/Thunderbolt parser can be made to raise: random text, truncated and shuffled fixtures,
random JSON for system_profiler (no parser can be made to raise)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshdoctor.parsers.ibv import (
    normalize_gid,
    parse_ibv_devices,
    parse_ibv_devinfo,
    parse_rdma_ctl_status,
    to_int,
    value_and_code,
)
from meshdoctor.parsers.macos_links import (
    parse_ifconfig,
    parse_networksetup_ports,
    parse_speed,
    parse_system_profiler_tb,
)
from meshdoctor.facts.thunderbolt import build
from tests.stubs import FIXTURES

TEXT_PARSERS = [
    lambda t: parse_ibv_devinfo(t),
    lambda t: parse_ibv_devinfo("", t),
    parse_ibv_devices,
    parse_rdma_ctl_status,
    parse_system_profiler_tb,
    parse_networksetup_ports,
    parse_ifconfig,
    normalize_gid,
    value_and_code,
    to_int,
    parse_speed,
]

SAMPLES = sorted(
    p.read_text()
    for p in FIXTURES.glob("*/*.txt")
    if not p.name.startswith(("sw_vers", "vm_stat", "sysctl", "uname"))
)

# Text built from the characters these formats are made of, so the parsers' branches are hit.
FORMAT_ALPHABET = st.sampled_from(
    list('\t \n:[]()0123456789abcdefx.,-_=<>{}"/%')
    + [
        "hca_id:",
        "port:",
        "state:",
        "GID[",
        "::ffff:",
        "PORT_ACTIVE (4)",
        "Hardware Port: ",
        "Device: ",
        "flags=8863<UP>",
        "inet ",
        "status: active",
        "member: ",
        "receptacle_1_tag",
        "domain_uuid_key",
        "_items",
        "Gb/s",
    ]
)
format_text = st.lists(FORMAT_ALPHABET, max_size=200).map("".join)
relaxed = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _all(text):
    for parse in TEXT_PARSERS:
        parse(text)
    build(parse_system_profiler_tb(text), parse_networksetup_ports(text), parse_ifconfig(text))


@relaxed
@given(st.text())
def test_random_unicode_never_raises(text):
    _all(text)


@relaxed
@given(format_text)
def test_format_shaped_noise_never_raises(text):
    _all(text)


@relaxed
@given(st.sampled_from(SAMPLES), st.data())
def test_truncated_fixtures_never_raise(sample, data):
    cut = data.draw(st.integers(0, len(sample)))
    _all(sample[:cut])
    _all(sample[cut:])


@relaxed
@given(st.sampled_from(SAMPLES), st.randoms(use_true_random=False))
def test_shuffled_fixture_lines_never_raise(sample, rnd):
    lines = sample.splitlines()
    rnd.shuffle(lines)
    _all("\n".join(lines))


@relaxed
@given(st.binary(max_size=400))
def test_decoded_bytes_never_raise(raw):
    _all(raw.decode("utf-8", "replace"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "_name",
                    "_items",
                    "domain_uuid_key",
                    "receptacle_1_tag",
                    "receptacle_id_key",
                    "current_speed_key",
                    "receptacle_status_key",
                    "mode_key",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@relaxed
@given(json_values)
def test_system_profiler_random_json_never_raises(value):
    parse_system_profiler_tb(json.dumps({"SPThunderboltDataType": value}))
    parse_system_profiler_tb(json.dumps({"SPThunderboltDataType": [value]}))
    parse_system_profiler_tb(json.dumps(value))


def test_non_text_inputs_never_raise():
    for bad in (None, 42, b"bytes", ["list"]):
        for parse in TEXT_PARSERS:
            parse(bad)  # type: ignore[arg-type]
    parse_system_profiler_tb("[" * 100000)  # deep nesting: RecursionError is caught
