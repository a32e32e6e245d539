"""A test double: a check that raises (MD198)."""

from meshdoctor.checker.model import Check, Doc


def run(ctx):
    raise RuntimeError("boom from a broken check")


CHECK = Check(
    code="MD198",
    name="test.raises",
    title="Raises",
    run=run,
    doc=Doc(
        meaning="A test check that raises.",
        why="It proves a crash inside a check becomes a result in error.",
        action="Nothing: it is a test double.",
        sources=("meshdoctor tests",),
    ),
)
