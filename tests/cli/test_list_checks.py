"""``meshdoctor list-checks`` (and ``explain`` of what it lists)."""

from __future__ import annotations

import json

from tests.helpers import run_cli


def test_list_checks_and_explain():
    r = run_cli("list-checks", "--json")
    rows = json.loads(r.out)
    codes = [x["code"] for x in rows]
    assert codes == sorted(codes) and "MD301" in codes
    r = run_cli("explain", "MD301")
    assert r.rc == 0 and "reboot" in r.out and "MLX_RANK" in r.out
    r = run_cli("explain", "md302")
    assert r.rc == 0 and "wired" in r.out
    r = run_cli("explain", "MD777")
    assert r.rc == 2 and "MD777" in r.err


def test_fleet_codes_are_listed_and_explained():
    r = run_cli("list-checks")
    assert all(c in r.out for c in ("MD403", "MD404", "MD405", "MD406", "MD407", "MD408", "MD409"))
    r = run_cli("explain", "MD404")
    assert r.rc == 0 and "edges active" in r.out
    r = run_cli("explain", "MD402")
    assert r.rc == 0 and "ssh" in r.out
