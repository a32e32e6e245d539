"""meshdoctor.facts.nvml against the fake ``pynvml`` (tests/fake_nvml/pynvml.py): snapshot shapes
and clocks held back during a run."""

from __future__ import annotations

import importlib
import sys

from tests.helpers import FAKE_DIR


def _fake():
    spec = importlib.util.spec_from_file_location("fake_pynvml", FAKE_DIR / "pynvml.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_snapshot_shapes_from_the_nvml_calls(monkeypatch):
    from meshdoctor.facts import nvml

    monkeypatch.setenv("FAKE_NVML", "healthy,throttle")
    nv = _fake()
    nv.nvmlInit()
    snap = nvml.snapshot(nv)
    assert snap["driver_version"] == "580.159.04" and snap["cuda_driver_version"] == 13000
    g0 = snap["gpus"][0]
    assert g0["memory"] == {"total": 141 << 30, "used": 0, "reserved": 615 << 20}
    assert g0["retired_pages"] is None  # NOT_SUPPORTED is None, not an error
    assert len(g0["nvlink"]) == 18 and all(ln["active"] for ln in g0["nvlink"])
    assert nvml.throttle_names(g0["clock_event_reasons"]) == ["hardware thermal slowdown"]
    assert snap["errors"] == {}


def test_clocks_held_back_during_a_run_are_measured(monkeypatch, tmp_path):
    from meshdoctor.facts import nvml
    from meshdoctor.probe.report import measures

    drv = tmp_path / "version"
    drv.write_text("NVRM\n")
    monkeypatch.setenv("MESHDOCTOR_NVIDIA_DRIVER_FILE", str(drv))
    monkeypatch.setenv("FAKE_NVML", "healthy,throttle")
    monkeypatch.setitem(sys.modules, "pynvml", _fake())
    before = nvml.violation_ns()
    after = nvml.violation_ns()
    assert set(before) == {0, 1} and set(before[0]) == {"power", "thermal"}
    assert nvml.slowdown(before, after) == [{"gpu": 0, "reason": "thermal", "ms": 5.0}]
    assert nvml.slowdown(None, after) == []
    res = measures._slowdown_result(nvml.slowdown(before, after))
    assert res.status == "warn" and "GPU 0 thermal 5.0 ms" in res.summary
