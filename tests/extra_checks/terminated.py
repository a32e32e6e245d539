"""A test double: loading it sends SIGTERM to meshdoctor itself (a supervisor's timeout that
arrives while the checks are being loaded, before any runs)."""

import os
import signal

from meshdoctor.checker.model import Check, Doc, ok

os.kill(os.getpid(), signal.SIGTERM)

CHECK = Check(
    code="MD197",
    name="test.terminated",
    title="Terminated",
    run=lambda ctx: ok("-"),
    doc=Doc(
        meaning="A test check whose loading is interrupted.",
        why="It stands for a supervisor's timeout that arrives while the checks "
        "are being loaded, before any runs.",
        action="Nothing: it exists only for meshdoctor's tests.",
        sources=("meshdoctor test suite",),
    ),
)
