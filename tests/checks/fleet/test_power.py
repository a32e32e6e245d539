"""MD414 (fleet.power) on merged facts: the Macs' pmset sleep settings compared."""

from __future__ import annotations

import json

from meshdoctor.checker.fleet_model import FleetView, HostView, run_fleet_checks
from meshdoctor.checks.fleet.power import FLEET_CHECK
from meshdoctor.checker.here import check_args
from meshdoctor.hostfile.load import parse
from tests.helpers import run_cli, write

AWAKE = {"sleep": 0, "disksleep": 0, "powernap": 0}
REMEDY = "sudo pmset -a sleep 0 disksleep 0 powernap 0"


def _md414(*powers):
    hosts = [{"ssh": f"m{i}", "ips": [f"10.0.0.{i + 1}"]} for i in range(len(powers))]
    hf = parse(json.dumps({"backend": "ring", "hosts": hosts}))
    view = FleetView(
        hf,
        {
            f"m{i}": HostView(f"m{i}", [i], True, {} if p is None else {"power": p})
            for i, p in enumerate(powers)
        },
    )
    return [r for _, r in run_fleet_checks([FLEET_CHECK], view)]


def test_same_settings_everywhere_pass():
    (r,) = _md414(AWAKE, AWAKE, AWAKE)
    assert r.status == "ok"
    assert r.summary == "same on all 3 Macs: sleep 0, disksleep 0, powernap 0"


def test_the_host_that_differs_is_named_with_its_ssh_command():
    sleepy = {"sleep": 1, "disksleep": 10, "powernap": 1}
    (r,) = _md414(AWAKE, sleepy, AWAKE)
    assert r.status == "warn" and r.host == "m1"
    assert r.summary == (
        "power settings differ across the Macs (m0: sleep 0, disksleep 0, powernap 0; "
        "m1: sleep 1, disksleep 10, powernap 1; m2: sleep 0, disksleep 0, powernap 0); "
        "odd one(s) out: m1"
    )
    assert r.remediation.command == f"ssh m1 '{REMEDY}'"
    assert f"`ssh m1 '{REMEDY}'`" in r.remediation.text


def test_when_the_odd_host_is_the_awake_one_the_sleepy_ones_get_the_commands():
    sleepy = {"sleep": 10, "disksleep": 10, "powernap": 0}
    (r,) = _md414(sleepy, sleepy, AWAKE)
    assert r.host == "m2" and r.summary.endswith("odd one(s) out: m2")
    assert r.remediation.command is None  # two hosts to change: each command in the text
    assert f"`ssh m0 '{REMEDY}'`, `ssh m1 '{REMEDY}'`" in r.remediation.text


def test_a_tie_names_every_host():
    (r,) = _md414(AWAKE, {"sleep": 1, "disksleep": 0, "powernap": 0})
    assert r.summary.endswith("odd one(s) out: m0, m1")
    assert r.evidence["hosts"] == ["m0", "m1"]


def test_hosts_that_are_not_macs_or_could_not_read_pmset_are_left_out():
    (r,) = _md414(AWAKE, None, {"error": "`pmset -g` did not finish within 4.5 s (killed)"})
    assert r.status == "skip"
    assert r.summary == (
        "1 Mac(s) reported their power settings: nothing to compare "
        "(m2 could not read pmset: see MD104 there)"
    )


def test_a_fake_macs_facts_carry_its_pmset_settings_and_md414_compares_them(fake_mac, tmp_path):
    """Each host's real facts (`check --local-only --facts`, as fleet mode runs it) on a fake
    Mac with sleep off and one with sleep on."""
    hf = write(
        tmp_path / "r.json",
        json.dumps({"backend": "ring", "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]}),
    )
    powers = []
    for i, sets in enumerate((("healthy",), ("healthy", "sleep-on"))):
        env = fake_mac(*sets)
        r = run_cli(
            *check_args(timeout=5, only=["MD104"], hostfile=str(hf), ranks=[0], facts=True),
            env=env,
        )
        powers.append(r.doc["hosts"][0]["facts"]["power"])
        (tmp_path / "bin").rename(tmp_path / f"bin{i}")  # the next fake Mac gets its own stubs
        (tmp_path / "bin-fixtures").rename(tmp_path / f"bin{i}-fixtures")
    assert powers[0] == AWAKE
    assert powers[1] == {
        "sleep": 1,
        "disksleep": 10,
        "powernap": 1,
        "notes": {"sleep": "sleep prevented by sharingd, powerd"},
    }
    (r,) = _md414(powers[0], powers[1], powers[0])
    assert r.status == "warn" and r.host == "m1"
