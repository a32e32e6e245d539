"""Python's built-in exceptions of a program's own mistakes, read from their messages alone."""

from __future__ import annotations

import pytest

from meshdoctor.signatures import pyerrors


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Error processing prompt: list index out of range", "IndexError"),
        ("failed: 'NoneType' object has no attribute 'shape'", "AttributeError"),
        ("handler crashed: 'NoneType' object is not subscriptable", "TypeError"),
        ("name 'shard' is not defined", "NameError"),
        (
            "cannot access local variable 'peer' where it is not associated with a value",
            "UnboundLocalError",
        ),
        ("local variable 'peer' referenced before assignment", "UnboundLocalError"),
        ("index 8 is out of bounds for axis 0 with size 8", "IndexError"),
        ("maximum recursion depth exceeded while calling a Python object", "RecursionError"),
        ("step failed: float division by zero", "ZeroDivisionError"),
    ],
)
def test_a_message_names_its_class(text, kind):
    assert pyerrors.caught(text)[0] == kind
    assert pyerrors.DEFECTS[kind] in pyerrors.reading(text)


@pytest.mark.parametrize(
    "text",
    ["Connection refused", "the model is out of range of this device", "all good"],
)
def test_other_text_names_none(text):
    assert pyerrors.caught(text) is None and pyerrors.reading(text) is None
