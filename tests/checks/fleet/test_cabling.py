"""MD405 (fleet.cabling) on merged facts: the two cells of an edge listing different numbers of
cables (the JACCL mesh opens one wire per cable from MLX 0.32.4, MLX PR #4607)."""

from __future__ import annotations

from tests.checks.fleet.test_fleet_checks import _facts, _run, _view


def test_a_mesh_edge_with_two_cables_one_way_and_one_back_warns_unknown():
    got = _run(_view(_facts(0), _facts(1), "jaccl", device01=["rdma_en2", "rdma_en3"]))
    f = got["MD405"]
    assert f.status == "warn"
    assert f.summary.startswith(
        "m0 lists 2 cable(s) to m1 (rdma_en2, rdma_en3) but m1 lists 1 back (rdma_en2): "
        "how MLX treats"
    )
    assert "is unknown" in f.summary and "MLX PR #4607" in f.summary
    assert f.evidence["hosts"] == ["m0", "m1"]


def test_the_same_cable_count_on_both_ends_of_a_ring_edge_is_ok():
    got = _run(_view(_facts(0), _facts(1), "jaccl-ring"))
    assert "MD405" not in got
