"""MD201-MD205 through the real CLI on fake Macs: each fixture set gives the verdict and codes an
operator would expect, with evidence naming device, port and GID index; a hung ibv_devinfo is a
critical finding within the deadline; on Linux without RDMA the checks skip cleanly."""

from __future__ import annotations

import json
import os

import pytest

from meshdoctor.checks.rdma_capacity import APPLE_MAX_MR, limits, plan
from meshdoctor.hostfile import parse as parse_hostfile
from meshdoctor.parsers.ibv import Device
from tests.helpers import run_cli, write

RDMA = ("--only", "MD201,MD202,MD203,MD204,MD205")
CODES = ("MD201", "MD202", "MD203", "MD204", "MD205")
PEER_IPS = ["127.0.0.1", "198.51.100.12", "198.51.100.13", "198.51.100.14"]


def mesh(rows=None, backend="jaccl", n=4):
    """A hostfile whose rank 0 is this machine (ssh ``localhost``)."""
    rows = rows or [
        [None, "rdma_en2", "rdma_en3", "rdma_en4"],
        ["rdma_en2", None, "rdma_en3", "rdma_en4"],
        ["rdma_en2", "rdma_en3", None, "rdma_en4"],
        ["rdma_en2", "rdma_en3", "rdma_en4", None],
    ]
    hosts = [
        {
            "ssh": "localhost" if i == 0 else f"m{i + 1}",
            "ips": [PEER_IPS[i] if i < 4 else f"198.51.100.{20 + i}"],
            "rdma": rows[i],
        }
        for i in range(n)
    ]
    return {"backend": backend, "hosts": hosts}


def statuses(r):
    return {c: r.status(c) for c in CODES}


# (fixture sets on top of healthy, hostfile or None, exit code, expected worst status per code)
CASES = [
    ("healthy", None, 0, dict(MD201="ok", MD202="ok", MD203="ok", MD204="skip", MD205="ok")),
    (
        "rdma-disabled",
        None,
        0,
        dict(MD201="warn", MD202="skip", MD203="skip", MD204="skip", MD205="ok"),
    ),
    (
        "enabled-no-devices",
        None,
        0,
        dict(MD201="warn", MD202="skip", MD203="skip", MD204="skip", MD205="warn"),
    ),
    (
        "one-port-down",
        None,
        0,
        dict(MD201="ok", MD202="warn", MD203="ok", MD204="skip", MD205="ok"),
    ),
    ("fe80-only", None, 1, dict(MD201="ok", MD202="ok", MD203="fail", MD205="fail")),
    ("mapped-gid-2", None, 0, dict(MD201="ok", MD202="ok", MD203="warn", MD205="ok")),
    ("tb4-link", None, 0, dict(MD201="ok", MD202="ok", MD203="ok", MD205="warn")),
    ("bridge0-active", None, 1, dict(MD201="ok", MD202="ok", MD203="ok", MD205="fail")),
    ("truncated", None, 3, dict(MD201="ok", MD202="warn", MD203="ok", MD205="error")),
    (
        "garbage",
        None,
        3,
        dict(MD201="error", MD202="error", MD203="error", MD204="error", MD205="error"),
    ),
    ("healthy", "mesh", 0, dict(MD201="ok", MD202="ok", MD203="ok", MD204="ok", MD205="ok")),
    (
        "rdma-disabled",
        "mesh",
        1,
        dict(MD201="fail", MD202="fail", MD203="fail", MD204="fail", MD205="ok"),
    ),
    ("one-port-down", "mesh", 1, dict(MD202="fail", MD203="ok", MD204="ok")),
    ("truncated", "mesh", 3, dict(MD202="error", MD205="error")),
    # every check chosen skipped: nothing was assessed, so not go (exit 3)
    (
        "healthy",
        "ring",
        3,
        dict(MD201="skip", MD202="skip", MD203="skip", MD204="skip", MD205="skip"),
    ),
]


