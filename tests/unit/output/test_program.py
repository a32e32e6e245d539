"""The program a pasted remedy runs: ``meshdoctor`` when that is what ``PATH`` finds, else the
path the user typed (the README's set-up once left it in ``.venv/bin/``, not on ``PATH``)."""

from __future__ import annotations

import os

from meshdoctor.output import as_run, program


def _script(tmp_path, where: str):
    d = tmp_path / where
    d.mkdir(parents=True)
    exe = d / "meshdoctor"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return d, exe


def test_a_venv_script_not_on_path_is_named_as_typed(tmp_path):
    venv_bin, _ = _script(tmp_path, "my venv/bin")
    elsewhere, _ = _script(tmp_path, "elsewhere")
    typed = os.path.join("my venv", "bin", "meshdoctor")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert program(typed, path=str(elsewhere)) == typed  # PATH's meshdoctor is another
        assert program(typed, path="") == typed  # none on PATH
        assert program(typed, path=str(venv_bin)) == "meshdoctor"  # the same file: the name
    finally:
        os.chdir(old)
    assert program("meshdoctor", path="") == "meshdoctor"  # typed by name: found on PATH
    assert program("/x/meshdoctor/__main__.py", path="") == "meshdoctor"  # python -m


def test_remedies_quote_the_program_as_a_shell_word():
    prog = ".venv/bin/meshdoctor"
    assert as_run("meshdoctor fix stale-ranks --yes", prog) == f"{prog} fix stale-ranks --yes"
    text = "Kill them (`meshdoctor fix stale-ranks`), then `ssh h 'meshdoctor check'`."
    assert as_run(text, prog) == (
        f"Kill them (`{prog} fix stale-ranks`), then `ssh h 'meshdoctor check'`."
    )  # a command run on another host keeps that host's name for it
    assert as_run("meshdoctor explain MD301", "my venv/bin/meshdoctor") == (
        "'my venv/bin/meshdoctor' explain MD301"
    )
    assert as_run("meshdoctor explain MD301", "meshdoctor") == "meshdoctor explain MD301"
