"""The hostfile as typed data: frozen once loaded, checked once per load (the problems travel with
it), the same from --hosts as from the equivalent file, and the JSON handed to other hosts reads
back as the same hostfile."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshdoctor.hostfile.load import from_list, load, parse
from meshdoctor.hostfile.types import BadCell, Host
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.probe.setup import ProbeSetupError
from tests.helpers import run_cli, write
from tests.unit.probe.test_units import _cfg

NAMES = {"here.example"}  # what means this machine below: none of the entries

# a jaccl mesh with several problems: an env without '=', a duplicate host, an address that is
# not one, a host name a shell would read, a short row, a number for a device, a diagonal device
BROKEN = {
    "backend": "jaccl",
    "envs": ["NOEQUALS"],
    "hosts": [
        {"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [None, "rdma_en3", ["rdma_en4", "rdma_en5"]]},
        {"ssh": "m1", "ips": ["300.1.1.1"], "rdma": [None, None]},
        {"ssh": "a;b", "ips": ["10.0.0.3"], "rdma": [5, "rdma_en3", "rdma_en4"]},
    ],
}


def typed(hf: Hostfile):
    """What a hostfile is, apart from where it came from."""
    return hf.hosts, hf.backend, hf.envs, hf.problems


def test_a_loaded_hostfile_is_frozen_typed_data(tmp_path):
    hf = load(write(tmp_path / "hosts.json", json.dumps(BROKEN)), names=NAMES)
    assert isinstance(hf.hosts, tuple) and hf.envs == ("NOEQUALS",)
    m1 = hf.hosts[0]
    assert m1.ips == ("10.0.0.1",) and m1.rdma == (None, "rdma_en3", ("rdma_en4", "rdma_en5"))
    assert m1.devices() == ["rdma_en3", "rdma_en4", "rdma_en5"]
    assert hf.hosts[2].rdma[0] == BadCell("5")
    assert isinstance(hf.problems, tuple) and len(hf.problems) >= 6
    assert hf.problems[0] == ("envs[0]", "'NOEQUALS' is not KEY=VALUE")
    for obj, attr, value in (
        (hf, "backend", "ring"),
        (hf, "hosts", ()),
        (hf, "problems", ()),
        (m1, "ssh", "elsewhere"),
        (m1, "ips", ("10.9.9.9",)),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, value)
    with pytest.raises(AttributeError):
        m1.ips.append("10.9.9.9")  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hf.hosts[2].rdma[2] = None  # type: ignore[index]
    # built from values, lists become tuples and the same rules run
    built = Hostfile([Host(0, "a;b", ["10.0.0.1"], [None, ["rdma_en2"]])], here=frozenset(NAMES))
    assert built.hosts[0].ips == ("10.0.0.1",) and built.hosts[0].rdma == (None, ("rdma_en2",))
    assert "cannot be an ssh destination" in dict(built.problems)["hosts[0].ssh"]


def test_the_probe_runs_a_variant_and_leaves_the_callers_hostfile_alone(tmp_path):
    text = json.dumps(
        [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": "localhost", "ips": ["127.0.0.2"]}]
    )
    hf = load(write(tmp_path / "hosts.json", text))
    assert hf.backend == "" and hf.problems == ()
    cfg = _cfg(hostfile=hf, backend="nccl")
    assert cfg.hostfile.backend == "nccl" and cfg.hostfile is not hf
    assert hf.backend == "" and hf.problems == ()
    # other hosts read the document as written, with the backend that will run
    assert json.loads(cfg.hostfile.to_launch_json()) == {
        "backend": "nccl",
        "hosts": json.loads(text),
    }
    assert hf.to_launch_json() == text
    # a variant is checked anew for its backend; the hostfile it came from keeps its problems
    jaccl = dataclasses.replace(hf, backend="jaccl")
    assert "missing: jaccl needs a row of 2 entries" in dict(jaccl.problems)["hosts[0].rdma"]
    assert hf.problems == ()
    with pytest.raises(ProbeSetupError, match=r"hosts\[0\]\.rdma: missing"):
        _cfg(hostfile=hf, backend="jaccl")
    assert hf.backend == "" and hf.problems == ()


# counts, in the real command, how often the rules run: once per load, whoever reads them
COUNTING = r"""
import atexit, sys, threading
from meshdoctor.hostfile import rules
runs = {rules.written_problems.__code__: 0, rules.consistency_problems.__code__: 0}
def count(frame, event, arg):
    if event == "call" and frame.f_code in runs:
        runs[frame.f_code] += 1
