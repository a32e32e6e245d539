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


def test_list_checks_coverage_counts_the_source_sites_per_component():
    """``list-checks --coverage``: per component the rows of the site tables, those read and
    those read only generically; its last line the total."""
    import re

    from meshdoctor.signatures import coverage

    r = run_cli("list-checks", "--coverage")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    m = re.fullmatch(
        r"coverage: (\d+) of (\d+) source sites \(([\d.]+) %\), (\d+) generic", lines[-1]
    )
    assert m, lines[-1]
    n, total, pct, generic = int(m[1]), int(m[2]), float(m[3]), int(m[4])
    rows = sum(len(coverage.load(t)[0]) for t in coverage.TABLES)
    assert total == rows and n == total and pct == 100.0 and generic * 10 <= total
    for comp in ("jaccl", "ring", "nccl", "launch", "config", "metal"):
        assert re.search(rf"^mlx +{comp} +\d+ +\d+ +\d+$", r.out, re.M), comp
    assert "not read:" not in r.out
    assert run_cli("list-checks", "--coverage", "--json").rc == 2  # its JSON is a code list
