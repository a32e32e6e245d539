"""MD204 from MLX's resource model, through the real CLI on fake Macs: the installed MLX version
(a stand-in interpreter answers the inspection), the backend, the world size and the cables per
cell decide the queue pairs and memory regions per device; the measured limits and their public
sources are in the evidence."""

from __future__ import annotations

import json

from meshdoctor.checks.rdma_capacity import plan, resource_model
from meshdoctor.hostfile import parse as parse_hostfile
from tests import fakemlx
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


def test_mapped_gid_at_index_2_fails_when_the_hostfile_uses_it_and_mlx_lacks_the_fix(
    fake_mac, tmp_path
):
    # rank 0 reaches rank 1 over rdma_en2, whose IPv4-mapped GID sits at GID[2]
    doc = hostfile(
        [
            [None, "rdma_en2", "rdma_en3"],
            ["rdma_en2", None, "rdma_en3"],
            ["rdma_en2", "rdma_en3", None],
        ],
        "jaccl",
    )
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    env = fake_mac("healthy", "mapped-gid-2")
    env.update(fakemlx.install(tmp_path / "old", "0.32.0", guard=False))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 1 and r.doc["verdict"] == "no-go", r.out
    (f,) = [x for x in r.results("MD203") if x["status"] == "fail"]
    assert f["summary"].startswith(
        "rdma_en2 port 1: IPv4-mapped GID ::ffff:169.254.37.21 is at "
        "GID[2], but JACCL sends from GID[1]"
    )
    assert "MLX PR #3389" in f["summary"] and "will fail at RTR (errno 22)" in f["summary"]
    assert f["evidence"]["certain"] is True and f["evidence"]["mlx_version"] == "0.32.0"
    # a build with the fix: go
    env.update(fakemlx.install(tmp_path / "guard", "0.32.1", guard=True))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD203") == "ok", r.out
    # the build could not be inspected: may fail, so a warning
    env.update(fakemlx.install(tmp_path / "unknown", "0.32.0", guard=None))
    r = run_cli(
        "check", "--json", "--local-only", "--only", "MD203", "--hostfile", str(hf), env=env
    )
    assert r.rc == 0 and r.status("MD203") == "warn", r.out
    # no hostfile: nothing says this device will be used; a warning
    env.update(fakemlx.install(tmp_path / "old2", "0.32.0", guard=False))
    r = run_cli("check", "--json", "--only", "MD203", env=env)
    assert r.rc == 0 and r.status("MD203") == "warn", r.out


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
