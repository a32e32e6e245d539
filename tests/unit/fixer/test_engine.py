"""meshdoctor.fixer.engine: the fix catalogue and which fix resolves which finding, without
processes."""

from __future__ import annotations

from meshdoctor.fixer.model import RISKS
from meshdoctor.fixer.registry import all_fixes, fixes_for, lookup
from meshdoctor.checker.registry import all_checks


def test_every_fix_is_declared_in_the_md7xx_range_and_resolves_real_checks():
    fixes = all_fixes()
    assert [f.name for f in fixes] == ["stale-ranks", "reset-group", "auto-setup", "bridge0"]
    checks = {c.code for c in all_checks()}
    for f in fixes:
        assert f.code.startswith("MD7") and len(f.code) == 5
        assert f.risk in RISKS and f.doc.meaning and f.title
        assert set(f.resolves) <= checks, f
    assert len({f.code for f in fixes}) == len(fixes)
    assert lookup("md701").name == "stale-ranks" and lookup("bridge0").code == "MD704"


def test_a_leftover_rank_is_stale_ranks_work_and_wired_memory_is_reset_group():
    assert [f.name for f in fixes_for(["MD301"])] == ["stale-ranks"]
    assert [f.name for f in fixes_for(["MD302"])] == ["reset-group"]
    assert [f.name for f in fixes_for(["MD203", "MD205"])] == ["auto-setup", "bridge0"]
