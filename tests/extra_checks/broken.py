"""A test double: a check that raises (MD198)."""

from meshdoctor.check import Check


def run(ctx):
    raise RuntimeError("boom from a broken check")


CHECK = Check(code="MD198", name="test.raises", title="Raises", run=run,
              explain="A test check that raises.")
