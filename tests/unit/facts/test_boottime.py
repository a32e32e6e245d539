"""meshdoctor.facts.boottime: ``sysctl kern.boottime`` parsed, garbage named."""

from __future__ import annotations

import pytest

from meshdoctor.facts.boottime import BootTimeError, parse_kern_boottime


def test_kern_boottime_is_parsed_and_garbage_is_named():
    text = "{ sec = 1732950000, usec = 500000 } Sat Nov 30 07:40:00 2024\n"
    assert parse_kern_boottime(text) == 1732950000.5
    with pytest.raises(BootTimeError, match="no boot time"):
        parse_kern_boottime("kern.boottime: unknown oid")
