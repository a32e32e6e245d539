"""MD103 (node.environment): the decision table on environments, and the check through the
CLI."""

from __future__ import annotations

import json

from meshdoctor.checks.node_environment import assess
from tests.helpers import run_cli


def statuses(env, launch=None):
    found, _ = assess(env, launch or {})
    return sorted((f.status, f.evidence.get("variable")) for f in found)


def test_clean_environment_has_no_findings():
    assert statuses({"PATH": "/usr/bin", "MLX_METAL_FAST_SYNCH": "1"}) == []


def test_jaccl_overrides_fail_and_stray_rank_warns():
    assert statuses({"JACCL_IBV_DEVICES": "/tmp/x.json", "MLX_RANK": "1"}) == [
        ("fail", "JACCL_IBV_DEVICES"),
        ("warn", "MLX_RANK"),
    ]


def test_progress_timeout_values():
    assert statuses({"JACCL_PROGRESS_TIMEOUT_MS": "30s"}) == [("fail", "JACCL_PROGRESS_TIMEOUT_MS")]
    assert statuses({"MLX_JACCL_PROGRESS_TIMEOUT_MS": "0"}) == [
        ("warn", "MLX_JACCL_PROGRESS_TIMEOUT_MS")
    ]
    assert statuses({"JACCL_PROGRESS_TIMEOUT_MS": "50"}) == [("warn", "JACCL_PROGRESS_TIMEOUT_MS")]
    assert statuses({"JACCL_PROGRESS_TIMEOUT_MS": "30000"}) == []
    # the hostfile's envs count as well
    assert statuses({}, {"JACCL_PROGRESS_TIMEOUT_MS": "x"}) == [
        ("fail", "JACCL_PROGRESS_TIMEOUT_MS")
    ]


def test_timeout_action_and_obsolete_variable():
    assert statuses({"JACCL_TIMEOUT_ACTION": "throw"}) == []
    assert statuses({"JACCL_TIMEOUT_ACTION": "explode"}) == [("warn", "JACCL_TIMEOUT_ACTION")]
    assert statuses({"MLX_JACCL_DEVICES": "x"}) == [("warn", "MLX_JACCL_DEVICES")]


def test_jaccl_ring_switch_counts_by_presence():
    found, _ = assess({"MLX_JACCL_RING": "0"}, {})
    (f,) = found
    assert f.status == "warn" and "whatever its value" in f.summary
    assert f.summary.startswith("MLX_JACCL_RING='0' is set in this shell: JACCL turns the ring on")
    found, _ = assess({}, {"MLX_JACCL_RING": "false"}, hostfile_given=True)
    assert [x.evidence["rule"] for x in found] == ["presence counts"]
    assert "the hostfile's envs" in found[0].summary
    # =1 in a shell is a per-rank leftover, not a misunderstanding of the switch
    assert statuses({"MLX_JACCL_RING": "1"}) == [("warn", "MLX_JACCL_RING")]


def test_nccl_launch_variables_left_in_a_shell():
    assert statuses(
        {"NCCL_HOST_IP": "10.0.0.1", "NCCL_PORT": "12345", "MLX_NCCL_TIMEOUT": "600000"}
    ) == [("warn", "MLX_NCCL_TIMEOUT"), ("warn", "NCCL_HOST_IP"), ("warn", "NCCL_PORT")]
    found, _ = assess({"MLX_NCCL_TIMEOUT": "600000"}, {})
    assert "default 300000" in found[0].summary
    # in the hostfile's envs it is a deliberate, fleet-wide setting; only its value is checked
    assert statuses({}, {"MLX_NCCL_TIMEOUT": "600000"}) == []
    assert statuses({}, {"MLX_NCCL_TIMEOUT": "10min"}) == [("warn", "MLX_NCCL_TIMEOUT")]


def test_metal_fast_synch_here_but_not_in_the_hostfile_envs():
    env = {"MLX_METAL_FAST_SYNCH": "1"}
    found, _ = assess(env, {}, hostfile_given=True)
    (f,) = found
    assert f.status == "warn" and "not in the hostfile's envs" in f.summary
    assert 'add "MLX_METAL_FAST_SYNCH=1" to the hostfile' in f.remediation
    assert assess(env, {"MLX_METAL_FAST_SYNCH": "1"}, hostfile_given=True)[0] == []
    assert assess(env, {})[0] == []  # no hostfile: nothing to compare with


def test_environment_summary_says_what_was_checked_and_names_other_variables(clean_env):
    """MLX_FOO / JACCL_X are not known to break a launch: the ok summary does not claim
    there is nothing set, it names them."""
    env = dict(clean_env, MLX_FOO="1", JACCL_X="2")
    r = run_cli("check", "--only", "MD103", "--json", env=env)
    (res,) = r.results("MD103")
    assert res["status"] == "ok" and "no stray" not in res["summary"]
    assert res["summary"].startswith("no MLX_*/JACCL_* variable known to override or break")
    assert "also set: JACCL_X, MLX_FOO" in res["summary"]


def test_environment_fast_synch_missing_from_the_hostfile_through_the_cli(clean_env, tmp_path):
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps(
            {
                "backend": "ring",
                "envs": ["MLX_RING_VERBOSE=1"],
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "m2", "ips": ["198.51.100.2"]},
                ],
            }
        )
    )
    env = dict(clean_env, MLX_METAL_FAST_SYNCH="1")
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD103", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD103") == "warn", r.out
    assert (
        "MLX_METAL_FAST_SYNCH='1' is set on this node but not in the hostfile's envs"
        in r.results("MD103")[0]["summary"]
    )


def test_metal_tuning_variable_here_but_not_in_the_hostfile_envs_warns(tmp_path, clean_env):
    hf = tmp_path / "h.json"
    hf.write_text(
        json.dumps(
            {
                "hosts": [
                    {"ssh": "localhost", "ips": ["127.0.0.1"]},
                    {"ssh": "m2", "ips": ["198.51.100.2"]},
                ],
            }
        )
    )
    env = dict(clean_env, MLX_MAX_OPS_PER_BUFFER="2")
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD103", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD103") == "warn", r.out
    (f,) = r.results("MD103")
    assert f["summary"].startswith(
        "MLX_MAX_OPS_PER_BUFFER='2' is set on this node but not in the hostfile's envs: it sets "
        "the most operations in one Metal command buffer (GPU timeouts)"
    )
    assert 'add "MLX_MAX_OPS_PER_BUFFER=2" to the hostfile' in f["remediation"]["text"]
