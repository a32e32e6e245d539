"""The figures judged (MD513, meshdoctor/probe/report/judgement.py): --min-busbw rates, the link
classes of meshdoctor/probe/expected.py, and baselines (meshdoctor/probe/baseline.py), on known
probe sections."""

from __future__ import annotations

import json

import pytest

from meshdoctor.hostfile.load import parse
from meshdoctor.probe import baseline as bl
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.expected import LINK_CLASSES, judge_class
from meshdoctor.probe.report.judgement import judgement_results
from meshdoctor.probe.sizes import SizeError, parse_rate
from tests.unit.hostfile.test_hostfile import mesh


def _probe(all_sum=2.0, pairs=None):
    p = {"ops": [{"op": "all_sum", "size_bytes": 64 << 20, "busbw_gbs": all_sum}]}
    if pairs:
        p["pairs"] = {"cells": [{"src": s, "dst": d, "busbw_gbs": b} for (s, d), b in pairs]}
    return p


def test_rates_are_bytes_or_bits_per_second_in_decimal_units():
    assert parse_rate("10GB/s") == 10.0 and parse_rate("800Mb/s") == 0.1
    assert parse_rate("25Gbps") == 3.125 and parse_rate("1.5 GB/s") == 1.5
    for bad in ("10GB", "fast", "0GB/s", "-1GB/s"):
        with pytest.raises(SizeError):
            parse_rate(bad)


def test_every_link_class_has_a_source_and_a_fraction():
    for c in LINK_CLASSES.values():
        assert c.source and c.what and 0 <= c.warn_below < 1
    assert LINK_CLASSES["tb5-rdma"].rate_gbs == 10.0  # 80 Gb/s
    assert LINK_CLASSES["pcie4-x16"].rate_gbs == pytest.approx(31.508, rel=1e-3)
    assert LINK_CLASSES["loopback"].rate_gbs is None
    # a Thunderbolt 5 link that fell back to 40 Gb/s (5 GB/s busbw at best) is below half
    assert judge_class(4.0, LINK_CLASSES["tb5-rdma"]) == (0.4, 10.0)
    assert judge_class(6.0, LINK_CLASSES["tb5-rdma"]) is None


def test_a_floor_fails_the_figures_below_it_and_names_them():
    cfg = ProbeConfig(hostfile=local_hostfile(4), cpus=8, min_busbw_gbs=3.0)
    (r,) = judgement_results(cfg, _probe(2.0, pairs=[((0, 1), 5.0), ((2, 3), 1.14)]))
    assert r.code == "MD513" and r.status == "fail" and r.check == "probe.min_busbw"
    assert r.summary.startswith("busbw below --min-busbw 3.000 GB/s: all_sum 64MiB at 2.000")
    assert "rank 2 -> 3 at 1.140 GB/s (38 %)" in r.summary and "0 -> 1" not in r.summary
    (ok,) = judgement_results(
        ProbeConfig(hostfile=local_hostfile(4), cpus=8, min_busbw_gbs=1.0), _probe(2.0)
    )
    assert ok.status == "ok" and "lowest: all_sum 64MiB at 2.000 GB/s" in ok.summary


def test_a_link_class_warns_below_its_fraction():
    cfg = ProbeConfig(hostfile=local_hostfile(2), cpus=8, link="tb5-rdma")
    (r,) = judgement_results(cfg, _probe(4.0))
    assert r.status == "warn" and r.check == "probe.link_class"
    assert "below 50 % of a Thunderbolt 5 cable, RDMA (JACCL), per cable (10.000 GB/s)" in r.summary
    assert "all_sum 64MiB at 4.000 GB/s (40 %)" in r.summary
    assert "Intel Thunderbolt 5" in r.evidence["source"]
    (ok,) = judgement_results(cfg, _probe(7.5))
    assert ok.status == "ok"
    cfg.link = "loopback"
    (skip,) = judgement_results(cfg, _probe(0.18))
    assert skip.status == "skip" and "no line rate" in skip.summary


