"""MD104 (node.power) on fake Macs whose `pmset -g` prints Apple's format: sleep off, sleep on
(with the note pmset prints when something prevents it now), pmset hung, pmset missing."""

from __future__ import annotations

from tests.helpers import run_cli

REMEDY = "sudo pmset -a sleep 0 disksleep 0 powernap 0"


def _md104(env, *extra):
    r = run_cli("check", "--only", "MD104", "--json", *extra, env=env, timeout=120)
    (f,) = r.results("MD104")
    return r, f


def test_sleep_off_passes_showing_the_settings(fake_mac):
    r, f = _md104(fake_mac("healthy"))
    assert r.rc == 0, r.err
    assert f["status"] == "ok"
    assert f["summary"] == "system sleep is off (pmset: sleep 0, disksleep 0, powernap 0)"


def test_sleep_on_warns_with_the_pmset_command(fake_mac):
    r, f = _md104(fake_mac("healthy", "sleep-on"))
    assert f["status"] == "warn"
    assert f["summary"].startswith(
        "system sleep is on: this Mac sleeps after 1 min idle "
        "(pmset: sleep 1, disksleep 10, powernap 1); now sleep prevented by sharingd, powerd"
    )
    assert "its rank may go to sleep mid-job" in f["summary"]
    assert f["remediation"]["command"] == REMEDY
    assert f["evidence"]["pmset"]["settings"]["displaysleep"] == 10


def test_a_hung_pmset_is_not_assessed_on_a_short_deadline(fake_mac):
    r, f = _md104(fake_mac("healthy", extra={"pmset.hang": "60"}), "--timeout", "2")
    assert r.rc == 3
    assert f["status"] == "error"
    assert "not assessed" in f["summary"] and "`pmset -g` did not finish" in f["summary"]
    assert "--timeout 45" in f["remediation"]["text"]


def test_pmset_without_a_sleep_line_is_an_error_not_a_pass(fake_mac):
    r, f = _md104(fake_mac("healthy", extra={"pmset__g.txt": "Currently in use:\n"}))
    assert r.rc == 3 and f["status"] == "error"
    assert "printed no numeric `sleep` line" in f["summary"]


def test_not_run_on_linux(clean_env):
    r = run_cli("check", "--only", "MD104", "--json", env=clean_env)
    (f,) = r.results("MD104")
    assert f["status"] == "skip" and f["summary"] == "not applicable on linux (applies to darwin)"


def test_in_fleet_mode_the_remedy_runs_on_the_remote_host():
    from meshdoctor.remote import fleet_remedy

    assert fleet_remedy(REMEDY, "m2", "hosts.json", True) == f"ssh m2 '{REMEDY}'"
