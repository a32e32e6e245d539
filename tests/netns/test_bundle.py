"""``meshdoctor bundle --hostfile`` across real hosts: network namespaces with their own sshd,
each a fake Mac (tests/netns/fleet_bed.py). Every host's share comes back in one archive; a
secret planted in one host's environment never does; a host without meshdoctor is a failed
MANIFEST row, not a lost archive."""

from __future__ import annotations

import json
import os

import pytest

from tests import netns
from tests.cli.test_bundle import members
from tests.helpers import run_cli
from tests.netns.fleet_bed import MacMesh

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

SECRET = "ib-token-8c1d2e3f4a5b"


NO_PYTHON = "/opt/no-python-here/python3"


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(3) as tb:
        tb.mesh = MacMesh(tb)
        tb.hostfile = tb.mesh.hostfile(tb.dir / "hosts.json")
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env["MESHDOCTOR_SSH_CONFIG"] = str(tb.ssh_config)
        yield tb


def test_every_host_in_one_archive_secrets_removed_failures_listed(bed, tmp_path):
    bed.mesh.write(
        env={
            "h1": {"NCCL_IB_TOKEN": SECRET, "NCCL_IB_HCA": "rdma_en2"},
            "h2": {"MD_PY": NO_PYTHON},  # no interpreter there: nothing can run
        },
    )
    out = tmp_path / "fleet.tar.gz"
    r = run_cli(
        "bundle",
        "--hostfile",
        str(bed.hostfile),
        "--python",
        bed.mesh.python,
        "-o",
        str(out),
        "--json",
        env=bed.env,
        timeout=240,
    )
    assert r.rc == 0, r.outcome()
    files = members(out)
    assert json.loads(files["hostfile.json"])["hosts"][0]["ssh"] == "h0"
    for h in ("h0", "h1"):
        assert json.loads(files[f"{h}/check.json"])["command"] == "check"
        assert "receptacle_1_tag" in files[f"{h}/tools/system_profiler-SPThunderboltDataType.json"]
        assert "Thunderbolt Bridge" in files[f"{h}/tools/networksetup-listallhardwareports.txt"]
    assert "NCCL_IB_TOKEN=<removed>" in files["h1/env.txt"]
    assert "NCCL_IB_HCA=rdma_en2" in files["h1/env.txt"]
    assert SECRET not in "\n".join(files.values())
    assert not any(n.startswith("h2/") for n in files)
    rows = [x.split("\t") for x in files["MANIFEST.txt"].splitlines() if not x.startswith("#")]
    h2 = [x for x in rows if x[0] == "h2"]
    assert h2 and h2[0][1] == "failed" and "not found" in h2[0][4], h2
    by_host = {x["host"]: x for x in r.results("MD412")}
    assert by_host["h0"]["status"] == "ok", by_host["h0"]["summary"]
    assert by_host["h2"]["status"] == "warn"
    assert "Darwin Kernel Version" in files["h0/tools/uname-a.txt"]
    assert by_host["h1"]["summary"].endswith("item(s) collected")