sys.setprofile(count)
threading.setprofile(count)
atexit.register(lambda: sys.stderr.write("\nhostfile checked %d %d\n" % tuple(runs.values())))
from meshdoctor.cli import main
sys.argv[0] = "meshdoctor"
main()
"""


def _counted(*args: str, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", COUNTING, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_check_and_probe_check_a_hostfile_once_per_load(tmp_path, clean_env):
    path = write(tmp_path / "hosts.json", json.dumps(BROKEN))
    expected = {f"{p}: {m}" for p, m in load(path).problems}
    assert len(expected) >= 6
    r = _counted(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(path), env=clean_env
    )
    assert r.returncode == 1, r.stderr
    said = {x["summary"] for x in json.loads(r.stdout)["results"] if x["status"] == "fail"}
    assert said == expected
    assert "hostfile checked 1 1" in r.stderr, r.stderr
    r = _counted("probe", "--hostfile", str(path), "--size", "4096", env=clean_env)
    assert r.returncode == 2 and "envs[0]: 'NOEQUALS' is not KEY=VALUE" in r.stderr, r.stderr
    assert "hostfile checked 1 1" in r.stderr, r.stderr
    # --backend naming another backend: the probe runs a variant, whose rules run once more
    r = _counted("probe", "--hostfile", str(path), "--backend", "ring", env=clean_env)
    assert r.returncode == 2 and "hostfile checked 1 2" in r.stderr, r.stderr


def test_the_launch_json_reads_back_as_the_same_hostfile(tmp_path):
    path = write(tmp_path / "hosts.json", json.dumps(BROKEN, indent=1))
    hf = load(path, names=NAMES)
    assert hf.to_launch_json() == path.read_text()  # what other hosts read: the file as written
    built = Hostfile(hf.hosts, hf.backend, hf.envs, here=frozenset(NAMES))
    assert typed(built) == typed(hf)
    assert json.loads(built.to_launch_json()) == BROKEN
    assert typed(parse(built.to_launch_json(), names=NAMES)) == typed(built)
    listed = from_list("m1,10.0.0.2", names=NAMES)
    assert json.loads(listed.to_launch_json()) == {
        "hosts": [{"ssh": "m1", "ips": []}, {"ssh": "10.0.0.2", "ips": ["10.0.0.2"]}]
    }
    assert typed(parse(listed.to_launch_json(), names=NAMES)) == typed(listed)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda c: (
            st.lists(c, max_size=4)
            | st.dictionaries(
                st.sampled_from(["ssh", "ips", "rdma", "hosts", "backend", "envs", "x"]),
                c,
                max_size=5,
            )
        ),
        max_leaves=30,
    )
)
def test_the_typed_values_of_any_document_round_trip(data):
    hf = parse(json.dumps(data), names=NAMES)
    built = Hostfile(hf.hosts, hf.backend, hf.envs, here=frozenset(NAMES))
    assert typed(parse(built.to_launch_json(), names=NAMES)) == typed(built)


def test_hosts_option_gives_the_hostfile_the_equivalent_file_gives(tmp_path, clean_env):
    listed = "m1,10.0.0.2,a;b"
    path = write(
        tmp_path / "hosts.json",
        json.dumps(
            [
                {"ssh": "m1", "ips": []},
                {"ssh": "10.0.0.2", "ips": ["10.0.0.2"]},
                {"ssh": "a;b", "ips": []},
            ]
        ),
    )
    from_hosts, from_file = from_list(listed, names=NAMES), load(path, names=NAMES)
    assert typed(from_hosts) == typed(from_file)
    assert {"hosts[0].ips", "hosts[2].ssh", "hosts[2].ips"} <= set(dict(from_hosts.problems))
    said = []
    for option in (["--hosts", listed], ["--hostfile", str(path)]):
        r = run_cli("check", "--json", "--only", "MD401", "--local-only", *option, env=clean_env)
        assert r.rc == 1
        said.append([x["summary"] for x in r.results("MD401")])
    assert said[0][:-1] == said[1][:-1]  # the rules' failures, in the same order
    assert said[0][-1] == (
        "this machine is none of the 3 hosts in the --hosts list "
        "(matched by ssh name, host name and local IPs)"
    )
    assert said[1][-1].startswith(f"this machine is none of the 3 hosts in {path} ")
