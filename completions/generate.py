"""Regenerate the shell completion scripts from the click app: python completions/generate.py.

The scripts are click's own (``_MESHDOCTOR_COMPLETE=<shell>_source meshdoctor``); they call back
into meshdoctor for the words, so commands, options and check codes stay current. The test
``tests/cli/test_completions.py`` fails when the committed files differ from what this prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SHELLS = ("bash", "zsh", "fish")
HERE = Path(__file__).resolve().parent


def source(shell: str) -> str:
    """The completion script click generates for ``shell``."""
    env = dict(os.environ, _MESHDOCTOR_COMPLETE=f"{shell}_source")
    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return p.stdout


def main() -> None:
    for shell in SHELLS:
        (HERE / f"meshdoctor.{shell}").write_text(source(shell))
        print(f"wrote {HERE / f'meshdoctor.{shell}'}")


if __name__ == "__main__":
    main()
