"""MD204 from MLX's resource model, through the real CLI on fake Macs: the installed MLX version
(a stand-in interpreter answers the inspection), the backend, the world size and the cables per
cell decide the queue pairs and memory regions per device; the measured limits and their public
sources are in the evidence."""

from __future__ import annotations

import json

from meshdoctor.checks.rdma_capacity import APPLE_MAX_MR, limits, plan, resource_model
from meshdoctor.hostfile.load import parse as parse_hostfile
from meshdoctor.parsers.ibv import Device
from tests import fakemlx
from tests.checks.test_rdma_checks import mesh
from tests.helpers import run_cli, write


def hostfile(rows, backend):
    n = len(rows)
    return {
        "backend": backend,
        "hosts": [
            {
                "ssh": "localhost" if i == 0 else f"m{i + 1}",
                "ips": ["127.0.0.1" if i == 0 else f"198.51.100.{10 + i}"],
                "rdma": rows[i],
            }
            for i in range(n)
        ],
    }


def md204(fake_mac, tmp_path, doc, version=None):
    env = fake_mac("healthy")
    if version:
        env.update(fakemlx.install(tmp_path / "mlx", version))
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD204", "--hostfile", str(hf), env=env
    )
    return r, r.results("MD204")


def test_two_macs_jaccl_ring_with_two_cables_is_go(fake_mac, tmp_path):
    # cells list the same two cables in the same order on both ends
    doc = hostfile(
        [[None, ["rdma_en2", "rdma_en3"]], [["rdma_en2", "rdma_en3"], None]], "jaccl-ring"
    )
    r, (f,) = md204(fake_mac, tmp_path, doc, "0.32.1")
    assert r.rc == 0 and f["status"] == "ok", r.out
    rows = {d["device"]: (d["qps"], d["mrs"]) for d in f["evidence"]["devices"]}
    assert rows == {"rdma_en2": (2, 64), "rdma_en3": (2, 64)}  # each opened twice with N = 2
    assert "128 MRs per rank" in f["summary"] and "rdma_en2 2/10 QPs 64/100 MRs" in f["summary"]
    assert "each device is opened twice" in f["evidence"]["model"]["source"]


def test_eight_macs_mesh_with_two_devices_per_cell_uses_one_per_peer(fake_mac, tmp_path):
    devs = [[f"rdma_en{k}", f"rdma_en{k + 10}"] for k in range(1, 8)]
    rows = []
    for i in range(8):
        row, k = [], 0
        for j in range(8):
            row.append(None if i == j else devs[k])
            k += i != j
        rows.append(row)
    r, (f,) = md204(fake_mac, tmp_path, hostfile(rows, "jaccl"), "0.32.1")
    assert r.rc == 0 and f["status"] == "ok", r.out
    ev = f["evidence"]
    assert (ev["total_qps"], ev["total_mrs"]) == (7, 448)
    assert {d["device"] for d in ev["devices"]} == {f"rdma_en{k}" for k in range(1, 8)}
    assert all(
        (d["qps"], d["mrs"], d["binding_limit"]) == (1, 64, "memory regions") for d in ev["devices"]
    )
    assert "7 QPs and 448 MRs per rank over 7 device(s)" in f["summary"]
    assert f["summary"].endswith(
        "the limit that binds per device: memory regions on "
        + ", ".join(f"rdma_en{k}" for k in range(1, 8))
    )
    assert any(
        "the mesh uses one device per peer (rdma_en1); rdma_en11 unused" in n for n in ev["notes"]
    )
    assert "MLX PR #4209" in ev["limit_sources"]["max_qp"]
    assert "MLX issue #3162" in ev["limit_sources"]["max_mr"]
    assert ev["shared_between_processes"].startswith("unknown")


def test_mlx_0_31_two_rank_mesh_warns_near_the_memory_region_ceiling(fake_mac, tmp_path):
    doc = hostfile([[None, "rdma_en2"], ["rdma_en2", None]], "jaccl")
    r, (f,) = md204(fake_mac, tmp_path, doc, "0.31.1")
    assert r.rc == 0 and f["status"] == "warn", r.out
    assert f["summary"].startswith(
        "rdma_en2 needs 96 memory regions (jaccl, 2 ranks, MLX 0.31.1, towards ranks 1)"
    )
    assert "about 100" in f["summary"]
    assert "MLX issue #3162" in f["remediation"]["text"]
    assert "0.32.1" in f["remediation"]["text"]
    # the same mesh with MLX 0.32.1: 64 per device, go without a warning
    r, (f,) = md204(fake_mac, tmp_path, doc, "0.32.1")
    assert f["status"] == "ok" and "rdma_en2 1/10 QPs 64/100 MRs" in f["summary"]


