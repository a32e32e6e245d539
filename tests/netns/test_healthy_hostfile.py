"""``--healthy-hostfile OUT`` across real hosts: network namespaces with their own sshd, each a
fake Mac (tests/netns/fleet_bed.py); one host or one cable fails, the hostfile written holds
what is left, in mlx.launch's format, ranks renumbered and the rdma matrix cut to match."""

from __future__ import annotations

import json
import os

import pytest

from tests import netns
from tests.helpers import run_cli
from tests.netns.fleet_bed import MacMesh, hostfile_rows

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TIMEOUT = "60"  # per-check deadline on each host: a bound on a hang, never waited out by a
# passing test (a loaded 2-core CI box has taken over 20 s for one remote check)


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(4) as tb:
        tb.mesh = MacMesh(tb)
        tb.hostfile = tb.mesh.hostfile(tb.dir / "hosts.json")
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env["MESHDOCTOR_SSH_CONFIG"] = str(tb.ssh_config)
        yield tb


def fleet(bed, out, *extra):
    return run_cli(
        "check",
        "--hostfile",
        str(bed.hostfile),
        "--python",
        bed.mesh.python,
        "--timeout",
        TIMEOUT,
        "--healthy-hostfile",
        str(out),
        *extra,
        env=bed.env,
        timeout=180,
    )


def test_a_failing_host_is_left_out_ranks_renumbered_and_matrix_cut(bed, tmp_path):
    bed.mesh.write(sets={"h2": ["wired-leftover"]})
    out = tmp_path / "healthy.json"
    r = fleet(bed, out, "--json")
    assert r.rc == 1, r.outcome()
    sub = r.results("MD410")[0]
    assert sub["evidence"]["passing"] == ["h0", "h1", "h3"]
    assert list(sub["evidence"]["failing"]) == ["h2"]
    assert "3 of 4 hosts pass" in sub["summary"] and "failing: h2" in sub["summary"]
    doc = json.loads(out.read_text())
    rows = hostfile_rows(4)
    assert doc["backend"] == "jaccl"
    assert [h["ssh"] for h in doc["hosts"]] == ["h0", "h1", "h3"]
    assert [h["ips"] for h in doc["hosts"]] == [[bed.ips[h]] for h in ("h0", "h1", "h3")]
    for new, old in enumerate((0, 1, 3)):
        assert doc["hosts"][new]["rdma"] == [rows[old][j] for j in (0, 1, 3)]
    human = fleet(bed, out)  # what a person reads: the two lists and the file written
    assert "passing: h0, h1, h3" in human.out and str(out) in human.out, human.out
    # the file written is itself a go
    again = run_cli(
        "check",
        "--hostfile",
        str(out),
        "--python",
        bed.mesh.python,
        "--timeout",
        TIMEOUT,
        "--json",
        env=bed.env,
        timeout=180,
    )
    assert again.rc == 0, again.outcome()


def test_a_dead_second_cable_is_cut_and_every_host_stays(bed, tmp_path):
    rows = hostfile_rows(4)
    assert rows[1][0] == ["rdma_en2", "rdma_en7"]  # the h0-h1 pair has two cables
    bed.mesh.write(down={"h1": ["rdma_en7"]})  # its second cable, down at h1
    out = tmp_path / "healthy.json"
    r = fleet(bed, out, "--json")
    assert r.rc == 1, r.outcome()
    sub = r.results("MD410")[0]
    assert sub["evidence"]["passing"] == ["h0", "h1", "h2", "h3"], sub
    assert "1 cable(s) cut" in sub["summary"]
    doc = json.loads(out.read_text())
    assert doc["hosts"][0]["rdma"][1] == [rows[0][1][0]]
    assert doc["hosts"][1]["rdma"][0] == ["rdma_en2"]
    assert doc["hosts"][2]["rdma"] == rows[2]


def test_fewer_than_two_passing_hosts_write_nothing_and_say_so(bed, tmp_path):
    bed.mesh.write(sets={h: ["wired-leftover"] for h in ("h0", "h1", "h2")})
    out = tmp_path / "healthy.json"
    r = fleet(bed, out, "--json")
    assert r.rc == 1
    sub = r.results("MD410")[0]
    assert (
        "no healthy hostfile written: fewer than two ranks pass (1 rank(s) on 1 of 4 host(s))"
        in sub["summary"]
    )
    assert sub["evidence"]["passing"] == ["h3"] and not out.exists()


def test_probe_pairs_gate_refusal_leaves_the_hosts_that_passed(bed, tmp_path):
    bed.mesh.write(sets={"h1": ["wired-leftover"]})
    hf = tmp_path / "ring.json"
    hf.write_text(json.dumps([{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts]))
    out = tmp_path / "healthy.json"
    env = dict(bed.env, MESHDOCTOR_REMOTE_PYTHON=bed.mesh.python)
    r = run_cli(
        "probe",
        "--hostfile",
        str(hf),
        "--pairs",
        "--size",
        "1MiB",
        "--healthy-hostfile",
        str(out),
        "--json",
        env=env,
        timeout=240,
    )
    assert r.rc == 1, r.outcome()
    assert "probe" not in r.doc  # the gate refused the launch
    sub = r.results("MD410")[0]
    assert sub["evidence"]["passing"] == ["h0", "h2", "h3"]
    doc = json.loads(out.read_text())
    assert doc == {"hosts": [{"ssh": h, "ips": [bed.ips[h]]} for h in ("h0", "h2", "h3")]}


def test_healthy_hostfile_needs_a_hostfile_and_pairs():
    r = run_cli("probe", "-n", "2", "--healthy-hostfile", "x.json")
    assert r.rc == 2 and "--healthy-hostfile needs --hostfile and --pairs" in r.err
    r = run_cli("check", "--healthy-hostfile", "x.json")
    assert r.rc == 2 and "--healthy-hostfile needs --hostfile" in r.err
