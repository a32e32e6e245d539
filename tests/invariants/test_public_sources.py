"""Product text cites public sources only: no remedy, explanation, help text, README line, doc or
code comment names a document users do not have (the team's internal notes) or an issue of this
project. MLX and exo issue or PR numbers ("MLX #4278", "exo PR #2160") are public and fine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
# names of internal documents, and an issue number that is not qualified as MLX's or exo's
INTERNAL = re.compile(r"knowledge\.md|design\.md|design notes|field notes|shared/|seeds/", re.I)
ISSUE = re.compile(r"\bissues? ?#?\d+", re.I)
PUBLIC_PREFIX = re.compile(
    r"(mlx|exo|upstream|github|ml-explore|pytorch|nccl)[\w./-]*\s*(pr\s*)?$", re.I
)


def offences(text: str):
    """Every (line number, line) of ``text`` that names an internal document or a bare issue."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if INTERNAL.search(line):
            out.append((n, line.strip()))
            continue
        for m in ISSUE.finditer(line):
            if not PUBLIC_PREFIX.search(line[: m.start()]):
                out.append((n, line.strip()))
                break
    return out


def product_files():
    globs = [
        "meshdoctor/**/*.py",
        "meshdoctor/**/*.json",
        "docs/**/*.md",
        "completions/*",
        "benchmarks/**/*.py",
        "tests/**/*.py",
        "README.md",
        "pyproject.toml",
        ".ci/*",
    ]
    me = Path(__file__).resolve()
    for g in globs:
        for p in sorted(ROOT.glob(g)):
            if p.is_file() and p.resolve() != me:
                yield p


def test_the_offence_pattern_catches_what_it_must_and_spares_public_numbers():
    assert offences("see knowledge.md §1") and offences("(issue 4)") and offences("issue #7")
    assert offences("contract: design.md") and offences("from seeds/x.txt")
    assert not offences("survivors spin (MLX #3910, #4278)")
    assert not offences("cable order (exo PR #2160); MLX issue #3162; mlx #4192")


def test_no_file_users_see_or_read_names_an_internal_document_or_project_issue():
    found = {
        str(p.relative_to(ROOT)): offences(p.read_text(encoding="utf-8", errors="replace"))
        for p in product_files()
    }
    found = {k: v for k, v in found.items() if v}
    assert not found, found


def _commands():
    from meshdoctor.cli import cli

    return [[]] + [[name] for name in cli.list_commands(None)]


@pytest.mark.parametrize("cmd", _commands(), ids=lambda c: " ".join(c) or "top")
def test_help_texts_are_whole_and_cite_nothing_internal(cmd):
    r = run_cli(*cmd, "--help")
    assert r.rc == 0 and not offences(r.out), r.out
    if not cmd:  # each command's one-line summary is a whole sentence, not cut off with "..."
        listed = r.out.split("Commands:")[1].split("\n\n")[0]
        assert "..." not in listed and "(e.g.\n" not in listed, listed


def test_every_explanation_cites_public_sources_only():
    """What ``explain CODE`` prints for every code: the golden explain.txt, which
    test_golden.py proves is that output byte for byte (so each code runs once for both)."""
    import json

    from tests.invariants.golden import make

    r = run_cli("list-checks", "--all", "--json")
    codes = [row["code"] for row in json.loads(r.out)]
    text = (make.HERE / "explain.txt").read_text()
    assert [x[5:] for x in text.splitlines() if x.startswith("==== ")] == codes
    assert not offences(text), offences(text)[:20]


def test_no_catalogue_entry_names_an_internal_document():
    from meshdoctor import catalogue

    for e in catalogue.entries():
        assert not offences(catalogue.text(e)), (e.code, offences(catalogue.text(e)))
        for s in e.doc.sources:
            assert not offences(s), (e.code, s)
