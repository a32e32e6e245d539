"""A test double: a check that sleeps past any deadline (MD199)."""

import time

from meshdoctor.check import Check, ok


def run(ctx):
    time.sleep(600)
    return ok("woke up")


CHECK = Check(code="MD199", name="test.sleeps", title="Sleeps", run=run,
              explain="A test check that never finishes in time.")
