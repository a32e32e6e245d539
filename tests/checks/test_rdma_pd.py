"""MD208 (rdma.pd): each RDMA device opens and allocates a protection domain. RDMA hardware
is simulated by a stand-in pyverbs on PYTHONPATH (tests/fixtures/pyverbs: its Context and PD
behave as FAKE_PYVERBS says: open and PD ok, PD refused with an errno, open refused, a PD call
that never returns)."""

from __future__ import annotations

import json
import os

import pytest

from tests.checks.test_rdma_checks import mesh
from tests.helpers import run_cli, write
from tests.stubs import HERE

FAKE_PYVERBS = HERE / "fixtures" / "pyverbs"


def _env(clean_env, spec, **extra):
    env = dict(clean_env, FAKE_PYVERBS=spec, **extra)
    env.pop("MESHDOCTOR_PLATFORM", None)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FAKE_PYVERBS)] + [p for p in [clean_env.get("PYTHONPATH", "")] if p]
    )
    return env


def _md208(env, *extra, timeout=120):
    r = run_cli("check", "--only", "MD208", "--json", *extra, env=env, timeout=timeout)
    return r, r.results("MD208")


def test_every_device_opens_and_allocates_a_protection_domain(clean_env):
    r, (f,) = _md208(_env(clean_env, "rdma_en2=ok,rdma_en3=ok"))
    assert r.rc == 0, r.err
    assert f["status"] == "ok"
    assert f["summary"] == ("2 device(s) open and allocate a protection domain: rdma_en2, rdma_en3")


def test_a_device_that_refuses_the_protection_domain_fails_with_its_errno(clean_env):
    r, got = _md208(_env(clean_env, "rdma_en2=ok,rdma_en3=pd:12,rdma_en4=open:19"))
    assert r.rc == 1
    by = {f["evidence"]["device"]: f for f in got}
    assert set(by) == {"rdma_en3", "rdma_en4"}  # rdma_en2 is fine: not a finding
    assert by["rdma_en3"]["status"] == "fail"
    assert by["rdma_en3"]["summary"] == (
        "rdma_en3 is listed but ibv_alloc_pd fails: errno 12 (ENOMEM: Cannot allocate "
        "memory); a rank cannot register memory on it"
    )
    assert "Replug the Thunderbolt 5 cable of rdma_en3" in by["rdma_en3"]["remediation"]["text"]
    assert "reboot" in by["rdma_en3"]["remediation"]["text"]
    assert by["rdma_en4"]["summary"] == (
        "rdma_en4 is listed but ibv_open_device fails: errno 19 (ENODEV: No such device); "
        "a rank cannot open it"
    )
    rows = {d["device"]: d for d in by["rdma_en3"]["evidence"]["devices"]}
    assert rows["rdma_en2"]["result"] == "ok"
    assert rows["rdma_en3"]["errno_name"] == "ENOMEM"
    assert "Failed to allocate PD. Errno: 12" in rows["rdma_en3"]["error"]


def test_with_a_hostfile_only_the_devices_named_for_this_node_are_probed(clean_env, tmp_path):
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en3", "rdma_en9"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    env = _env(clean_env, "rdma_en2=ok,rdma_en3=pd:19,rdma_en4=pd:12")
    r, (f,) = _md208(env, "--local-only", "--hostfile", str(hf))
    assert f["summary"] == (
        "rdma_en3 (towards rank 2 (m3)) is listed but ibv_alloc_pd fails: errno 19 (ENODEV: "
        "No such device); a rank cannot register memory on it; not listed: rdma_en9 (MD202 "
        "reports them)"
    )
    probed = [d["device"] for d in f["evidence"]["devices"]]
    assert probed == ["rdma_en2", "rdma_en3", "rdma_en9"]  # rdma_en4 is not this node's


