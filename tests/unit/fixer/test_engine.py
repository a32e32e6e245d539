"""The fix catalogue, the boot-time parser and the typed-action schema, without processes."""

from __future__ import annotations

import jsonschema
import pytest

from meshdoctor.facts.boottime import BootTimeError, parse_kern_boottime
from meshdoctor.fixer.model import RISKS, Action
from meshdoctor.fixer.engine import all_fixes, fixes_for, lookup
from meshdoctor.checker.registry import all_checks
from tests.helpers import validate


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


def test_kern_boottime_is_parsed_and_garbage_is_named():
    text = "{ sec = 1732950000, usec = 500000 } Sat Nov 30 07:40:00 2024\n"
    assert parse_kern_boottime(text) == 1732950000.5
    with pytest.raises(BootTimeError, match="no boot time"):
        parse_kern_boottime("kern.boottime: unknown oid")


def _doc(actions):
    return {
        "schema_version": 2,
        "tool": {"name": "meshdoctor", "version": "0"},
        "command": "fix",
        "verdict": "go",
        "exit_code": 0,
        "needs_reboot": [],
        "started_at": "2026-11-30T00:00:00+00:00",
        "duration_s": 0.1,
        "hosts": [],
        "results": [
            {
                "code": "MD701",
                "check": "fix.stale-ranks",
                "host": "m1",
                "status": "ok",
                "severity": "info",
                "summary": "ok",
                "evidence": {},
                "duration_s": 0,
                "remediation": {"text": "t", "fix": "MD701"},
            }
        ],
        "actions": actions,
    }


def test_schema_admits_typed_actions_and_md7xx_and_refuses_a_bad_one():
    a = Action(
        "MD701",
        "m1",
        "stop pid 5",
        ["kill", "-TERM", "5"],
        changed=True,
        outcome="done: exited after SIGTERM",
    )
    validate(_doc([a.to_dict(), {"action": "SIGTERM rank 0", "outcome": "sent"}]))
    bad = dict(a.to_dict(), code="MD301")
    with pytest.raises(jsonschema.ValidationError):
        validate(_doc([bad]))
    assert Action.from_dict(a.to_dict()) == a


def test_a_rank_in_uninterruptible_sleep_puts_its_host_in_needs_reboot(monkeypatch):
    import time as _time

    from meshdoctor.fixer.model import FixContext
    from meshdoctor.fixer.engine import fix_result
    from meshdoctor.ranks import RankProcess
    from meshdoctor.fixes import stale_ranks

    stuck = RankProcess(
        pid=4242,
        name="python",
        cmdline=["python"],
        status="disk-sleep",
        create_time=_time.time(),
        rank="1",
        ppid=1,
    )
    monkeypatch.setattr(stale_ranks, "_targets", lambda ctx: ([stuck], []))
    ctx = FixContext(hosts=None, apply=True, options={"host": "m2"})
    ver = stale_ranks.verify(ctx)
    assert not ver.ok and "m2" in ver.needs_reboot and "pid 4242" in ver.needs_reboot["m2"]
    [res] = fix_result(stale_ranks.FIX, "m2", [], ver)
    assert res.status == "fail" and res.needs_reboot


def test_an_unknown_fix_name_is_a_usage_error_listing_the_fixes():
    from tests.helpers import run_cli

    r = run_cli("fix", "no-such-fix", "--json")
    assert r.rc == 2 and r.out == ""
    assert "no fix 'no-such-fix'; fixes: stale-ranks, reset-group, auto-setup, bridge0" in r.err
