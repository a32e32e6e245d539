"""The healthy sub-mesh from results and from a pairs matrix, and the hostfile it leaves."""

from __future__ import annotations

import json
import os

from meshdoctor.hostfile.load import parse
from meshdoctor.model import Result
from meshdoctor.submesh import select, write


def jaccl(n: int = 4) -> "object":
    rows = []
    for i in range(n):
        rows.append([None if j == i else f"rdma_en{j + 1}" for j in range(n)])
    rows[0][1], rows[1][0] = ["rdma_en2", "rdma_en6"], ["rdma_en1", "rdma_en6"]
    doc = {
        "backend": "jaccl",
        "envs": ["MLX_METAL_FAST_SYNCH=1"],
        "hosts": [{"ssh": f"m{i}", "ips": [f"10.0.0.{i + 1}"], "rdma": rows[i]} for i in range(n)],
    }
    return parse(json.dumps(doc))


def res(code, status, host, **evidence):
    return Result(
        code=code,
        check="x",
        status=status,
        summary=f"{code} on {host}",
        host=host,
        evidence=evidence,
    )


def test_a_failing_host_leaves_the_others_renumbered_with_the_matrix_cut():
    hf = jaccl()
    split = select.from_results(hf, [res("MD302", "fail", "m2"), res("MD301", "warn", "m1")])
    assert split.passing == ["m0", "m1", "m3"] and list(split.failing) == ["m2"]
    doc = json.loads(select.restrict(hf, split).to_launch_json())
    assert [h["ssh"] for h in doc["hosts"]] == ["m0", "m1", "m3"]
    assert doc["backend"] == "jaccl" and doc["envs"] == ["MLX_METAL_FAST_SYNCH=1"]
    assert doc["hosts"][0]["rdma"] == [None, ["rdma_en2", "rdma_en6"], "rdma_en4"]
    assert doc["hosts"][2]["rdma"] == ["rdma_en1", "rdma_en2", None]


def test_strict_counts_warnings():
    split = select.from_results(jaccl(), [res("MD301", "warn", "m1")], strict=True)
    assert split.passing == ["m0", "m2", "m3"]


def test_a_device_down_cuts_its_cable_not_the_host():
    hf = jaccl()
    split = select.from_results(hf, [res("MD202", "fail", "m1", device="rdma_en6")])
    assert split.passing == ["m0", "m1", "m2", "m3"] and not split.failing
    doc = json.loads(select.restrict(hf, split).to_launch_json())
    assert doc["hosts"][0]["rdma"][1] == ["rdma_en2"] and doc["hosts"][1]["rdma"][0] == ["rdma_en1"]


def test_the_only_cable_of_a_pair_down_drops_one_host_of_the_pair():
    hf = jaccl()
    bad = [{"host": "m3", "device": "rdma_en3", "state": "PORT_DOWN"}]
    split = select.from_results(hf, [res("MD404", "fail", "mesh", hosts=["m2", "m3"], bad=bad)])
    assert split.passing == ["m0", "m1", "m2"]
    assert "no working cable to m2" in split.failing["m3"][0]


def test_a_finding_about_the_whole_mesh_blocks_and_nothing_is_written(tmp_path):
    hf = jaccl()
    split = select.from_results(hf, [res("MD401", "fail", "mesh")])
    out = tmp_path / "ok.json"
    r = write.report(hf, split, str(out))
    assert r.status == "warn" and "no healthy hostfile written" in r.summary
    assert not out.exists()


def test_pairs_matrix_drops_the_host_of_the_failing_pairs():
    hf = jaccl()
    pf = {
        "cells": [{"src": 0, "dst": 2, "wrong": 3}, {"src": 1, "dst": 2, "wrong": 0}],
        "missing": [[3, 2]],
    }
    split = select.from_pairs(hf, pf)
    assert split.passing == ["m0", "m1", "m3"]
    assert "send/recv failed with" in split.failing["m2"][0]


def test_fewer_than_two_pass_writes_nothing_and_says_so(tmp_path):
    hf = jaccl(3)
    split = select.from_results(hf, [res("MD302", "fail", "m0"), res("MD302", "fail", "m1")])
    out = tmp_path / "ok.json"
    r = write.report(hf, split, str(out))
    assert (
        "fewer than two ranks pass (1 rank(s) on 1 of 3 host(s))" in r.summary and not out.exists()
    )
    assert r.evidence["passing"] == ["m2"] and set(r.evidence["failing"]) == {"m0", "m1"}


def test_written_atomically_over_an_old_file(tmp_path):
    hf = jaccl()
    out = tmp_path / "ok.json"
    out.write_text("old")
    r = write.report(hf, select.from_results(hf, [res("MD302", "fail", "m3")]), str(out))
    assert r.evidence["written"] == str(out)
    assert [h["ssh"] for h in json.loads(out.read_text())["hosts"]] == ["m0", "m1", "m2"]
    assert os.listdir(tmp_path) == ["ok.json"]
    assert "3 of 4 hosts pass" in r.summary and "failing: m3" in r.summary


def test_a_fifo_target_is_written_through_never_replaced(tmp_path):
    import stat
    import threading

    hf = jaccl()
    split = select.from_results(hf, [res("MD302", "fail", "m2")])
    fifo = tmp_path / "ok.json"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    t.start()
    r = write.report(hf, split, str(fifo))
    t.join(30)
    assert r.status == "warn" and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [h["ssh"] for h in json.loads(got[0])["hosts"]] == ["m0", "m1", "m3"]
    assert os.listdir(tmp_path) == ["ok.json"]


def test_ranks_count_not_hosts_one_host_with_three_ring_ranks_is_a_mesh(tmp_path):
    # the README's three ranks on 127.0.0.1: one host, three ranks, all passing
    local = {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}
    hf = parse(json.dumps({"backend": "ring", "hosts": [local] * 3}))
    out = tmp_path / "ok.json"
    r = write.report(hf, select.from_results(hf, []), str(out))
    assert r.status == "ok" and r.evidence["written"] == str(out), r.summary
    assert len(json.loads(out.read_text())["hosts"]) == 3
    # one rank that passes: no sub-mesh to write, and nothing to repair
    one = parse(json.dumps({"backend": "nccl", "hosts": [local]}))
    r = write.report(one, select.from_results(one, []), str(out) + ".1")
    assert "fewer than two ranks pass (1 rank(s) on 1 of 1 host(s))" in r.summary
    assert "Nothing failed" in r.remediation.text and "Repair" not in r.remediation.text