def test_peers_sharing_one_device_fail_on_the_binding_limit_with_its_source(fake_mac, tmp_path):
    rows = [[None if j == i else "rdma_en2" for j in range(4)] for i in range(4)]
    r, fs = md204(fake_mac, tmp_path, hostfile(rows, "jaccl"), "0.32.1")
    assert r.rc == 1
    (f,) = fs
    assert f["summary"].startswith(
        "rdma_en2 needs 192 memory regions (jaccl, 4 ranks, "
        "MLX 0.32.1, towards ranks 1, 2, 3) but allows 100"
    )
    assert "MLX issue #3162" in f["evidence"]["limit_source"]
    # eleven peers on one device in a ring of cables: queue pairs bind (errno 16)
    ring = [[None, ["rdma_en2"] * 3, ["rdma_en2"] * 3]] + [[["rdma_en2"]] * 3] * 2
    use, _ = plan(parse_hostfile(json.dumps(hostfile(ring, "jaccl-ring"))), [0])
    assert use["rdma_en2"]["qps"] == 6  # 3 cables x 2 directions, one device


def test_resource_model_by_version():
    assert resource_model("jaccl", 4, (0, 30, 3))["mrs"] == 4
    assert resource_model("jaccl", 4, (0, 30, 6))["mrs"] == 32
    m = resource_model("jaccl", 4, (0, 32, 0))
    assert (m["mrs"], m["mrs_neighbour"]) == (32, 64)
    assert resource_model("jaccl", 2, (0, 31, 2))["mrs_neighbour"] == 96
    assert resource_model("jaccl", 2, (0, 32, 1))["mrs_neighbour"] == 64
    assert (
        resource_model("jaccl-ring", 3, (0, 32, 1))["qps"],
        resource_model("jaccl-ring", 3, (0, 32, 1))["mrs"],
    ) == (1, 32)
    assert resource_model("jaccl-ring", 2, (0, 32, 1))["qps"] == 2


def test_version_facts_that_decide_the_launch(fake_mac, tmp_path):
    ring = hostfile([[None, "rdma_en2"], ["rdma_en2", None]], "jaccl-ring")
    r, fs = md204(fake_mac, tmp_path, ring, "0.30.5")
    assert r.rc == 1
    assert any(
        f["status"] == "fail"
        and "has no jaccl-ring backend (it first shipped in MLX 0.30.6)" in f["summary"]
        for f in fs
    )
    listed = hostfile([[None, ["rdma_en2", "rdma_en3"]], [["rdma_en2", "rdma_en3"], None]], "jaccl")
    r, fs = md204(fake_mac, tmp_path, listed, "0.31.1")
    assert any(
        f["status"] == "warn" and "does not take the first device of a cell" in f["summary"]
        for f in fs
    )


def test_two_local_ranks_on_one_device_say_sharing_is_unknown(fake_mac, tmp_path):
    # ranks 0 and 1 both run here ("localhost"), both reach rank 2 over rdma_en4
    doc = hostfile(
        [
            [None, "rdma_en2", "rdma_en4"],
            ["rdma_en3", None, "rdma_en4"],
            ["rdma_en2", "rdma_en3", None],
        ],
        "jaccl",
    )
    doc["hosts"][1]["ssh"] = "localhost"
    doc["hosts"][1]["ips"] = ["127.0.0.1"]
    r, fs = md204(fake_mac, tmp_path, doc, "0.30.6")  # 32 MRs per peer: 64 on rdma_en4
    (w,) = [f for f in fs if f["status"] == "warn"]
    assert w["summary"].startswith(
        "rdma_en4 is opened by ranks 0, 1 on this node: their needs "
        "are added up, but unknown: whether two processes"
    )
    (row,) = [d for d in w["evidence"]["devices"] if d["device"] == "rdma_en4"]
    assert (row["qps"], row["mrs"], row["local_ranks"]) == (2, 64, [0, 1])


def test_capacity_with_the_mesh_hostfile(fake_mac, tmp_path):
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check",
        "--json",
        "--only",
        "MD204",
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac("healthy"),
    )
    (f,) = r.results("MD204")
    assert f["status"] == "ok"
    assert f["summary"].startswith("jaccl, 4 ranks, MLX ")
    assert f["summary"].endswith(
        ": 3 QPs and 192 MRs per rank over 3 device(s): rdma_en2 "
        "1/10 QPs 64/100 MRs, rdma_en3 1/10 QPs 64/100 MRs, rdma_en4 "
        "1/10 QPs 64/100 MRs; the limit that binds per device: memory "
        "regions on rdma_en2, rdma_en3, rdma_en4"
    )
    dev = f["evidence"]["devices"][0]
    assert dev["max_qp_source"].startswith(
        "Apple's measured limit 10 on Thunderbolt (reported 256): "
    )


