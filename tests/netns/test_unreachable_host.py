"""A probe result about a host that cannot be reached is never ok (a network-namespace host whose
link is down)."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_one_rule import _probe_env
from tests.helpers import run_cli, write


def test_a_result_about_an_unreachable_host_is_never_ok(clean_env, tmp_path):
    # a network-namespace test host whose link is down: ssh cannot reach it, and no packet
    # leaves this machine
    from tests import netns

    why = netns.unavailable()
    if why:
        pytest.skip(why)
    with netns.TestBed(1) as tb:
        tb.link("h0", False)
        hf = write(
            tmp_path / "hosts.json",
            json.dumps(
                [{"ssh": "h0", "ips": [tb.ips["h0"]]}, {"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]
            ),
        )
        env = dict(_probe_env(clean_env), MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config))
        r = run_cli(
            "probe",
            "--hostfile",
            str(hf),
            "--size",
            "4096",
            "--json",
            "--no-check",
            env=env,
            timeout=120,
        )
    # 3 when its rank is found unstartable first; 1 when group formation already failed on it
    assert r.rc in (1, 3) and r.doc["verdict"] != "go", (r.out, r.err)
    assert not [x for x in r.doc["results"] if x["host"] == "h0" and x["status"] == "ok"]
    left = {x["host"]: x for x in r.doc["results"] if x["code"] == "MD506"}
    assert left["h0"]["status"] != "ok", r.doc["results"]
    assert "not checked for leftovers" in left["h0"]["summary"]
    ok = [x for x in left.values() if x["status"] == "ok"]
    assert all("h0" not in x["summary"] and "127.0.0.1" in x["summary"] for x in ok)
    assert {h["host"]: h["reachable"] for h in r.doc["hosts"]}["h0"] is False