def test_a_pd_call_that_never_returns_is_not_assessed_on_a_short_deadline(clean_env):
    """slow is not hung: an overrun of a 4.5 s command deadline proves nothing."""
    env = _env(clean_env, "rdma_en2=ok,rdma_en3=pd:hang,rdma_en4=ok")
    r, got = _md208(env)
    assert r.rc == 3
    (f,) = got
    assert f["status"] == "error"
    assert f["summary"] == (
        "rdma_en3: ibv_alloc_pd did not return within 4.5 s (not assessed: slow, not proven "
        "hung); not probed after the overrun: rdma_en4"
    )
    assert "--timeout 45" in f["remediation"]["text"]


def test_a_pd_call_that_hangs_past_the_proof_deadline_is_a_wedged_driver(clean_env):
    env = _env(clean_env, "rdma_en2=pd:hang")
    r, (f,) = _md208(env, "--timeout", "45")
    assert r.rc == 1
    assert f["status"] == "fail" and f["needs_reboot"] is True
    assert f["summary"].startswith("rdma_en2: ibv_alloc_pd did not return within 20.25 s")
    assert f["summary"].endswith("the RDMA driver is wedged")


def _sysfs_with_a_device(tmp_path):
    """A sysfs that lists an RDMA device, so that the probe's child is started."""
    (tmp_path / "sys" / "class" / "infiniband" / "mlx5_0").mkdir(parents=True)
    return str(tmp_path / "sys")


def test_skips_when_neither_pyverbs_nor_the_verbs_library_loads(clean_env, tmp_path):
    env = {k: v for k, v in clean_env.items() if k != "PYTHONPATH"}
    env.update(
        MESHDOCTOR_SYSTEM_PYTHON="",  # no system interpreter to try either
        MESHDOCTOR_VERBS_LIBRARY="",  # nor a library for ctypes
        SYSFS_PATH=_sysfs_with_a_device(tmp_path),
    )
    r, (f,) = _md208(env)
    assert f["status"] == "skip"
    assert f["summary"].startswith(
        "libibverbs is not loadable here: libibverbs does not load: pyverbs: "
        "ModuleNotFoundError: No module named 'pyverbs'; no verbs library for ctypes"
    )


def test_without_pyverbs_the_real_libibverbs_is_asked_through_ctypes(clean_env, tmp_path):
    """This box's own libibverbs (rdma-core), with no RDMA driver loaded: ibv_get_device_list
    fails, and the probe says so in libibverbs' words."""
    import ctypes.util

    if not ctypes.util.find_library("ibverbs"):
        pytest.skip("libibverbs (rdma-core) is not installed on this machine")
    env = {k: v for k, v in clean_env.items() if k != "PYTHONPATH"}
    env.update(MESHDOCTOR_SYSTEM_PYTHON="", SYSFS_PATH=_sysfs_with_a_device(tmp_path))
    r, (f,) = _md208(env)
    # no driver behind the sysfs entry: libibverbs answers ENOSYS, as rdma-core does
    assert f["status"] == "skip"
    assert f["evidence"]["binding"].startswith("ctypes libibverbs")
    assert f["summary"].startswith("no RDMA subsystem: ctypes libibverbs")
    assert f["summary"].endswith("VerbsError: ibv_get_device_list failed: Function not implemented")


def test_skips_without_an_rdma_subsystem(clean_env):
    r, (f,) = _md208(_env(clean_env, "nolist"))
    assert f["status"] == "skip"
    assert f["summary"] == (
        "no RDMA subsystem: pyverbs: PyverbsRDMAError: Failed to get devices list"
    )


def test_skips_under_a_backend_without_rdma(clean_env, tmp_path):
    hf = write(tmp_path / "ring.json", json.dumps(mesh(backend="ring")))
    r, (f,) = _md208(_env(clean_env, "rdma_en2=pd:12"), "--local-only", "--hostfile", str(hf))
    assert f["status"] == "skip" and "'ring', which does not use RDMA" in f["summary"]


