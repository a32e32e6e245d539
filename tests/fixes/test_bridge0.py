"""`meshdoctor fix bridge0` on a fake Mac whose Thunderbolt Bridge is active: the stub `ifconfig
bridge0 down` takes the bridge down (the fixture set's ifconfig output changes), MD205 verifies."""

from __future__ import annotations

from tests.helpers import run_cli
from tests.stubs import FIXTURES

DOWN = {
    "ifconfig__bridge0_down.txt": "",
    "ifconfig__bridge0_down.apply": "ifconfig.down ifconfig.txt",
    "ifconfig.down": (FIXTURES / "healthy" / "ifconfig.txt").read_text(),
}


def test_bridge_taken_down_verified_by_md205_and_second_run_changes_nothing(
    fake_mac, clean_env, tmp_path
):
    env = fake_mac("healthy", "bridge0-active", extra=DOWN)
    env = dict(
        env,
        **{k: v for k, v in clean_env.items() if k not in env},
        MESHDOCTOR_STATE_DIR=str(tmp_path / "state"),
    )
    before = run_cli("check", "--only", "MD205", "--json", env=env)
    bad = [r for r in before.results("MD205") if r["status"] == "fail"]
    assert bad and "Thunderbolt Bridge (bridge0) is active" in bad[0]["summary"]
    assert bad[0]["remediation"]["fix"] == "MD704"

    plan = run_cli("fix", "bridge0", "--json", env=env)
    assert plan.rc == 1
    [act] = plan.doc["actions"]
    assert act["argv"] == ["sudo", "-n", "ifconfig", "bridge0", "down"]
    assert act["outcome"] == "planned" and act["changed"] is False
    still = run_cli("check", "--only", "MD205", "--json", env=env)
    assert still.status("MD205") == "fail"  # the plan changed nothing

    done = run_cli("fix", "bridge0", "--yes", "--json", env=env)
    assert done.rc == 0, done.out
    [act] = done.doc["actions"]
    assert act["outcome"] == "done" and act["changed"] is True
    res = done.results("MD704")[0]
    assert res["status"] == "ok" and "MD205" in res["summary"]
    assert run_cli("check", "--only", "MD205", "--json", env=env).status("MD205") == "ok"

    again = run_cli("fix", "bridge0", "--yes", "--json", env=env)
    assert again.rc == 0 and again.doc["actions"] == []
    assert again.results("MD704")[0]["evidence"]["changed"] is False


def test_fix_without_names_plans_the_fix_for_the_failure_found(fake_mac, clean_env):
    env = fake_mac("healthy", "bridge0-active", extra=DOWN)
    r = run_cli("fix", "--json", env=env, timeout=120)
    codes = {a["code"] for a in r.doc["actions"]}
    assert "MD704" in codes
    assert any(
        a["argv"][:2] == ["sudo", "-n"] and a["outcome"] == "planned" for a in r.doc["actions"]
    )
    assert r.rc == 1
