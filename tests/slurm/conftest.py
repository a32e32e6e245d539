"""The Slurm bed as a fixture: one per test module (starting it takes seconds)."""

from __future__ import annotations

import pytest

from tests import slurm


@pytest.fixture(scope="module")
def bed():
    """A running :class:`tests.slurm.SlurmBed`; the test skips, saying why, where none can run."""
    why = slurm.unavailable()
    if why:
        pytest.skip(why)
    with slurm.SlurmBed() as b:
        yield b
