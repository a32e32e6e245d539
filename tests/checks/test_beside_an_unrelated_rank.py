"""The check tests pass while an unrelated MLX job runs on the machine.

A real rank (a Python process with ``MLX_RANK`` in its environment that has imported mlx and
sleeps) runs for the whole module; the check tests whose verdict depends on what runs on the
machine (MD301, MD302, a full ``check``) are collected again here and must still pass: they pin
that fact down (a private PID namespace, or they only look at what they started).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from meshdoctor.ranks import find_ranks
from tests.helpers import private_pids_prefix, run_cli

# the check tests, collected again beside the unrelated rank
from tests.checks.test_node_checks import (  # noqa: F401
    test_healthy_mac_node,
    test_mac_without_its_tools_is_not_assessed_rather_than_failed,
)
from tests.checks.test_node_memory import (  # noqa: F401
    test_leftover_wired_memory_with_no_rank_needs_reboot,
    test_wired_limit_leaving_macos_no_room_warns,
)
from tests.checks.test_proc_stale_ranks import (  # noqa: F401
    test_orphaned_rank_and_rank_of_a_running_job_are_told_apart,
    test_rank_of_a_running_job_warns_and_suggests_no_kill,
)
from tests.cli.test_check import (  # noqa: F401
    test_check_on_this_machine_is_go,
    test_human_output_has_a_line_per_check_and_a_verdict,
    test_quiet_go_prints_nothing,
)
from tests.cli.test_input import (  # noqa: F401
    test_extra_check_module_without_a_check_is_not_silently_ignored,
)
from tests.unit.ranks.test_find_ranks import (  # noqa: F401
    test_a_command_meshdoctor_runs_is_never_a_rank_whatever_its_parentage,
    test_jaccl_rank_and_probe_marker_and_launch_script_are_identified,
)

pytest.importorskip("mlx.core")

RANK_CODE = (
    "import sys, time\nimport mlx.core as mx\nmx.eval(mx.ones((4,)))\n"
    "print('ready', flush=True)\ntime.sleep(600)\n"
)


@pytest.fixture(scope="module", autouse=True)
def unrelated_rank():
    """A real rank of another job: mlx imported, MLX_RANK=0 exported, sleeping."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_", "MESHDOCTOR_"))
    }
    env.update(MLX_RANK="0", MLX_WORLD_SIZE="2")
    p = subprocess.Popen(
        [sys.executable, "-c", RANK_CODE],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = p.stdout.readline()  # the event: mlx imported and used
        assert line.strip() == "ready", (line, p.stderr.read() if p.poll() is not None else "")
        yield p
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=10)


def test_the_unrelated_rank_is_a_rank_that_an_unpinned_check_lists(unrelated_rank, clean_env):
    assert unrelated_rank.pid in {r.pid for r in find_ranks()}
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env)
    # a rank whose launcher (this test) is alive is a running job: listed, a warning at most
    assert r.rc in (0, 1) and unrelated_rank.pid in {
        x["evidence"].get("pid") for x in r.results("MD301")
    }


def test_a_private_pid_namespace_pins_md301_down(unrelated_rank, clean_env):
    if not private_pids_prefix():
        pytest.skip("no private PID namespace here (util-linux unshare, root or user namespaces)")
    r = run_cli("check", "--json", "--only", "MD301", env=clean_env, private_pids=True)
    assert r.rc == 0 and r.status("MD301") == "ok", r.out
