"""Shell completions: the committed scripts match the click app, and completion really answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "completions"))
import generate  # noqa: E402


@pytest.mark.parametrize("shell", generate.SHELLS)
def test_committed_completion_scripts_are_current(shell):
    committed = (ROOT / "completions" / f"meshdoctor.{shell}").read_text()
    assert committed == generate.source(shell), (
        f"completions/meshdoctor.{shell} is out of date: run python completions/generate.py"
    )


def _complete(words: str) -> str:
    env = dict(
        os.environ,
        _MESHDOCTOR_COMPLETE="bash_complete",
        COMP_WORDS=words,
        COMP_CWORD=str(len(words.split(" ")) - 1),
    )
    return subprocess.run(
        [sys.executable, "-m", "meshdoctor"], env=env, capture_output=True, text=True, timeout=60
    ).stdout


def test_completion_offers_commands_options_and_check_codes():
    assert "plain,check" in _complete("meshdoctor ch")
    assert "plain,--hostfile" in _complete("meshdoctor check --host")
    assert "plain,MD301" in _complete("meshdoctor explain MD3")
    assert "plain,MD101,MD102" in _complete("meshdoctor check --only MD101,MD10")
