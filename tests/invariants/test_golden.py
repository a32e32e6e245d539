"""What ``list-checks``, ``schema`` and ``explain`` print, byte for byte, against the golden files
in ``tests/invariants/golden/`` (written by ``python3 -m tests.invariants.golden.make`` when a
change is meant): moving code between modules must not change a code, a title, a name or a word
of an explanation."""

from __future__ import annotations

import difflib

import pytest

from tests.invariants.golden import make


def _same(name: str, got: str) -> None:
    want = (make.HERE / name).read_text()
    if got != want:
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), "golden/" + name, "now", n=1
            )
        )
        pytest.fail(f"{name} differs from its golden file:\n{diff[:6000]}")


@pytest.mark.parametrize("name", sorted(make.COMMANDS))
def test_listing_matches_golden(name):
    _same(name, make.cli(*make.COMMANDS[name]))


def test_explain_of_every_code_matches_golden():
    _same("explain.txt", make.explain_all())