def _jaccl_mesh(n=4):
    d = mesh(n)
    for i, h in enumerate(d["hosts"]):
        h["rdma"] = [None if j == i else f"rdma_en{j + 1}" for j in range(n)]
    return parse(json.dumps(d))


def test_a_baseline_names_the_pair_and_its_wire_that_fell(tmp_path):
    hf = _jaccl_mesh(4)
    cfg = ProbeConfig(hostfile=hf, backend="jaccl", size=64 << 20, cpus=8)
    healthy = _probe(8.0, pairs=[((2, 3), 10.0), ((0, 1), 10.0)])
    path = str(tmp_path / "base.json")
    assert bl.write(path, bl.snapshot(cfg, healthy)) is None
    base = bl.read(path)
    assert base["pairs"][0] == {
        "src": 2,
        "dst": 3,
        "size_bytes": 64 << 20,
        "wire": "rdma_en4",
        "busbw_gbs": 10.0,
    }
    cfg.baseline = base
    now = _probe(7.9, pairs=[((2, 3), 3.8), ((0, 1), 9.9)])
    (r,) = judgement_results(cfg, now)
    assert r.status == "warn" and r.check == "probe.baseline"
    assert r.summary == "rank 2 -> 3 at 38 % of its baseline (wire rdma_en4)"
    assert [c["what"] for c in now["baseline"]["compared"]] == [
        "all_sum 64MiB",
        "rank 2 -> 3",
        "rank 0 -> 1",
    ]
    (ok,) = judgement_results(cfg, _probe(8.0, pairs=[((2, 3), 9.0)]))
    assert ok.status == "ok" and "at or above 80 % of their baseline" in ok.summary


def test_a_baseline_of_another_mesh_is_not_compared(tmp_path):
    base = bl.snapshot(ProbeConfig(hostfile=local_hostfile(2), cpus=8), _probe(1.0))
    cfg = ProbeConfig(hostfile=local_hostfile(3), cpus=8, baseline=base)
    (r,) = judgement_results(cfg, _probe(0.1))
    assert r.status == "warn" and "world_size is 2, this run's 3" in r.summary


def test_a_file_that_is_not_a_baseline_is_refused(tmp_path):
    for text in ("not json", json.dumps({"format": 99}), json.dumps([1])):
        p = tmp_path / "x.json"
        p.write_text(text)
        with pytest.raises(bl.BaselineError):
            bl.read(str(p))
    with pytest.raises(bl.BaselineError, match="cannot read"):
        bl.read(str(tmp_path / "missing.json"))


def test_the_remedy_speaks_of_the_mesh_probed_loopback_nics_or_thunderbolt():
    # a loopback probe on Linux: no cable, no darwin-only check to run
    cfg = ProbeConfig(hostfile=local_hostfile(2), cpus=8, min_busbw_gbs=3.0)
    (r,) = judgement_results(cfg, _probe(2.0))
    text = r.remediation.text
    assert "Every rank ran on this machine" in text, text
    assert "Thunderbolt" not in text and "MD205" not in text
    ring = parse(json.dumps(mesh(3, "ring")), names={"elsewhere"})
    (r,) = judgement_results(
        ProbeConfig(hostfile=ring, backend="ring", cpus=8, min_busbw_gbs=3.0), _probe(2.0)
    )
    assert "NIC's port speed" in r.remediation.text and "Thunderbolt" not in r.remediation.text
    jaccl = parse(json.dumps(mesh(3, "jaccl")), names={"elsewhere"})
    (r,) = judgement_results(
        ProbeConfig(hostfile=jaccl, backend="jaccl", cpus=8, min_busbw_gbs=3.0), _probe(2.0)
    )
    assert "Thunderbolt 5 cable" in r.remediation.text and "MD205" in r.remediation.text
