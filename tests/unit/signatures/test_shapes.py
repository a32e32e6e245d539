"""Counting lines by shape (meshdoctor.signatures.shape_values): the digits outside a shape's
value spans never change what a line gives, for every catalogue example."""

from __future__ import annotations

import re

from meshdoctor import signatures
from meshdoctor.signatures import CATALOGUE, match_line, shape_values
from meshdoctor.signatures.scanner import digit_twin
from meshdoctor.triage.logs import line_rank

MASK = str.maketrans("0123456789", "0000000000")


def gives(line: str):
    return sorted((m.code, line_rank(m.line)) for m in match_line(line))


def test_digits_outside_the_values_never_change_the_codes_or_ranks():
    """Each example line, prefixed by a rank and a pid, with every digit outside its value
    spans changed: the same codes and ranks."""
    tried = 0
    for sig in CATALOGUE:
        for ex in sig.examples:
            if "\n" in ex:
                continue
            for line in (ex, f"[rank 3] pid 4242 iter 17: {ex}"):
                spans = shape_values(line.translate(MASK))
                if spans is None or spans == signatures.WHOLE:
                    continue
                kept = [
                    c.isdigit() and any(a <= i < b for a, b in spans) for i, c in enumerate(line)
                ]
                for d in "19":
                    other = "".join(d if c.isdigit() and not k else c for c, k in zip(line, kept))
                    assert gives(other) == gives(line), (sig.code, line, other)
                    tried += 1
    assert tried > 100


def test_the_rank_and_a_signatures_errno_are_values_a_pid_is_not():
    line = "[rank 3] pid 4242 iter 17: RuntimeError: [jaccl] Recv failed with errno=2"
    spans = shape_values(line.translate(MASK))
    assert [line[a:b] for a, b in spans] == ["3", "2"]


def test_a_line_that_opens_a_record_is_fed_not_counted():
    assert shape_values("Traceback (most recent call last):") is None
    assert shape_values("Exception Type:  EXC_BAD_ACCESS (SIGSEGV)") is None
    assert shape_values("\x1b[31m[ERROR] x\x1b[0m") is None


def test_a_digit_blind_twin_matches_wherever_the_pattern_may():
    reads, twin = digit_twin(re.compile(r"errno=2\b(?<!errno=60)"))
    assert reads and twin.search("errno=7") and not twin.search("errno=")
    assert digit_twin(re.compile(r"rank \d+ [a-z]+")) == (False, None)
