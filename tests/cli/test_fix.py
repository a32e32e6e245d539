"""``meshdoctor fix`` through the CLI, whatever the fix (each fix's own tests are in
tests/fixes/)."""

from __future__ import annotations


def test_an_unknown_fix_name_is_a_usage_error_listing_the_fixes():
    from tests.helpers import run_cli

    r = run_cli("fix", "no-such-fix", "--json")
    assert r.rc == 2 and r.out == ""
    assert "no fix 'no-such-fix'; fixes: stale-ranks, reset-group, auto-setup, bridge0" in r.err
