"""The Slurm bed as a fixture: one per test run (starting it takes seconds; the tests that use it
run on one worker, tests/conftest.py), the node idle at the start of each test."""

from __future__ import annotations

import pytest

from tests import slurm


@pytest.fixture(scope="session")
def bed():
    """A running :class:`tests.slurm.SlurmBed`; the test skips, saying why, where none can run."""
    why = slurm.unavailable()
    if why:
        pytest.skip(why)
    with slurm.SlurmBed() as b:
        yield b


@pytest.fixture(autouse=True)
def _idle_node(request):
    """Every test that uses the bed starts with its node idle and no job of an earlier test."""
    if "bed" in request.fixturenames:
        b = request.getfixturevalue("bed")
        b.sh("scancel", "--full", "--quiet", "--user", "root")
        b.resume()
