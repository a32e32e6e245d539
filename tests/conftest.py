"""pytest fixtures shared by the test files; the helpers they import are in tests/helpers.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, Optional

import pytest

from meshdoctor.ranks import find_ranks
from tests import isolation, stubs

# --- every worker in namespaces of its own (tests/isolation.py) ------------------------------

_NOT_ISOLATED = "meshdoctor_not_isolated"
_LEFTOVERS = "meshdoctor_leftovers"


def pytest_configure(config):
    """In the controller: start each xdist worker in its own namespaces (one worker when no
    ``-n`` was given); in an isolated worker: bring its network up, give it state directories
    of its own and note its netns mounts."""
    if hasattr(config, "workerinput"):
        if os.environ.get(isolation.ISOLATED_ENV) == "1":
            isolation.network_up()
            config._meshdoctor_state = isolation.private_state()
            config._meshdoctor_netns = isolation.netns_mounts()
        return
    why = ""
    if not config.pluginmanager.hasplugin("xdist"):
        why = "pytest-xdist is not loaded"
    elif config.option.usepdb or config.option.capture == "no" or config.option.collectonly:
        why = "--pdb, -s and --collect-only run in the pytest process"
    else:
        prefix, why = isolation.worker_prefix()
    if why:
        setattr(config, _NOT_ISOLATED, why)
        return
    if config.option.dist == "no" or not config.option.tx:
        config.option.dist, config.option.tx = "load", ["popen"]
    config.option.tx = [isolation.isolated_spec(t, prefix) for t in config.option.tx]
    setattr(config, _LEFTOVERS, [])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Each test module is one unit of work, on one worker, in its own order (its module-scoped
    netns bed starts once), and every test of tests/slurm/ one unit (the Slurm bed starts once a
    run); the units go to whichever worker is free, the largest first (xdist's loadscope).
    For ``--dist load`` (``-n`` alone) and ``loadscope``; any other ``--dist`` is xdist's own."""
    if config.option.dist not in ("load", "loadscope"):
        return None  # a distribution the user chose (--dist each, loadfile, ...)
    from xdist.scheduler import LoadScopeScheduling

    class BedScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return (
                "tests/slurm" if nodeid.startswith("tests/slurm/") else super()._split_scope(nodeid)
            )

    return BedScheduling(config, log)


def pytest_report_header(config):
    why = getattr(config, _NOT_ISOLATED, "")
    if why:
        return [
            f"WARNING: tests run in this machine's namespaces ({why}): processes, memory and "
            "ports of other programs here can change their verdicts"
        ]
    return []


def pytest_sessionfinish(session):
    """In an isolated worker: name (and kill) what the tests left behind, for the controller."""
    config = session.config
    if hasattr(config, "workerinput") and os.environ.get(isolation.ISOLATED_ENV) == "1":
        left = [f"process left behind: {x}" for x in isolation.leftovers()]
        left += [
            f"network namespace left behind: {x}"
            for x in isolation.leaked_netns(getattr(config, "_meshdoctor_netns", []))
        ]
        config.workeroutput[_LEFTOVERS] = left
        shutil.rmtree(getattr(config, "_meshdoctor_state", ""), ignore_errors=True)
        return
    found = getattr(config, _LEFTOVERS, None)
    if found:
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_sep("=", "tests left these behind", red=True)
            for line in found:
                tr.write_line(line)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """In the controller: gather what each isolated worker found left behind."""
    found = getattr(node.config, _LEFTOVERS, None)
    if found is not None:
        found.extend(getattr(node, "workeroutput", {}).get(_LEFTOVERS, []))


@pytest.fixture
def fake_mac(tmp_path):
    """``fake_mac("healthy", "wired-leftover", extra={...})`` -> env of a fake Mac node."""

    def make(*sets: str, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        return stubs.install(tmp_path / "bin", sets, extra=extra)

    return make


@pytest.fixture
def clean_env():
    """This environment without MLX_*/JACCL_* variables (CI or a developer shell may have some)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}


def _spawn(env_extra, args=None):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen(
        args or [sys.executable, "-c", "import time; time.sleep(120)"],
        env=env,
        start_new_session=True,
    )
    for _ in range(50):  # wait until its environment is visible
        if any(r.pid == p.pid for r in find_ranks()):
            break
        time.sleep(0.05)
    return p


@pytest.fixture
def stray():
    procs = []

    def make(env_extra, args=None):
        p = _spawn(env_extra, args)
        procs.append(p)
        return p

    yield make
    for p in procs:  # the whole session: a shell's children (sleep) must not outlive it
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=10)
