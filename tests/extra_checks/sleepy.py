"""A test double: a check that sleeps past any deadline (MD199)."""

import time

from meshdoctor.checker.model import Check, Doc, ok


def run(ctx):
    time.sleep(600)
    return ok("woke up")


CHECK = Check(
    code="MD199",
    name="test.sleeps",
    title="Sleeps",
    run=run,
    doc=Doc(
        meaning="A test check that never finishes in time.",
        why="It proves a check past its deadline becomes a result in error.",
        action="Nothing: it is a test double.",
        sources=("meshdoctor tests",),
    ),
)