def test_capacity_fails_when_peers_share_a_device_and_past_8_ranks(fake_mac, tmp_path):
    shared = mesh()
    shared["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en2", "rdma_en2"]
    hf = write(tmp_path / "shared.json", json.dumps(shared))
    r = run_cli(
        "check",
        "--json",
        "--only",
        "MD204",
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac("healthy"),
    )
    (f,) = r.results("MD204")
    assert f["status"] == "fail" and "rdma_en2 needs 192 memory regions" in f["summary"]
    assert "allows 100" in f["summary"]
    rows = [[None if j == i else "rdma_en2" for j in range(9)] for i in range(9)]
    hf9 = write(tmp_path / "nine.json", json.dumps(mesh(rows, n=9)))
    r = run_cli(
        "check",
        "--json",
        "--only",
        "MD204",
        "--local-only",
        "--hostfile",
        str(hf9),
        env=fake_mac("healthy"),
    )
    assert any(
        x["summary"] == "9 ranks: a JACCL mesh supports at most 8" for x in r.results("MD204")
    )


def test_plan_mesh_ring_and_limits():
    hf = parse_hostfile(json.dumps(mesh()))
    use, notes = plan(hf, [0])
    assert {d: (u["qps"], u["mrs"], u["peers"]) for d, u in use.items()} == {
        "rdma_en2": (1, 64, [1]),
        "rdma_en3": (1, 64, [2]),
        "rdma_en4": (1, 64, [3]),
    }
    two = mesh()
    two["hosts"][0]["rdma"][1] = ["rdma_en2", "rdma_en5"]
    use, notes = plan(parse_hostfile(json.dumps(two)), [0])
    assert "rdma_en5" not in use and "rdma_en5 unused" in notes[0]
    ring = mesh(backend="jaccl-ring")
    ring["hosts"][0]["rdma"] = [
        None,
        ["rdma_en2", "rdma_en5"],
        None,
        ["rdma_en4", "rdma_en6", "rdma_en7", "rdma_en3", "rdma_en8"],
    ]
    use, notes = plan(parse_hostfile(json.dumps(ring)), [0])
    assert sorted(use) == ["rdma_en2", "rdma_en3", "rdma_en4", "rdma_en5", "rdma_en6", "rdma_en7"]
    assert "rdma_en8 unused" in notes[0]
    # Apple: min(reported, measured); elsewhere the reported value.
    tb = Device("rdma_en2", transport="Thunderbolt", limits={"max_qp": 256, "max_mr": 50})
    lim = limits(tb, is_mac=True)
    assert (lim["max_qp"], lim["max_mr"]) == (10, 50)
    assert limits(None, is_mac=True)["max_mr"] == APPLE_MAX_MR
    nic = Device("mlx5_0", transport="InfiniBand", limits={"max_qp": 2})
    assert limits(nic, is_mac=False)["max_qp"] == 2
    assert limits(Device("x"), is_mac=False)["max_qp"] is None


def _mesh_rows(cells):
    """Rows of an 8-rank mesh whose cell towards each peer is ``cells[k]`` (k-th peer)."""
    rows = []
    for i in range(8):
        row, k = [], 0
        for j in range(8):
            row.append(None if i == j else cells[k])
            k += i != j
        rows.append(row)
    return rows


def test_mlx_0_32_4_mesh_uses_every_cable_of_a_cell(fake_mac, tmp_path):
    # MLX PR #4607 (0.32.4): one MeshImpl per wire, so both cables of each cell are opened
    rows = _mesh_rows([[f"rdma_en{k}", f"rdma_en{k + 10}"] for k in range(1, 8)])
    r, (f,) = md204(fake_mac, tmp_path, hostfile(rows, "jaccl"), "0.32.4")
    assert r.rc == 0 and f["status"] == "ok", r.out
    ev = f["evidence"]
    assert (ev["total_qps"], ev["total_mrs"]) == (14, 896)
    assert {d["device"] for d in ev["devices"]} == {
        f"rdma_en{k}" for k in list(range(1, 8)) + list(range(11, 18))
    }
    assert "14 QPs and 896 MRs per rank over 14 device(s)" in f["summary"]
    assert not any("unused" in n for n in ev["notes"])


def test_mlx_0_32_4_mesh_with_unequal_cells_says_unknown(fake_mac, tmp_path):
    cells = [["rdma_en1", "rdma_en11"]] + [f"rdma_en{k}" for k in range(2, 8)]
    r, (f,) = md204(fake_mac, tmp_path, hostfile(_mesh_rows(cells), "jaccl"), "0.32.4")
    assert r.rc == 0 and f["status"] == "ok", r.out
    ev = f["evidence"]
    assert ev["total_qps"] == 8
    assert any(
        "1/2 cables" in n and n.split(": ", 2)[-1].startswith("unknown") for n in ev["notes"]
    )
