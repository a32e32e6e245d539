"""MD401 (fleet.hostfile) through the real CLI: the hostfile's rules, this machine's rank, the
words."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli, write
from tests.unit.hostfile.test_hostfile import mesh


def test_overlong_ssh_name_is_a_hostfile_problem(tmp_path, clean_env):
    hf = write(tmp_path / "h.json", json.dumps([{"ssh": "a" * 300, "ips": ["127.0.0.1"]}]))
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1 and "longer than any host name" in r.results("MD401")[0]["summary"]


def test_two_local_ranks_of_a_jaccl_hostfile_warn(tmp_path, clean_env):
    hf = write(
        tmp_path / "h.json",
        json.dumps(
            {
                "backend": "jaccl",
                "hosts": [
                    {"ssh": "127.0.0.1", "ips": ["127.0.0.1"], "rdma": [None, "rdma_en2"]},
                    {"ssh": "localhost", "ips": ["127.0.0.2"], "rdma": ["rdma_en2", None]},
                ],
            }
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 0 and r.status("MD401") == "warn"
    assert "one rank per Mac" in r.results("MD401")[0]["summary"]


def test_cli_inconsistent_hostfile_fails_md401_naming_the_entry(tmp_path, clean_env):
    d = mesh(3)
    d["hosts"][0]["ssh"] = "localhost"
    d["hosts"][2]["rdma"][2] = "rdma_en4"
    hf = write(tmp_path / "hosts.json", json.dumps(d))
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1
    res = r.results("MD401")
    assert any(x["summary"].startswith("hosts[2].rdma[2]: must be null") for x in res)
    assert r.doc["hosts"][0]["rank"] == 0


def test_cli_consistent_ring_hostfile_names_this_rank(tmp_path, clean_env):
    hf = write(
        tmp_path / "hosts.json",
        json.dumps(
            [
                {"ssh": "elsewhere", "ips": ["198.51.100.10"]},
                {"ssh": "localhost", "ips": ["127.0.0.1"]},
            ]
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 0
    assert "this machine is rank 1" in r.results("MD401")[0]["summary"]
    assert r.doc["hosts"][0] == {
        "host": "localhost",
        "rank": 1,
        "reachable": True,
        "platform": r.doc["hosts"][0]["platform"],
    }


def test_cli_hostfile_without_this_machine_warns(tmp_path, clean_env):
    hf = write(
        tmp_path / "hosts.json",
        json.dumps(
            [{"ssh": "x1", "ips": ["198.51.100.10"]}, {"ssh": "x2", "ips": ["198.51.100.11"]}]
        ),
    )
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 0 and r.status("MD401") == "warn"


def test_check_says_one_rank_and_both_ranks_in_words(tmp_path, clean_env):
    one = write(
        tmp_path / "one.json",
        json.dumps({"backend": "nccl", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}]}),
    )
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(one), env=clean_env)
    assert r.results("MD401")[0]["summary"] == "1 rank, backend nccl; this machine is rank 0"
    two = write(
        tmp_path / "two.json",
        json.dumps(
            [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": "localhost", "ips": ["127.0.0.2"]}]
        ),
    )
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(two), env=clean_env)
    assert r.results("MD401")[0]["summary"].endswith("this machine is ranks 0 and 1")


def test_a_hostfile_whose_every_host_is_refused_is_still_no_go(tmp_path, clean_env):
    """No host can check the hostfile when every name is refused: the file's own problems still
    make the fleet check no-go (MD401 fail), as one reachable host's check would say."""
    hf = write(
        tmp_path / "bad.json",
        json.dumps([{"ssh": "a;b", "ips": ["10.0.0.1"]}, {"ssh": "-oX=y", "ips": ["10.0.0.2"]}]),
    )
    for args in (["--hostfile", str(hf)], ["--hosts", "a;b"]):
        r = run_cli("check", *args, "--json", env=clean_env)
        assert r.rc == 1, r.out
        md401 = [x for x in r.results("MD401") if x["status"] == "fail"]
        assert md401 and all(x["host"] == "mesh" for x in md401)
        assert "'a;b' cannot be an ssh destination" in md401[0]["summary"]


def test_a_cell_naming_one_device_twice_fails_md401(tmp_path, clean_env):
    d = mesh(3)
    d["hosts"][0]["ssh"] = "localhost"
    d["hosts"][0]["rdma"][1] = ["rdma_en3", "rdma_en3"]
    hf = write(tmp_path / "hosts.json", json.dumps(d))
    r = run_cli(
        "check", "--json", "--only", "MD401", "--local-only", "--hostfile", str(hf), env=clean_env
    )
    assert r.rc == 1
    assert any(
        x["summary"].startswith("hosts[0].rdma[1]: names rdma_en3 twice")
        for x in r.results("MD401")
    )


@pytest.mark.parametrize("backend", ["ring", ""])
def test_a_one_rank_ring_hostfile_fails_as_mlx_launch_would_run_it(tmp_path, clean_env, backend):
    # mlx.launch gives a lone ring rank an empty MLX_HOSTFILE (MLX 0.32.4 launch_ring) and
    # mx.distributed.init() dies parsing it: check, the probe and launch's gate refuse it alike
    doc = {"hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]}
    if backend:
        doc["backend"] = backend
    one = write(tmp_path / "one.json", json.dumps(doc))
    r = run_cli("check", "--json", "--only", "MD401", "--hostfile", str(one), env=clean_env)
    assert r.rc == 1
    bad = [x for x in r.results("MD401") if x["status"] == "fail"]
    assert len(bad) == 1 and "1 rank with the ring backend" in bad[0]["summary"], bad
    assert "MD644" in bad[0]["summary"]
    p = run_cli("probe", "--hostfile", str(one), env=clean_env)
    assert p.rc == 2 and "1 rank with the ring backend" in p.err, p.err


def test_a_hosts_list_of_names_says_what_to_write_and_a_list_of_ips_passes(clean_env):
    # the README's fleet example: host names carry no IP for the ring backend
    r = run_cli(
        "check",
        "--local-only",
        "--only",
        "MD401",
        "--hosts",
        "mac[01-16]",
        "--json",
        env=clean_env,
    )
    assert r.rc == 1
    bad = [x for x in r.results("MD401") if x["status"] == "fail"]
    assert len(bad) == 16 and bad[0]["summary"].startswith("hosts[0].ips: the ring backend")
    assert "list the hosts by IP (--hosts 10.0.0.1,10.0.0.2" in bad[0]["remediation"]["text"]
    assert "Edit the --hosts list" not in json.dumps(r.doc)
    r = run_cli(
        "check",
        "--local-only",
        "--only",
        "MD401",
        "--hosts",
        "10.0.0.[1-16]",
        "--json",
        env=clean_env,
    )
    assert r.rc == 0 and not [x for x in r.results("MD401") if x["status"] == "fail"], r.out
