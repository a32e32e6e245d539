"""A traceback pasted without its header (triage/headless.py): the frames above a bare
exception line say where it was raised and whose code that is; a library that only carried
the call (anyio, asyncio) hands the blame to its caller."""

from __future__ import annotations

from tests.helpers import first_cause, triage_files


def test_frames_above_a_bare_exception_name_the_package_that_raised_it(tmp_path):
    log = (
        'File "/srv/venv/lib/python3.12/site-packages/mlx_lm/generate.py", line 90, in stats\n'
        "    return self.tokens / self.seconds\n"
        "ZeroDivisionError: division by zero\n"
    )
    f = first_cause(triage_files(tmp_path, {"log.txt": log}))
    assert f["code"] == "MD663"
    assert "pasted without the `Traceback (most recent call last):` header" in f["meaning"]
    assert "mlx_lm's own code" in f["meaning"] and "generate.py, line 90, in stats" in f["meaning"]
    assert "a bare ZeroDivisionError line" not in f["meaning"]


def test_an_exception_raised_inside_anyio_is_its_callers(tmp_path):
    log = (
        '  File "/app/exo/download/coordinator.py", line 103, in on_progress\n'
        '  File "/app/.venv/lib/python3.13/site-packages/anyio/streams/memory.py", line 214, '
        "in send_nowait\n"
        "  anyio.BrokenResourceError\n"
    )
    f = first_cause(triage_files(tmp_path, {"log.txt": log}))
    assert f["code"] == "MD663"
    assert "exo's own code" in f["meaning"] and "in on_progress" in f["meaning"]
    assert "raised inside anyio" in f["meaning"] and "other end was already closed" in f["meaning"]


def test_a_bare_exception_without_frames_above_stays_bare(tmp_path):
    log = "loading the model\nZeroDivisionError: division by zero\n"
    f = first_cause(triage_files(tmp_path, {"log.txt": log}))
    assert "a bare ZeroDivisionError line" in f["meaning"]
    assert "header" in f["meaning"] and "pasted without" not in f["meaning"]
