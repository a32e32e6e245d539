"""MD113 (gpu.health) against the fake ``pynvml``: ECC errors and NVLink links down, named by
GPU."""

from __future__ import annotations

from tests.checks.test_gpu_checks import results
from tests.helpers import run_cli


def test_ecc_errors_fail_and_name_the_gpu(gpu_env):
    r = run_cli("check", "--only", "MD113", "--json", env=gpu_env("ecc"))
    assert r.rc == 1
    got = {x["status"]: x for x in results(r, "MD113")}
    assert "GPU 1 (NVIDIA H200): 3 volatile uncorrected ECC error(s)" in got["fail"]["summary"]
    assert "row remapping pending" in got["warn"]["summary"]


def test_nvlink_down_names_the_links(gpu_env):
    r = run_cli("check", "--only", "MD113", "--json", env=gpu_env("nvlink-down"))
    assert r.rc == 1
    f = results(r, "MD113")[0]
    assert f["status"] == "fail" and f["host"]
    assert "GPU 1 (NVIDIA H200): NVLink link(s) 4, 5 down (16 of 18 active)" in f["summary"]
    assert f["evidence"]["down"] == [4, 5]