@pytest.mark.parametrize(
    "fixture_set, hostfile, rc, expect",
    CASES,
    ids=[f"{c[0]}-{c[1] or 'nohostfile'}" for c in CASES],
)
def test_fixture_sets_give_the_expected_verdict(
    fake_mac, tmp_path, fixture_set, hostfile, rc, expect
):
    env = fake_mac("healthy", fixture_set)
    args = list(RDMA)
    if hostfile:
        doc = mesh(backend="ring" if hostfile == "ring" else "jaccl")
        args += ["--local-only", "--hostfile", str(write(tmp_path / "hosts.json", json.dumps(doc)))]
    r = run_cli("check", "--json", *args, env=env)
    got = statuses(r)
    assert r.rc == rc, (got, r.out)
    assert {c: got[c] for c in expect} == expect, r.out
    assert r.doc["needs_reboot"] == []


def test_healthy_evidence_names_devices_ports_and_gid_indexes(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy"))
    gid = r.results("MD203")[0]
    assert gid["evidence"]["reader"] == "ibv_devinfo"
    assert gid["evidence"]["ports"] == [
        {"device": "rdma_en2", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.37.21"},
        {"device": "rdma_en3", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.140.7"},
        {"device": "rdma_en4", "port": 1, "gid_index": 1, "gid": "::ffff:169.254.201.88"},
    ]
    assert gid["evidence"]["tables"]["rdma_en2/1"][1] == {
        "index": 1,
        "gid": "::ffff:169.254.37.21",
        "ipv4": "169.254.37.21",
    }
    ports = r.results("MD202")[0]
    assert "rdma_en2 port 1, rdma_en3 port 1, rdma_en4 port 1" in ports["summary"]
    links = r.results("MD205")[0]["evidence"]["links"]
    assert [
        (ln["hardware_port"], ln["interface"], ln["rdma_device"], ln["speed_gbps"]) for ln in links
    ] == [
        ("Thunderbolt 1", "en2", "rdma_en2", 80.0),
        ("Thunderbolt 2", "en3", "rdma_en3", 80.0),
        ("Thunderbolt 3", "en4", "rdma_en4", 80.0),
    ]


def test_fe80_only_gid_fails_with_the_table_and_the_remedy(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy", "fe80-only"))
    (f,) = r.results("MD203")
    assert f["status"] == "fail" and f["severity"] == "critical"
    assert f["summary"].startswith("rdma_en3 port 1 has no IPv4-mapped GID (GID[0] fe80::")
    assert "errno 22" in f["summary"]
    ev = f["evidence"]
    assert (ev["device"], ev["port"]) == ("rdma_en3", 1)
    assert ev["gids"] == [{"index": 0, "gid": "fe80::33a1:c2ff:fe03:1a03"}]
    assert "en3" in f["remediation"]["text"] and "--auto-setup" in f["remediation"]["text"]
    (tb,) = r.results("MD205")
    assert "Thunderbolt 2 (en3, rdma_en3) has no IPv4 address" in tb["summary"]


def test_mapped_gid_at_index_2_warns_naming_the_index(fake_mac):
    r = run_cli("check", "--json", *RDMA, env=fake_mac("healthy", "mapped-gid-2"))
    (w,) = [x for x in r.results("MD203") if x["status"] == "warn"]
    assert "rdma_en2 port 1" in w["summary"] and "GID[2]" in w["summary"]
    assert "GID[1]" in w["summary"]
    ev = w["evidence"]
    assert ev["mapped_gid_index"] == 2 and ev["device"] == "rdma_en2" and ev["port"] == 1
    assert [g["index"] for g in ev["gids"]] == [0, 1, 2]
    assert "jaccl_guard" in ev  # the MLX build fact was consulted (None = unknown here)


def test_hung_ibv_devinfo_is_critical_within_the_deadline(fake_mac):
    r = run_cli(
        "check", "--json", *RDMA, "--timeout", "2", env=fake_mac("healthy", "ibv_devinfo-hang")
    )
    assert r.rc == 1, r.out
    assert r.elapsed < 2 + 1 + 1.5, r.elapsed  # the deadline + 1 s, + interpreter start-up
    for code in ("MD201", "MD202", "MD203", "MD204"):
        (f,) = r.results(code)
        assert f["status"] == "fail" and f["severity"] == "critical", f
        assert f["needs_reboot"] is True
        assert "RDMA stack wedged (known to follow JACCL errors)" in f["summary"]
        assert "reboot" in f["remediation"]["text"].lower()
    assert r.doc["needs_reboot"] == [r.results("MD201")[0]["host"]]


def test_named_device_that_does_not_exist_lists_the_ones_that_do(fake_mac, tmp_path):
    doc = mesh()
    doc["hosts"][0]["rdma"] = [None, "rdma_en2", "rdma_en9", "rdma_en4"]
    hf = write(tmp_path / "hosts.json", json.dumps(doc))
    r = run_cli(
        "check", "--json", *RDMA, "--local-only", "--hostfile", str(hf), env=fake_mac("healthy")
    )
    assert r.rc == 1
    (f,) = r.results("MD202")
    assert f["summary"].startswith("rdma_en9 (towards rank 2 (m3)) does not exist on this node")
    assert f["evidence"]["existing"] == [f"rdma_en{i}" for i in range(2, 8)]
    assert "regenerate the hostfile" in f["remediation"]["text"].lower()


def test_named_port_down_fails_naming_device_port_and_peer(fake_mac, tmp_path):
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli(
        "check",
        "--json",
        *RDMA,
        "--local-only",
        "--hostfile",
        str(hf),
        env=fake_mac("healthy", "one-port-down"),
    )
    (f,) = r.results("MD202")
    assert f["summary"] == "rdma_en4 (towards rank 3 (m4)) is not active: port 1 PORT_DOWN"
    assert f["evidence"]["ports"] == [
        {"device": "rdma_en4", "port": 1, "state": "PORT_DOWN", "state_code": 1}
    ]


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


def test_linux_without_rdma_skips_cleanly_and_fails_only_when_the_hostfile_needs_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_PLATFORM"] = "linux"
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if not os.path.exists(os.path.join(p, "ibv_devinfo"))
    )
    r = run_cli("check", "--json", *RDMA, env=env)
    assert r.rc == 3, r.out  # every check chosen skipped: nothing applied here, never go
    got = statuses(r)
    assert got == dict(MD201="skip", MD202="skip", MD203="skip", MD204="skip", MD205="skip")
    assert all(x["severity"] == "info" for x in r.doc["results"])
    hf = write(tmp_path / "hosts.json", json.dumps(mesh()))
    r = run_cli("check", "--json", *RDMA, "--local-only", "--hostfile", str(hf), env=env)
    assert r.rc == 1 and r.status("MD202") == "fail"
    assert "needs RDMA (rdma_en2, rdma_en3, rdma_en4)" in r.results("MD202")[0]["summary"]


@pytest.mark.parametrize(
    "code, words",
    [
        ("MD201", "rdma_ctl enable"),
        ("MD202", "PORT_ACTIVE"),
        ("MD203", "IPv4-mapped"),
        ("MD204", "10 QPs"),
        ("MD205", "bridge0"),
    ],
)
def test_explain(code, words):
    r = run_cli("explain", code)
    assert r.rc == 0 and words in r.out and "What to do" in r.out


def test_unreadable_details_with_a_device_list_warn_without_guessing(fake_mac):
    env = fake_mac("healthy", extra={"ibv_devinfo__v.txt": "??\n"})
    r = run_cli("check", "--json", "--only", "MD202,MD203", env=env)
    assert r.rc == 0
    (w,) = r.results("MD202")
    assert w["status"] == "warn" and w["summary"].startswith("port state of rdma_en2, rdma_en3")
    assert "could not be read" in r.results("MD203")[0]["summary"]
