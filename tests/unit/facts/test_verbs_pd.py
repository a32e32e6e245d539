"""meshdoctor.facts.verbs_pd without the CLI: errno text, and the probe's reading of the
stand-in pyverbs (tests/fixtures/pyverbs) in this interpreter's child."""

from __future__ import annotations

import sys

from meshdoctor.facts import verbs_pd
from meshdoctor.facts.context import NodeContext
from tests.stubs import HERE


def test_errno_text_names_the_errno():
    assert verbs_pd.errno_text(12) == "errno 12 (ENOMEM: Cannot allocate memory)"
    assert verbs_pd.errno_text(19) == "errno 19 (ENODEV: No such device)"
    assert verbs_pd.errno_text(None) == "no errno"


def test_the_probe_reads_each_device_in_order(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE / "fixtures" / "pyverbs"))
    monkeypatch.setenv("PYTHONPATH", str(HERE / "fixtures" / "pyverbs"))
    monkeypatch.setenv("FAKE_PYVERBS", "rdma_en2=ok,rdma_en3=pd:12")
    ctx = NodeContext(platform="linux", command_timeout=30)
    got = verbs_pd.probe_pd(ctx)
    assert got.state == verbs_pd.OK and got.python == sys.executable
    assert got.listed == ["rdma_en2", "rdma_en3"]
    assert [(d["device"], d["result"]) for d in got.devices] == [
        ("rdma_en2", "ok"),
        ("rdma_en3", "error"),
    ]
    assert got.devices[1]["step"] == "ibv_alloc_pd" and got.devices[1]["errno"] == 12
    got = verbs_pd.probe_pd(NodeContext(platform="linux", command_timeout=30), ["rdma_en9"])
    assert got.devices == [{"device": "rdma_en9", "result": "missing"}]
