"""``--format prometheus`` (render/prometheus.py) from verdicts made of real results: every family
parses with prometheus-client's own text parser, label values are escaped, no sample carries a
timestamp, and the numbers are in base units. The real node_exporter reads the same files in
tests/cli/test_node_exporter.py."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from meshdoctor.model import HostInfo, Result, Verdict
from meshdoctor.render import prometheus


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _doc() -> dict:
    v = Verdict(command="check")
    v.hosts.append(HostInfo(host='m"0\\x\n'))
    v.results += [
        Result(
            "MD102", "mlx.runtime", "ok", "mlx 0.32.4", host="m0", evidence={"version": "0.32.4"}
        ),
        Result("MD302", "node.memory", "ok", "ok", host="m0", evidence={"wired_bytes": 7 << 30}),
        Result("MD113", "gpu.health", "fail", "GPU 3 row remap pending", host="m0"),
        Result("MD113", "gpu.health", "warn", "GPU 1 hot", host="m0", needs_reboot=True),
        Result(
            "MD202",
            "rdma.ports",
            "fail",
            "rdma_en4 is not active",
            host="m0",
            evidence={"named_devices": {"active": 2, "named": 3}},
        ),
        Result(
            "MD404",
            "fleet.edges",
            "ok",
            "5/6 edges active",
            host="m0",
            evidence={"edge_matrix": {"active": 5, "total": 6}},
        ),
    ]
    v.probe = {
        "backend": "ring",
        "ops": [
            {"op": "all_sum", "busbw_gbs": 12.5, "algbw_gbs": 6.25, "wrong": 0, "checked": 40},
            {"op": "all_gather", "skipped": "not in this MLX", "unsupported": True},
        ],
    }
    return v.finish().to_dict()


@pytest.mark.parametrize("command", ["triage", "fix", "probe"])
def test_info_never_has_an_empty_label(command):
    """What the run did not learn is left out (an empty label value is the same as none in
    Prometheus' data model); the probe's MLX version comes from its ranks."""
    v = Verdict(command=command)
    if command == "probe":
        v.probe = {"backend": "ring", "ranks": [{"rank": 0, "mlx": "0.32.4"}, {"rank": 1}]}
    text = prometheus.render(v.finish().to_dict())
    assert '=""' not in text.split("# HELP meshdoctor_verdict")[0], text
    (info,) = _families(text)["meshdoctor_info"].samples
    want = {"command": command, "version": info.labels["version"]}
    if command == "probe":
        want.update(mlx_version="0.32.4", backend="ring")
    assert info.labels == want


def test_every_family_parses_and_carries_the_run():
    text = prometheus.render(_doc())
    fams = _families(text)
    assert set(fams) == set(prometheus.FAMILIES)  # every family of the table, nothing else
    info = fams["meshdoctor_info"].samples[0]
    assert info.labels == {
        "command": "check",
        "version": "0.1.0",
        "mlx_version": "0.32.4",
        "backend": "ring",
    }
    assert info.value == 1
    got = {
        (s.labels["code"], s.labels["status"]): s.value
        for s in fams["meshdoctor_check_status"].samples
    }
    assert got[("MD113", "fail")] == 1 and got[("MD113", "warn")] == 0  # the worst result
    assert got[("MD302", "ok")] == 1
    verdict = {s.labels["verdict"]: s.value for s in fams["meshdoctor_verdict"].samples}
    assert verdict == {"go": 0, "no-go": 1, "unknown": 0}
    wired = fams["meshdoctor_wired_memory_bytes"].samples[0]
    assert wired.value == 7 << 30 and wired.labels["host"] == "m0"
    assert fams["meshdoctor_rdma_edges_active"].samples[0].value == 5
    assert fams["meshdoctor_rdma_edges_expected"].samples[0].value == 6
    named = fams["meshdoctor_rdma_devices_active"].samples[0]
    assert named.labels["host"] == "m0" and named.value == 2
    assert fams["meshdoctor_rdma_devices_expected"].samples[0].value == 3
    busbw = fams["meshdoctor_probe_busbw_bytes_per_second"].samples
    assert [(s.labels["op"], s.value) for s in busbw] == [("all_sum", 12.5e9)]  # bytes/s
    assert fams["meshdoctor_probe_wrong_values"].samples[0].value == 0
    assert fams["meshdoctor_last_run_timestamp_seconds"].samples[0].value > 1.7e9
    assert fams["meshdoctor_last_run_duration_seconds"].samples[0].value >= 0


def test_label_values_are_escaped_and_no_sample_has_a_timestamp():
    text = prometheus.render(_doc())
    fams = _families(text)
    reboot = {s.labels["host"]: s.value for s in fams["meshdoctor_needs_reboot"].samples}
    assert reboot == {'m"0\\x\n': 0, "m0": 1}  # the odd name survives the round trip
    assert 'host="m\\"0\\\\x\\n"' in text
    for fam in fams.values():
        assert fam.type == "gauge" and fam.documentation
        for s in fam.samples:
            assert s.timestamp is None
    for line in text.splitlines():  # no summary (free text) in any label
        assert "row remap" not in line


def test_a_verdict_with_no_results_still_says_when_it_ran():
    fams = _families(prometheus.render(Verdict(command="triage").finish().to_dict()))
    assert {
        "meshdoctor_info",
        "meshdoctor_verdict",
        "meshdoctor_last_run_timestamp_seconds",
    } <= set(fams)
    assert "meshdoctor_check_status" not in fams
