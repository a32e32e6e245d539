"""The scanner's prefilter (meshdoctor.signatures.scanner): each line signature's regex is tried
only on lines holding one of its required literals, found for all signatures in one automaton
pass; what it finds is exactly what trying every regex finds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from meshdoctor import signatures
from meshdoctor.signatures import scanner

LINE_SIGS = [s for s in signatures.CATALOGUE if s.pattern is not None]
EXAMPLE_LINES = [ln for s in signatures.CATALOGUE for ex in s.examples for ln in ex.splitlines()]


def every_regex(line: str):
    """What the scanner found before the prefilter: every line signature's regex, in order,
    less an envelope (a generic message such as MD653's ``NCCL WARN``) where a specific
    signature matched the same line."""
    line = signatures.strip_ansi(line)
    found = [s for s in LINE_SIGS if s.pattern.search(line)]
    if len(found) > 1 and any(not s.envelope for s in found):
        found = [s for s in found if not s.envelope]
    return [s.code for s in found]


def test_every_line_signature_has_a_required_literal():
    """A signature without one is tried on every line: correct, but the prefilter says so."""
    missing = [s.name for s in LINE_SIGS if not scanner.required_literals(s.pattern)]
    assert missing == []


def test_each_example_holds_a_literal_of_its_signature():
    for s in LINE_SIGS:
        need = scanner.required_literals(s.pattern)
        for ex in s.examples:
            for line in ex.splitlines():
                if s.pattern.search(signatures.strip_ansi(line)):
                    assert any(lit in signatures.strip_ansi(line) for lit in need), (s.name, line)


def test_prefiltered_matching_equals_every_regex_on_the_examples():
    for line in EXAMPLE_LINES:
        assert [m.code for m in signatures.match_line(line)] == every_regex(line), line


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(EXAMPLE_LINES + ["noise", " ", "errno=", "[jaccl] "]), max_size=4),
    st.text(max_size=20),
)
def test_prefiltered_matching_equals_every_regex_on_mixed_lines(parts, noise):
    line = noise.join(parts)
    assert [m.code for m in signatures.match_line(line)] == every_regex(line)


def test_literals_of_regex_shapes():
    lit = scanner.required_literals
    assert lit(re.compile(r"\[jaccl\] Recv failed\b")) == {"[jaccl] Recv failed"}
    assert lit(re.compile(r"(abc|xyz\d+)q")) == {"abc", "xyz"}
    assert lit(re.compile(r"a(bcd)?e")) == {"a"} or lit(re.compile(r"a(bcd)?e")) == {"e"}
    assert lit(re.compile(r"(?i)error")) is None
    assert lit(re.compile(r"x*")) is None
    assert lit(re.compile(r"(?:foo)+bar")) == {"foo"} or lit(re.compile(r"(?:foo)+bar")) == {"bar"}
