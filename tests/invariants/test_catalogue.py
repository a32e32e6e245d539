"""The catalogue's invariants: every code meshdoctor can emit is in it once, in its kind's range,
documented in every part, reachable by ``explain`` under each of its names, and carried as a
title on the results that bear it. A code added in its own module without its parts fails here,
naming the code."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from click.testing import CliRunner

from meshdoctor import catalogue
from meshdoctor.codes import model as codes
from meshdoctor.cli import cli
from meshdoctor.model import Result
from tests.helpers import run_cli, validate

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"\bMD\d{3}\b")
CODE_LITERAL = re.compile(r"""^[rRbBuUfF]*(['"])(MD\d{3})\1$""")

ENTRIES = catalogue.entries()
BY_CODE = {e.code: e for e in ENTRIES}


def _source_files():
    for d in ("meshdoctor",):
        yield from sorted((ROOT / d).rglob("*.py"))


def _tokens(path: Path):
    return list(tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline))


def test_codes_are_unique():
    codes = [e.code for e in ENTRIES]
    dupes = sorted({c for c in codes if codes.count(c) > 1})
    assert not dupes, f"codes declared twice: {dupes}"


def test_each_code_is_in_its_kinds_range():
    wrong = [
        (e.code, e.kind)
        for e in ENTRIES
        if e.kind not in catalogue.KINDS or catalogue.kind_of(e.code) != e.kind
    ]
    assert not wrong, f"codes outside their kind's range {codes.RANGES}: {wrong}"
    assert {e.kind for e in ENTRIES} == set(catalogue.KINDS)


def test_every_entry_is_documented_in_every_part():
    missing = []
    for e in ENTRIES:
        for part in ("meaning", "why", "action"):
            if not getattr(e.doc, part).strip():
                missing.append((e.code, part))
        if not e.doc.sources or not all(s.strip() for s in e.doc.sources):
            missing.append((e.code, "sources"))
        if not e.title.strip():
            missing.append((e.code, "title"))
    assert not missing, missing


def test_a_doc_refuses_an_empty_part():
    codes.Doc(meaning="m", why="w", action="a", sources=("s",))
    for bad in (dict(meaning=" "), dict(why=""), dict(action=""), dict(sources=())):
        kw = dict(dict(meaning="m", why="w", action="a", sources=("s",)), **bad)
        with pytest.raises(ValueError):
            codes.Doc(**kw)


def test_every_code_any_module_emits_is_catalogued():
    emitted = {}
    for path in _source_files():
        for tok in _tokens(path):
            m = CODE_LITERAL.match(tok.string) if tok.type == tokenize.STRING else None
            if m:
                emitted.setdefault(m.group(2), str(path.relative_to(ROOT)))
    assert {"MD100", "MD301", "MD501", "MD601", "MD690", "MD700", "MD701"} <= set(emitted)
    missing = {c: where for c, where in emitted.items() if c not in BY_CODE}
    assert not missing, f"codes emitted but not in the catalogue: {missing}"


def test_every_code_an_explanation_names_is_catalogued():
    named = {}
    for e in ENTRIES:
        for c in CODE.findall(catalogue.text(e)):
            named.setdefault(c, e.code)
    missing = {c: e for c, e in named.items() if c not in BY_CODE}
    assert not missing, f"explanations name codes that do not exist: {missing}"


def test_fixes_named_by_entries_exist_and_resolve_them():
    from meshdoctor.signatures import BY_CODE as SIGNATURES

    fixes = {e.code: e for e in ENTRIES if e.kind == catalogue.FIX}
    for e in ENTRIES:
        # a signature is fixed by what fixes the check that looks at its likely cause
        target = SIGNATURES[e.code].check if e.code in SIGNATURES else e.code
        for f in e.fixes:
            assert f in fixes, (e.code, f)
            assert target in dict(fixes[f].details)["Resolves"].split(", "), (e.code, f)
    assert BY_CODE["MD603"].fixes and BY_CODE["MD301"].fixes


def test_every_explain_name_resolves():
    runner = CliRunner()
    for e in ENTRIES:
        for key in (e.code, e.code.lower()) + e.names:
            assert e in catalogue.resolve(key), (e.code, key)
        r = runner.invoke(cli, ["explain", e.code])
        assert r.exit_code == 0 and r.output.startswith(f"{e.code}: {e.title}"), r.output
        for heading in catalogue.HEADINGS + ("Sources",):
            assert f"{heading}:" in r.output, (e.code, heading)
        for key in e.names:
            r = runner.invoke(cli, ["explain", key])
            assert r.exit_code == 0 and e.code in r.output, (key, r.output)


def test_names_lead_to_one_code_except_the_probes_op_names():
    owners = {}
    for e in ENTRIES:
        for n in e.names:
            owners.setdefault(n.lower(), []).append(e.code)
    shared = {n: c for n, c in owners.items() if len(c) > 1}
    assert all(n.startswith("probe.") and c == ["MD504", "MD505"] for n, c in shared.items()), (
        shared
    )


def test_list_checks_all_lists_the_whole_catalogue():
    r = run_cli("list-checks", "--all", "--json")
    rows = json.loads(r.out)
    assert [x["code"] for x in rows] == [e.code for e in ENTRIES]
    assert {x["kind"] for x in rows} == set(catalogue.KINDS)


def test_discovery_does_not_depend_on_what_was_imported_before():
    out = subprocess.run(
        [sys.executable, "-c", "from meshdoctor import catalogue; print(len(catalogue.entries()))"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(ENTRIES)


def test_no_module_is_imported_for_its_side_effects():
    found = [
        (str(p.relative_to(ROOT)), t.start[0])
        for p in _source_files()
        for t in _tokens(p)
        if t.type == tokenize.COMMENT and "noqa: F401" in t.string
    ]
    assert not found, found


def test_results_carry_their_title(clean_env):
    r = run_cli("check", "--json", "--only", "MD101,MD103", env=clean_env)
    validate(r.doc)
    assert {x["code"]: x["title"] for x in r.doc["results"]} == {
        "MD101": BY_CODE["MD101"].title,
        "MD103": BY_CODE["MD103"].title,
    }
    codes = ["MD690", "MD503", "MD100", "MD999"]
    titles = [catalogue.title(c) for c in codes]
    assert titles == ["triage inputs", "probe hang", "internal error", None]
    got = [Result(c, "x", "ok", "?", title=t) for c, t in zip(codes, titles)]
    assert got[0].to_dict()["title"] == "triage inputs" and "title" not in got[3].to_dict()


def test_the_human_verdict_shows_each_results_title(clean_env):
    r = run_cli("check", "--only", "MD103", env=clean_env)
    assert f"MD103 {BY_CODE['MD103'].title}:" in r.out, r.out


def _site_check(
    tmp_path,
    code="MD198",
    doc="meaning='counts widgets', why='widgets matter', "
    "action='add widgets', sources=('the widget manual',)",
):
    pkg = tmp_path / "site_checks"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "widgets.py").write_text(
        "from meshdoctor.checker.model import Check, Doc, warn\n"
        "def run(ctx):\n"
        "    return warn('2 widgets, want 3')\n"
        f"CHECK = Check(code='{code}', name='site.widgets', title='Widgets', run=run,\n"
        f"              doc=Doc({doc}))\n"
    )
    return {"MESHDOCTOR_EXTRA_CHECKS": "site_checks.widgets", "PYTHONPATH": str(tmp_path)}


def test_an_extra_check_joins_the_catalogue(clean_env, tmp_path):
    env = dict(clean_env, **_site_check(tmp_path))
    r = run_cli("list-checks", "--all", env=env)
    assert "MD198  site.widgets" in r.out
    r = run_cli("explain", "site.widgets", env=env)
    assert r.rc == 0 and r.out.startswith("MD198: Widgets")
    assert "counts widgets" in r.out and "add widgets" in r.out and "the widget manual" in r.out
    r = run_cli("check", "--json", "--only", "MD198", env=env)
    assert r.status("MD198") == "warn" and r.results("MD198")[0]["title"] == "Widgets"


@pytest.mark.parametrize(
    "code, doc, says",
    [
        ("MD198", "meaning='m', why='', action='a', sources=('s',)", "Doc.why must be non-empty"),
        ("MD198", "meaning='m', why='w', action='a', sources=()", "Doc.sources must name"),
        ("MD901", "meaning='m', why='w', action='a', sources=('s',)", "not a check code"),
        ("MD601", "meaning='m', why='w', action='a', sources=('s',)", "not a check code"),
    ],
)
def test_an_extra_check_without_its_parts_is_a_usage_error(clean_env, tmp_path, code, doc, says):
    env = dict(clean_env, **_site_check(tmp_path, code, doc))
    for args in (("list-checks",), ("explain", "MD101")):
        r = run_cli(*args, env=env)
        assert r.rc == 2 and says in r.err and "site_checks.widgets" in r.err, (args, r.err)


def _result_calls():
    """``(path, line, code, check)`` of every ``Result(...)`` / ``result(...)`` / ``_mesh(...)`` in the sources
    whose code evaluates in its module and whose ``check`` is a string (an f-string gives its
    text with ``{...}`` kept, e.g. ``probe.{op}``)."""
    import ast
    import importlib

    out = []
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT).with_suffix("")
        mod = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if fn not in ("Result", "result", "_mesh"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            code = node.args[0] if node.args else kw.get("code")
            check = node.args[1] if len(node.args) > 1 else kw.get("check")
            if code is None or check is None:
                continue
            if isinstance(check, ast.Constant) and isinstance(check.value, str):
                name = check.value
            elif isinstance(check, ast.JoinedStr):
                name = "".join(
                    v.value if isinstance(v, ast.Constant) else "{...}" for v in check.values
                )
            else:
                continue  # a name from data (a check's, a fleet check's, a remote verdict's)
            if mod is None:
                parts = rel.parts[:-1] + (() if rel.name == "__init__" else (rel.name,))
                if parts[:2] == ("meshdoctor", "checks"):
                    continue  # check modules return Findings; the runner names them
                mod = importlib.import_module(".".join(parts))
            try:
                value = eval(compile(ast.Expression(code), str(path), "eval"), vars(mod))
            except Exception:
                continue  # a code from data (a finding's, a fix's): covered below
            out.append((str(rel), node.lineno, value, name))
    return out


def test_every_result_name_leads_explain_to_its_code():
    """Every ``check`` name a result can carry resolves with ``explain`` to the entry of that
    result's code: names written in the sources, the probe's per-op names, the fixes' and the
    checks' names, and what triage names a signature finding."""
    from meshdoctor.fixer.registry import all_fixes
    from meshdoctor.probe.worker import OPS
    from meshdoctor.signatures import CATALOGUE

    pairs = _result_calls()
    assert len(pairs) > 30, pairs  # the scan found the results
    expanded = []
    for where, line, code, name in pairs:
        if name == "probe.{...}":
            expanded += [(where, line, code, f"probe.{op}") for op in list(OPS) + ["bare_all_sum"]]
        elif name == "fix.{...}":
            continue  # below, per fix
        else:
            expanded.append((where, line, code, name))
    expanded += [("fixengine", 0, f.code, f"fix.{f.name}") for f in all_fixes()]
    expanded += [("triage/report", 0, s.code, s.name) for s in CATALOGUE]
    expanded += [("runner", 0, e.code, e.names[0]) for e in ENTRIES if e.kind == catalogue.CHECK]
    wrong = [
        (where, line, code, name)
        for where, line, code, name in expanded
        if code not in [e.code for e in catalogue.resolve(name)]
    ]
    assert not wrong, f"result names that `explain` does not lead to their code: {wrong}"


def test_explain_of_a_shared_name_shows_every_entry_it_belongs_to():
    r = run_cli("explain", "probe.all_sum")
    assert r.rc == 0 and "MD504: probe correctness" in r.out and "MD505: probe bandwidth" in r.out
    for name, code in (
        ("check.interrupted", "MD190"),
        ("probe.gpu_clocks", "MD505"),
        ("fix.stale-ranks", "MD701"),
        ("probe.coverage", "MD511"),
    ):
        r = run_cli("explain", name)
        assert r.rc == 0 and r.out.startswith(f"{code}: "), (name, r.out)


def test_triage_findings_carry_their_signatures_name(tmp_path):
    p = tmp_path / "rank1.log"
    p.write_text("RuntimeError: [jaccl] Recv failed with errno=2\n")
    r = run_cli("triage", str(p), "--json")
    checks = {x["code"]: x["check"] for x in r.doc["results"]}
    assert checks == {"MD606": "jaccl.recv-errno-2", "MD690": "triage"}
    for code, name in checks.items():
        assert [e.code for e in catalogue.resolve(name)] == [code]


def test_plain_list_checks_lists_every_check_the_readme_tables_list():
    """The README's check tables (node checks, fleet checks: MD402 fleet.reach among them) and
    plain `list-checks` name the same checks."""
    r = run_cli("list-checks", "--json")
    listed = {x["code"]: x["name"] for x in json.loads(r.out)}
    table = dict(
        re.findall(r"^\| (MD[1-4]\d\d) \| ([a-z_.]+) \|", (ROOT / "README.md").read_text(), re.M)
    )
    assert "MD402" in table and table.items() <= listed.items(), set(table.items()) - set(
        listed.items()
    )
    r = run_cli("list-checks")
    assert "MD402  fleet.reach" in r.out
