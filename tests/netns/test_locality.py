"""Where a rank runs, with real sshd hosts: meshdoctor runs inside network-namespace host h0
(whose sshd listens on h0's address only) and checks hostfiles that put a rank on h0 itself.

mlx.launch runs a rank without ssh only for the ssh name 127.0.0.1 (MLX 0.32.4
mlx/_distributed_utils/launch.py); every other name, this machine's own included, is reached with
ssh. So the fleet check proves `ssh -o BatchMode=yes NAME true` for h0's own entry: "h0" (its
sshd answers) passes, "localhost" (nothing listens on h0's loopback) is no-go naming ssh's
message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import netns
from tests.helpers import validate, write

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(2) as tb:
        yield tb


def _check_in_h0(bed, hostfile) -> dict:
    """`meshdoctor check --hostfile HOSTFILE --only MD401 --json` run inside h0's namespace, with
    the bed's ssh config; the parsed, schema-checked verdict."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
    argv = [sys.executable, "-m", "meshdoctor", "check", "--hostfile", str(hostfile)]
    argv += ["--only", "MD401", "--python", sys.executable, "--timeout", "20", "--json"]
    p = subprocess.run(
        ["ip", "netns", "exec", bed.netns["h0"], *argv],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["exit_code"] == p.returncode
    return doc


def _reach(doc):
    return [x for x in doc["results"] if x["code"] == "MD402"]


def test_this_host_s_own_name_passes_when_its_sshd_answers(bed, tmp_path):
    hf = write(
        tmp_path / "own.json",
        json.dumps([{"ssh": "h0", "ips": [bed.ips["h0"]]}, {"ssh": "h1", "ips": [bed.ips["h1"]]}]),
    )
    doc = _check_in_h0(bed, hf)
    assert doc["verdict"] == "go" and not _reach(doc), doc["results"]
    assert doc["fleet"]["hosts"] == ["h0", "h1"]


def test_localhost_on_a_host_without_an_sshd_on_loopback_is_no_go(bed, tmp_path):
    hf = write(
        tmp_path / "lo.json",
        json.dumps(
            [{"ssh": "localhost", "ips": [bed.ips["h0"]]}, {"ssh": "h1", "ips": [bed.ips["h1"]]}]
        ),
    )
    doc = _check_in_h0(bed, hf)
    assert doc["verdict"] == "no-go" and doc["exit_code"] == 1, doc["results"]
    (reach,) = _reach(doc)
    assert reach["status"] == "fail" and reach["host"] == "localhost"
    assert "`ssh localhost` fails: " in reach["summary"]
    assert "Connection refused" in reach["summary"], reach["summary"]
    assert '"ssh": "127.0.0.1"' in reach["remediation"]["text"]
    hf = write(tmp_path / "lo.json", hf.read_text().replace("localhost", "127.0.0.1"))
    doc = _check_in_h0(bed, hf)
    assert doc["verdict"] == "go" and not _reach(doc), doc["results"]


def _in_h0(bed, *args: str) -> dict:
    """``meshdoctor ARGS --json`` run inside h0's namespace with the bed's ssh config; the
    parsed, schema-checked verdict."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    env["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
    p = subprocess.run(
        ["ip", "netns", "exec", bed.netns["h0"], sys.executable, "-m", "meshdoctor", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["exit_code"] == p.returncode
    return doc


def test_bundle_and_triage_reach_localhost_with_ssh_as_mlx_launch_does(bed, tmp_path):
    """One reach rule for every command: `localhost` is reached with ssh (nothing listens on
    h0's loopback: refused, named), 127.0.0.1 is read in this process."""
    log = write(tmp_path / "rank.log", "RuntimeError: [jaccl] Recv failed with errno=104\n")
    for name, here in (("localhost", False), ("127.0.0.1", True)):
        hf = write(tmp_path / f"{name}.json", json.dumps([{"ssh": name, "ips": [bed.ips["h0"]]}]))
        out = tmp_path / f"{name}.tar.gz"
        doc = _in_h0(bed, "bundle", "--hostfile", str(hf), "-o", str(out), "--json")
        (share,) = [x for x in doc["results"] if x["host"] == name]
        if here:
            assert share["status"] == "ok", share
        else:
            assert share["status"] == "warn", share
            assert "could not collect on localhost" in share["summary"], share
            assert "Connection refused" in share["summary"], share
        doc = _in_h0(bed, "triage", "--hostfile", str(hf), str(log), "--json")
        unreachable = [x["summary"] for x in doc["results"] if "unreachable" in x["summary"]]
        if here:
            assert not unreachable, unreachable
        else:
            assert unreachable and "Connection refused" in unreachable[0], doc["results"]
