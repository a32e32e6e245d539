"""The verbs inventory fact: the pyverbs reader against a fake shaped like the real API, the
``ibv_devinfo`` reader on a fake Mac, deadlines, and the real Debian ``python3-pyverbs`` in CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from meshdoctor.facts import verbs
from meshdoctor.facts.context import NodeContext
from tests import stubs

REPO = Path(__file__).resolve().parents[3]
SYSTEM_PYTHON = "/usr/bin/python3"


class PyverbsRDMAError(Exception):
    """Shaped like ``pyverbs.pyverbs_error.PyverbsRDMAError``."""


class FakeDevice:
    """``pyverbs.device.Device``: ``name`` is bytes."""

    def __init__(self, name: str):
        self.name = name.encode()


class Attr(types.SimpleNamespace):
    pass


class FakeGID:
    def __init__(self, text: str):
        self.gid = text

    def __str__(self) -> str:
        return self.gid


class FakePyverbsDevice(types.ModuleType):
    """A ``pyverbs.device`` module: ``get_device_list()``, ``Context(name=)`` with
    ``query_device()``, ``query_port(n)``, ``query_gid(port, index)``, ``close()``."""

    def __init__(self, devices=None, list_error=None, hang=0.0):
        super().__init__("pyverbs.device")
        self.devices = devices or {}
        self.list_error = list_error
        self.hang = hang
        self.closed = []
        outer = self

        class Context:
            def __init__(self, name=None):
                if name not in outer.devices:
                    raise PyverbsRDMAError(f"Failed to find device {name}")
                self.name = name
                self.spec = outer.devices[name]

            def query_device(self):
                return Attr(**self.spec["attr"])

            def query_port(self, num):
                return Attr(**self.spec["ports"][num])

            def query_gid(self, port, index):
                gids = self.spec["gids"].get(port, {})
                return FakeGID(gids.get(index, "0000:0000:0000:0000:0000:0000:0000:0000"))

            def close(self):
                outer.closed.append(self.name)

        self.Context = Context

    def get_device_list(self):
        if self.hang:
            time.sleep(self.hang)
        if self.list_error:
            raise self.list_error
        return [FakeDevice(n) for n in self.devices]


GUID_RAW = int.from_bytes(bytes.fromhex("0c42a10300b63c10"), sys.byteorder)


def roce_device(state=4, gids=None):
    return {
        "attr": dict(
            node_guid=GUID_RAW,
            sys_image_guid=GUID_RAW,
            vendor_id=0x2C9,
            vendor_part_id=4119,
            hw_ver=0,
            fw_version="16.35.2000",
            phys_port_cnt=1,
            max_qp=262144,
            max_qp_wr=32768,
            max_cq=16777216,
            max_cqe=4194303,
            max_mr=16777216,
            max_pd=16777216,
        ),
        "ports": {1: dict(state=state, max_mtu=5, active_mtu=3, gid_tbl_len=8, link_layer=2)},
        "gids": {
            1: gids
            if gids is not None
            else {
                0: "fe80:0000:0000:0000:0e42:a1ff:feb6:3c10",
                3: "0000:0000:0000:0000:0000:ffff:c633:640a",
            }
        },
    }


def test_pyverbs_reader_builds_the_same_model_as_ibv_devinfo():
    fake = FakePyverbsDevice({"mlx5_0": roce_device(), "mlx5_1": roce_device(state=1, gids={})})
    inv = verbs.read_pyverbs({"device": fake})
    assert inv.state == verbs.OK and inv.reader == "pyverbs"
    assert inv.listed == ["mlx5_0", "mlx5_1"]
    d = inv.device("mlx5_0")
    assert d.node_guid == "0c42:a103:00b6:3c10" and d.fw_ver == "16.35.2000"
    assert d.limits["max_qp"] == 262144 and d.limits["max_mr"] == 16777216
    p = d.port(1)
    assert p.active and p.state == "PORT_ACTIVE" and p.link_layer == "Ethernet"
    assert (p.max_mtu, p.active_mtu, p.gid_tbl_len) == (4096, 1024, 8)
    assert [(g.index, g.gid) for g in p.gids] == [
        (0, "fe80::e42:a1ff:feb6:3c10"),
        (3, "::ffff:198.51.100.10"),
    ]
    assert inv.device("mlx5_1").port(1).state == "PORT_DOWN"
    assert sorted(fake.closed) == ["mlx5_0", "mlx5_1"]  # every Context is closed


def test_pyverbs_no_rdma_subsystem_is_a_state_not_a_crash():
    fake = FakePyverbsDevice(list_error=PyverbsRDMAError("Failed to get devices list"))
    inv = verbs.read_pyverbs({"device": fake})
    assert inv.state == verbs.NO_RDMA and "Failed to get devices list" in inv.detail


def test_pyverbs_other_errors_and_empty_lists():
    assert verbs.read_pyverbs({"device": FakePyverbsDevice()}).state == verbs.NO_DEVICES
    odd = verbs.read_pyverbs({"device": FakePyverbsDevice(list_error=OSError("boom"))})
    assert odd.state == verbs.UNREADABLE and "boom" in odd.detail
    broken = FakePyverbsDevice({"mlx5_0": {"attr": {}, "ports": {}, "gids": {}}})
    inv = verbs.read_pyverbs({"device": broken})  # query_port(1) raises KeyError
    assert inv.state == verbs.UNREADABLE and "mlx5_0: pyverbs could not query it" in inv.warnings[0]


def _linux_ctx(monkeypatch, fake, timeout=10.0):
    monkeypatch.setitem(sys.modules, "pyverbs", types.ModuleType("pyverbs"))
    monkeypatch.setitem(sys.modules, "pyverbs.device", fake)
    monkeypatch.setattr(verbs, "_pyverbs_importable", lambda ctx: True)
    monkeypatch.setenv("PATH", "/nonexistent")  # no ibv_devinfo to fall back to
    return NodeContext(platform="linux", command_timeout=timeout)


def test_gather_uses_pyverbs_first_and_records_the_reader(monkeypatch):
    ctx = _linux_ctx(monkeypatch, FakePyverbsDevice({"mlx5_0": roce_device()}))
    inv = ctx.fact(verbs.gather_verbs)
    assert inv.state == verbs.OK and inv.evidence()["reader"] == "pyverbs"
    assert inv.attempts[0]["reader"] == "pyverbs"


def test_gather_hung_pyverbs_is_wedged_not_waited_for(monkeypatch):
    ctx = _linux_ctx(
        monkeypatch, FakePyverbsDevice({"mlx5_0": roce_device()}, hang=60), timeout=0.3
    )
    t0 = time.monotonic()
    inv = ctx.fact(verbs.gather_verbs)
    assert time.monotonic() - t0 < 30  # bounded: well inside the 60 s hang
    assert inv.state == verbs.WEDGED and inv.reader == "pyverbs"


def test_gather_without_any_reader_is_absent_and_runs_nothing(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("MESHDOCTOR_SYSTEM_PYTHON", "")  # no system interpreter either
    ran = []
    monkeypatch.setattr(verbs.execute, "run", lambda *a, **k: ran.append(a))
    inv = NodeContext(platform="linux").fact(verbs.gather_verbs)
    assert inv.state == verbs.ABSENT and ran == []
    assert "pyverbs is not importable and ibv_devinfo is not on PATH" in inv.detail


def test_pyverbs_is_never_imported_on_a_mac(monkeypatch):
    monkeypatch.setattr(
        verbs.importlib.util, "find_spec", lambda name: pytest.fail("looked for pyverbs on macOS")
    )
    assert not verbs._pyverbs_importable(NodeContext(platform="darwin"))


def _fake_mac_ctx(tmp_path, monkeypatch, *sets, timeout=10.0, extra=None):
    env = stubs.install(tmp_path / "bin", ("healthy",) + sets, extra=extra)
    monkeypatch.setenv("PATH", env["PATH"])
    return NodeContext(platform="darwin", command_timeout=timeout)


def test_ibv_reader_on_a_healthy_mac(tmp_path, monkeypatch):
    inv = _fake_mac_ctx(tmp_path, monkeypatch).fact(verbs.gather_verbs)
    assert inv.state == verbs.OK and inv.reader == "ibv_devinfo" and inv.warnings == []
    assert inv.listed == [d.name for d in inv.devices]
    assert [a["reader"] for a in inv.attempts] == ["pyverbs", "ibv_devinfo", "ibv_devices"]


@pytest.mark.parametrize(
    "fixture_set, state",
    [
        ("rdma-disabled", verbs.NO_DEVICES),
        ("enabled-no-devices", verbs.NO_DEVICES),
        ("garbage", verbs.UNREADABLE),
        ("truncated", verbs.OK),
    ],
)
def test_ibv_reader_states(tmp_path, monkeypatch, fixture_set, state):
    inv = _fake_mac_ctx(tmp_path, monkeypatch, fixture_set).fact(verbs.gather_verbs)
    assert inv.state == state, inv
    if fixture_set == "truncated":
        assert any(
            "rdma_en4: listed by ibv_devices but ibv_devinfo gave no details" in w
            for w in inv.warnings
        )


def test_ibv_reader_linux_without_subsystem(tmp_path, monkeypatch):
    ctx = _fake_mac_ctx(
        tmp_path,
        monkeypatch,
        extra={
            "ibv_devinfo__v.txt": "Failed to get IB devices list: Function not implemented\n",
            "ibv_devinfo__v.exit": "255",
        },
    )
    assert ctx.fact(verbs.gather_verbs).state == verbs.NO_RDMA


def test_hung_ibv_devinfo_is_wedged_and_ibv_devices_is_not_run(tmp_path, monkeypatch):
    ctx = _fake_mac_ctx(tmp_path, monkeypatch, "ibv_devinfo-hang", timeout=0.5)
    t0 = time.monotonic()
    inv = ctx.fact(verbs.gather_verbs)
    assert time.monotonic() - t0 < 30  # bounded: well inside the stub's hang
    assert inv.state == verbs.WEDGED and "did not finish within" in inv.detail
    assert [a["reader"] for a in inv.attempts] == ["pyverbs", "ibv_devinfo"]


# --- the real pyverbs (Debian python3-pyverbs, installed by .ci/run as root) ------------------


def _system_pyverbs() -> bool:
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    r = subprocess.run([SYSTEM_PYTHON, "-c", "import pyverbs.device"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(
    not _system_pyverbs(),
    reason=f"{SYSTEM_PYTHON} cannot import pyverbs (install python3-pyverbs as root: .ci/run does)",
)
def test_real_pyverbs_answer_goes_through_the_reader():
    """The real module, imported by the system Python: with no RDMA subsystem (this box, CI) its
    ``Failed to get devices list`` must come out as state no_rdma; with RDMA hardware, as ok or
    no_devices. Never an exception."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "from meshdoctor.facts.verbs import read_pyverbs; inv = read_pyverbs(); "
        "print(json.dumps({'state': inv.state, 'detail': inv.detail, "
        "'names': inv.names}))"
    )
    r = subprocess.run(
        [SYSTEM_PYTHON, "-c", code, str(REPO)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["state"] in (verbs.NO_RDMA, verbs.NO_DEVICES, verbs.OK), got
    if not Path("/sys/class/infiniband").is_dir():
        assert got["state"] in (verbs.NO_RDMA, verbs.NO_DEVICES), got


@pytest.mark.skipif(
    not _system_pyverbs(),
    reason=f"{SYSTEM_PYTHON} cannot import pyverbs (install python3-pyverbs as root: .ci/run does)",
)
def test_the_documented_venv_reads_the_os_pyverbs_through_the_system_interpreter(tmp_path):
    """The README's set-up is a venv, which cannot import the OS package: the check still reads
    verbs through pyverbs, in a child run by the system interpreter."""
    from tests.helpers import run_cli

    probe = subprocess.run([sys.executable, "-c", "import pyverbs"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this interpreter imports pyverbs itself: the in-process reader applies")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_PLATFORM"] = "linux"
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if not os.path.exists(os.path.join(p, "ibv_devinfo"))
    )
    if not _has_rdma_devices():
        # a sysfs naming one device, so the child runs; libibverbs (told the same SYSFS_PATH)
        # then finds no verbs class there and answers as on a node without RDMA
        env[verbs.SYSFS_ENV] = str(_fake_sysfs(tmp_path, ["mlx5_0"]))
    r = run_cli("check", "--json", "--only", "MD201", env=env)
    ev = r.results("MD201")[0]["evidence"]
    assert ev["reader"] == f"pyverbs ({SYSTEM_PYTHON})", ev
    assert [a["reader"] for a in ev["attempts"]] == ["pyverbs", f"pyverbs ({SYSTEM_PYTHON})"]
    if not _has_rdma_devices():
        assert ev["inventory"] in (verbs.NO_RDMA, verbs.NO_DEVICES), ev
        assert r.results("MD201")[0]["status"] == "skip"


def _has_rdma_devices() -> bool:
    p = Path("/sys/class/infiniband")
    return p.is_dir() and any(p.iterdir())


def _fake_sysfs(root: Path, devices) -> Path:
    """A sysfs tree with ``class/`` and, when ``devices`` is not None, ``class/infiniband/``
    holding one directory per device name."""
    (root / "sysfs" / "class").mkdir(parents=True, exist_ok=True)
    if devices is not None:
        (root / "sysfs" / "class" / "infiniband").mkdir(exist_ok=True)
        for name in devices:
            (root / "sysfs" / "class" / "infiniband" / name).mkdir()
    return root / "sysfs"


@pytest.mark.parametrize(
    "devices, state, listed",
    [(None, verbs.NO_RDMA, None), ([], verbs.NO_DEVICES, [])],
)
def test_no_infiniband_class_in_sysfs_answers_without_the_child(
    tmp_path, monkeypatch, devices, state, listed
):
    """No ``class/infiniband`` (no RDMA driver loaded), or an empty one: pyverbs could list no
    device, so the system interpreter is not started; the state is what pyverbs would give."""
    monkeypatch.setenv(verbs.SYSFS_ENV, str(_fake_sysfs(tmp_path, devices)))
    monkeypatch.setenv("MESHDOCTOR_SYSTEM_PYTHON", sys.executable)
    monkeypatch.setattr(verbs, "_pyverbs_importable", lambda ctx: False)
    monkeypatch.setattr(verbs, "_system_python", lambda ctx: sys.executable)
    ran = []
    monkeypatch.setattr(verbs.execute, "run", lambda *a, **k: ran.append(a))
    inv = NodeContext(platform="linux").fact(verbs.gather_verbs)
    assert ran == []
    assert inv.state == state and inv.listed == listed and inv.reader == verbs.SYSFS
    assert str(tmp_path / "sysfs" / "class" / "infiniband") in inv.detail
    assert f"pyverbs through {sys.executable} was not run" in inv.detail
    assert [a["reader"] for a in inv.attempts] == ["pyverbs", verbs.SYSFS]
    assert set(inv.evidence()) == {"reader", "inventory", "attempts", "detail"}


@pytest.mark.parametrize("tree", ["device", "no-sysfs", "unreadable"])
def test_sysfs_with_a_device_or_without_sysfs_still_runs_the_child(tmp_path, monkeypatch, tree):
    if tree == "device":
        root = _fake_sysfs(tmp_path, ["mlx5_0"])
    elif tree == "no-sysfs":
        root = tmp_path / "nothing-mounted"
        root.mkdir()
    else:  # class/infiniband is a file: listing it fails with an error other than "absent"
        root = _fake_sysfs(tmp_path, None)
        (root / "class" / "infiniband").write_text("")
    monkeypatch.setenv(verbs.SYSFS_ENV, str(root))
    assert verbs.sysfs_shortcut(sys.executable) is None


def test_a_real_node_without_rdma_gives_the_same_verdict_with_and_without_the_child(
    tmp_path, monkeypatch
):
    """On this machine (no RDMA hardware) the shortcut and the real reader agree on the state
    class: both say the node has no device to use."""
    if _has_rdma_devices():
        pytest.skip("this machine has RDMA devices")
    if not _system_pyverbs():
        pytest.skip(f"{SYSTEM_PYTHON} cannot import pyverbs")
    monkeypatch.setattr(verbs, "_pyverbs_importable", lambda ctx: False)
    monkeypatch.setattr(verbs, "_system_python", lambda ctx: SYSTEM_PYTHON)
    monkeypatch.delenv(verbs.SYSFS_ENV, raising=False)
    fast = NodeContext(platform="linux").fact(verbs.gather_verbs)
    monkeypatch.setattr(verbs, "sysfs_shortcut", lambda python: None)
    slow = NodeContext(platform="linux").fact(verbs.gather_verbs)
    assert slow.reader == f"pyverbs ({SYSTEM_PYTHON})"
    assert fast.reader == verbs.SYSFS
    assert fast.state == slow.state, (fast, slow)
    assert set(fast.evidence()) == set(slow.evidence())


def test_a_hung_system_interpreter_is_wedged_not_waited_for(tmp_path, monkeypatch):
    hung = tmp_path / "python3"
    hung.write_text("#!/bin/sh\nexec sleep 30\n")
    hung.chmod(0o755)
    monkeypatch.setenv("MESHDOCTOR_SYSTEM_PYTHON", str(hung))
    monkeypatch.setenv(verbs.SYSFS_ENV, str(_fake_sysfs(tmp_path, ["mlx5_0"])))  # a device
    monkeypatch.setattr(verbs, "_pyverbs_importable", lambda ctx: False)
    t0 = time.monotonic()
    inv = NodeContext(platform="linux", command_timeout=0.5).fact(verbs.gather_verbs)
    assert time.monotonic() - t0 < 20  # bounded: well inside the 30 s hang
    assert inv.state == verbs.WEDGED and str(hung) in inv.detail


def test_a_system_interpreter_without_pyverbs_falls_back_to_the_ibv_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("MESHDOCTOR_SYSTEM_PYTHON", sys.executable)  # a venv: no pyverbs
    monkeypatch.setenv(verbs.SYSFS_ENV, str(_fake_sysfs(tmp_path, ["mlx5_0"])))  # a device
    monkeypatch.setattr(verbs, "_pyverbs_importable", lambda ctx: False)
    monkeypatch.setattr(verbs, "_system_python", lambda ctx: sys.executable)
    monkeypatch.setenv("PATH", "/nonexistent")
    if importlib_find("pyverbs"):
        pytest.skip("this interpreter imports pyverbs")
    inv = NodeContext(platform="linux").fact(verbs.gather_verbs)
    assert inv.state == verbs.ABSENT
    assert any(
        "not importable" in a["outcome"]
        for a in inv.attempts
        if a["reader"].startswith("pyverbs (")
    )


def importlib_find(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None