def test_on_a_mac_it_skips_saying_pyverbs_is_linux_only(fake_mac, clean_env):
    env = fake_mac("healthy")
    env["PYTHONPATH"] = str(FAKE_PYVERBS)  # even where a pyverbs would import
    env["FAKE_PYVERBS"] = "rdma_en2=pd:12"
    r, (f,) = _md208(env)
    assert f["status"] == "skip"
    assert f["summary"] == (
        "libibverbs is not loadable here: a simulated Mac: its verbs library is not this "
        "machine's to load"
    )


def test_the_system_interpreter_is_not_started_where_sysfs_lists_no_rdma_driver(
    clean_env, tmp_path
):
    (tmp_path / "sys" / "class").mkdir(parents=True)
    python = tmp_path / "python3"  # would say so if it were started
    python.write_text("#!/bin/sh\necho started >&2\nexit 9\n")
    python.chmod(0o755)
    env = {k: v for k, v in clean_env.items() if k != "PYTHONPATH"}
    env.update(MESHDOCTOR_SYSTEM_PYTHON=str(python), SYSFS_PATH=str(tmp_path / "sys"))
    r, (f,) = _md208(env)
    assert f["status"] == "skip"
    assert f["summary"].startswith(
        f"no RDMA subsystem: {tmp_path}/sys/class/infiniband does not exist (no RDMA driver "
        "is loaded), so pyverbs through"
    )


def test_a_device_list_that_never_returns_is_not_assessed_on_a_short_deadline(clean_env):
    r, (f,) = _md208(_env(clean_env, "listhang"))
    assert f["status"] == "error"
    assert f["summary"].startswith("the protection-domain probe did not answer (not assessed): `")
    assert "did not finish within" in f["summary"]


@pytest.fixture
def verbs_stub(tmp_path):
    """tests/fixtures/verbs_stub/fakeverbs.c built as a shared library (a C compiler needed)."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the libibverbs stand-in")
    lib = tmp_path / "libfakeverbs.so"
    src = HERE / "fixtures" / "verbs_stub" / "fakeverbs.c"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, timeout=120)
    return str(lib)


def test_through_ctypes_a_refused_protection_domain_fails_with_its_errno(
    clean_env, tmp_path, verbs_stub
):
    """No pyverbs anywhere: the probe calls the verbs library itself (as exo PR #1467 does on
    macOS), here a stand-in with libibverbs' entry points."""
    env = {k: v for k, v in clean_env.items() if k != "PYTHONPATH"}
    env.update(
        MESHDOCTOR_SYSTEM_PYTHON="",
        MESHDOCTOR_VERBS_LIBRARY=verbs_stub,
        SYSFS_PATH=_sysfs_with_a_device(tmp_path),
        FAKE_VERBS="rdma_en2=ok,rdma_en3=pd:12,rdma_en4=open:19,rdma_en5=pd:hang,rdma_en6=ok",
    )
    r, got = _md208(env)
    by = {f["evidence"]["device"]: f for f in got}
    assert by["rdma_en3"]["summary"] == (
        "rdma_en3 is listed but ibv_alloc_pd fails: errno 12 (ENOMEM: Cannot allocate "
        "memory); a rank cannot register memory on it"
    )
    assert by["rdma_en4"]["summary"].startswith(
        "rdma_en4 is listed but ibv_open_device fails: errno 19 (ENODEV: No such device)"
    )
    assert by["rdma_en5"]["status"] == "error"
    assert by["rdma_en5"]["summary"].startswith("rdma_en5: ibv_alloc_pd did not return within")
    assert by["rdma_en5"]["summary"].endswith("; not probed after the overrun: rdma_en6")
    assert by["rdma_en3"]["evidence"]["binding"] == f"ctypes {verbs_stub}"
    rows = {d["device"]: d["result"] for d in by["rdma_en3"]["evidence"]["devices"]}
    assert rows == {
        "rdma_en2": "ok",
        "rdma_en3": "error",
        "rdma_en4": "error",
        "rdma_en5": "hung",
        "rdma_en6": "not_probed",
    }
