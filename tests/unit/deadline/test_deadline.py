"""meshdoctor.deadline: a call under a deadline, and many at once."""

from __future__ import annotations

import time

import pytest

from meshdoctor import deadline


def test_deadline_call_returns_at_the_deadline_and_reraises():
    done, value = deadline.call(lambda: 42, 5)
    assert (done, value) == (True, 42)
    t0 = time.monotonic()
    done, value = deadline.call(lambda: time.sleep(30), 0.2)
    assert not done and time.monotonic() - t0 < 20  # bounded: well inside the 30 s sleep
    with pytest.raises(ZeroDivisionError):
        deadline.call(lambda: 1 / 0, 5)
    got = deadline.outcomes({"a": lambda: 1, "b": lambda: 1 / 0}, 5)
    assert got["a"].value == 1 and isinstance(got["b"].error, ZeroDivisionError)
