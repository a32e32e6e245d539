"""`meshdoctor fix reset-group` on this machine's ring: the leftover ranks are stopped (the one
that ignores SIGTERM by SIGKILL), memory and ports are checked, and a one-element all_sum over
two real MLX ranks re-forms the group: `recovered`."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli
from tests.fixes.test_stale_ranks import SLEEP, SPIN_IGNORING_TERM, Procs, alive


@pytest.fixture
def procs(clean_env):
    p = Procs(clean_env)
    yield p
    p.close()


def _step(doc, prefix):
    return next(a for a in doc["actions"] if a["step"].startswith(prefix))


def test_stale_ranks_killed_group_reformed_recovered_and_second_run_changes_nothing(procs):
    stubborn = procs.orphan(SPIN_IGNORING_TERM, MLX_RANK="0")
    polite = procs.orphan(SLEEP, MLX_RANK="1")
    plan = run_cli("fix", "reset-group", "--json", env=procs.env, timeout=120)
    assert plan.rc == 1 and alive(stubborn) and alive(polite)
    assert _step(plan.doc, "one-element all_sum")["outcome"] == "planned"

    r = run_cli("fix", "reset-group", "--yes", "--json", env=procs.env, timeout=120)
    assert r.rc == 0, r.outcome()
    assert not alive(stubborn) and not alive(polite)
    kills = {a["detail"]["pid"]: a for a in r.doc["actions"] if a["detail"].get("pid")}
    assert kills[stubborn]["outcome"] == "done: killed by SIGKILL"
    assert kills[polite]["changed"] is True
    probe = _step(r.doc, "one-element all_sum")
    assert probe["outcome"] == "ok" and probe["detail"]["verdict"] == "go"
    assert _step(r.doc, "wait up to")["outcome"] == "ok"
    res = r.results("MD702")[0]
    assert res["status"] == "ok" and "recovered" in res["summary"]
    assert res["evidence"]["verification"]["outcome"] == "recovered"

    again = run_cli("fix", "reset-group", "--yes", "--json", env=procs.env, timeout=120)
    assert again.rc == 0
    assert not any(a["changed"] for a in again.doc["actions"])
    assert again.results("MD702")[0]["evidence"]["changed"] is False


def test_group_that_cannot_form_names_the_host_to_reboot(procs, tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'no MLX here' >&2\nexit 1\n")
    broken.chmod(0o755)
    env = dict(procs.env, MESHDOCTOR_PYTHON=str(broken))
    r = run_cli("fix", "reset-group", "--yes", "--json", env=env, timeout=120)
    assert r.rc == 1, r.outcome()
    assert r.doc["needs_reboot"] == [r.doc["hosts"][0]["host"]]
    res = [x for x in r.results("MD702") if x.get("needs_reboot")]
    assert res and "the group did not re-form" in res[0]["summary"]
    assert _step(r.doc, "one-element all_sum")["outcome"].startswith("failed")


def test_plan_summary_counts_the_steps_it_lists(clean_env):
    """The plan lists every planned step; its summary counts those, and says how many would
    change state when that differs."""
    r = run_cli("fix", "reset-group", "--json", env=clean_env, timeout=120)
    listed = [a for a in r.doc["actions"] if a["code"] == "MD702" and a["outcome"] == "planned"]
    (res,) = [x for x in r.doc["results"] if x["code"] == "MD702"]
    assert r.rc == 1 and len(listed) >= 2, r.out
    assert res["summary"].startswith(f"{len(listed)} step(s) planned"), res["summary"]
