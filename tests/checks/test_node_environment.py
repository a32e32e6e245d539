"""Unit tests of the node checks' decision tables (environment, known-bad MLX versions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from meshdoctor.parsers import macos
from meshdoctor.checks.node_environment import assess
from meshdoctor.checks.mlx_runtime import known_bad
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


def test_known_bad_versions():
    assert known_bad((0, 32, 4), "ring") == []
    assert known_bad((0, 32, 4), "jaccl") == []
    ring = known_bad((0, 32, 0), "ring")
    assert [b["fixed_in"] for b in ring] == ["0.32.1"] and "hang forever" in ring[0]["reason"]
    j = {b["fixed_in"] for b in known_bad((0, 30, 3), "jaccl")}
    assert {"0.30.4", "0.32.0", "0.32.1"} <= j
    assert [b["fixed_in"] for b in known_bad((0, 29, 0), "jaccl")][0] == "0.30.1"
    assert known_bad((), "jaccl") == []


def test_macos_parsers_on_documented_formats():
    vm = macos.parse_vm_stat(
        "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n"
        "Pages free:      10.\nPages wired down:    412345.\n"
    )
    assert macos.wired_bytes(vm) == 412345 * 16384
    assert macos.parse_sysctl("iogpu.wired_limit_mb: 0\nhw.memsize: 8\n") == {
        "iogpu.wired_limit_mb": "0",
        "hw.memsize": "8",
    }
    assert macos.parse_sw_vers("ProductVersion:\t\t26.3.1\n")["ProductVersion"] == "26.3.1"
    assert macos.version_tuple("26.3.1") == (26, 3, 1)
    assert macos.version_tuple("0.32.1.dev20260101+abc") == (0, 32, 1)
    assert macos.wired_bytes(macos.parse_vm_stat("garbage")) is None


@given(st.text())
def test_macos_parsers_never_raise(text):
    macos.wired_bytes(macos.parse_vm_stat(text))
    macos.parse_sysctl(text)
    macos.parse_sw_vers(text)
    macos.version_tuple(text)
    macos.to_int(text)


@given(st.text(alphabet=st.characters(), max_size=400), st.integers(0, 400))
def test_macos_parsers_on_truncated_fixture(noise, cut):
    text = (
        "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n"
        "Pages wired down:    412345.\n" + noise
    )[:cut]
    v = macos.wired_bytes(macos.parse_vm_stat(text))
    assert v is None or v >= 0


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
