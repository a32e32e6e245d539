"""What a fix or check declares is what the engine reads: the one discovery walk, the fixes'
platforms and backends, the one selection and the one remote check argv, without processes."""

from __future__ import annotations

import pytest

from meshdoctor.checker.here import check_args
from meshdoctor.checker.model import Check
from meshdoctor.checker.registry import all_checks
from meshdoctor.checker.selection import NOTHING_TO_RUN, SelectionError, chosen
from meshdoctor.discover import declared
from meshdoctor.fixer.engine import run_here
from meshdoctor.fixer.hosts import HostExec
from meshdoctor.fixer.registry import fixes_for, lookup


def test_the_walk_finds_every_check_module_and_refuses_a_bad_extra():
    found = dict(declared("meshdoctor.checks", "CHECK", Check))
    assert sorted(c.code for c in found.values()) == [c.code for c in all_checks()]
    with pytest.raises(LookupError, match="'no_such_module_here', which could not be imported"):
        list(
            declared(
                "meshdoctor.checks",
                "CHECK",
                Check,
                ["no_such_module_here"],
                lambda name, why: LookupError(f"{name!r}, {why}"),
            )
        )
    with pytest.raises(LookupError, match="which defines no CHECK = Check"):
        list(declared("meshdoctor.checks", "CHECK", Check, ["json"], lambda n, w: LookupError(w)))


def test_a_fix_for_jaccl_is_not_chosen_for_a_ring_hostfile():
    assert [f.name for f in fixes_for(["MD203", "MD205"], backend="ring")] == []
    assert [f.name for f in fixes_for(["MD203", "MD205"], backend="jaccl")] == [
        "auto-setup",
        "bridge0",
    ]
    assert [f.name for f in fixes_for(["MD301"], backend="ring")] == ["stale-ranks"]


def test_a_host_fix_off_its_platforms_plans_nothing_and_says_so(monkeypatch):
    monkeypatch.setenv("MESHDOCTOR_PLATFORM", "linux")
    assert lookup("bridge0").platforms == ("darwin",)
    actions, [r] = run_here(
        ["bridge0"], hosts=HostExec(None), host="h", apply=True, include_running=False
    )
    assert actions == [] and r.status == "ok" and r.host == "h"
    assert r.summary == "nothing to change: not applicable on linux (applies to darwin)"


def test_one_selection_rule_and_message():
    checks = all_checks()
    assert [c.code for c in chosen(checks, ["md101"], [])] == ["MD101"]
    with pytest.raises(SelectionError, match="unknown check MD999; see `meshdoctor list-checks`"):
        chosen(checks, ["MD999"], [])
    with pytest.raises(SelectionError) as e:
        chosen(checks, ["MD101"], ["md101"])
    assert str(e.value) == NOTHING_TO_RUN


def test_the_remote_check_argv():
    assert check_args(timeout=2.5, only=["MD101"], skip=["MD102"], hostfile="-", ranks=[0, 2],
                      facts=True) == [
        "check", "--local-only", "--json", "--facts", "--hostfile", "-", "--ranks", "0,2",
        "--timeout", "2.5", "--only", "MD101", "--skip", "MD102",
    ]  # fmt: skip
    assert check_args(timeout=10.0) == ["check", "--local-only", "--json", "--timeout", "10"]
