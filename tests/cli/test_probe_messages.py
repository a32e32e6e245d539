"""What ``meshdoctor probe`` says: a deadline too short for the message, --strict, progress lines in
a log, the hostfile it blames. (tests/cli/test_probe.py runs real ranks under its own fixture.)"""

from __future__ import annotations

import json

from tests.cli.test_one_rule import _probe_env
from tests.helpers import run_cli, write


def test_a_real_short_deadline_on_256mib_all_sum_suggests_a_longer_one(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--op",
        "all_sum",
        "--size",
        "256MiB",
        "--timeout",
        "0.1",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    (hang,) = [x for x in r.doc["results"] if x["code"] == "MD503"]
    # whether both ranks were inside the step at 0.1 s depends on the machine's load; either
    # way no rank is blamed and the deadline sized for the message is shown
    assert "the deadline sized for 256MiB would be" in hang["summary"]
    assert "never arrived" not in hang["summary"] and hang["host"] == "mesh"
    assert "probe again without --timeout" in hang["remediation"]["text"]
    # the command to paste: the same probe, every option kept but the one to leave out
    assert hang["remediation"]["command"] == (
        "meshdoctor probe -n 2 --op all_sum --size 256MiB --json"
    ), hang["remediation"]


def test_probe_strict_turns_a_warning_into_no_go():
    from meshdoctor.model import Result, Verdict

    v = Verdict(
        command="probe",
        strict=True,
        results=[Result("MD507", "probe.soak", "warn", "soak did not complete")],
    )
    assert v.exit_code == 1
    r = run_cli("probe", "--help")
    assert "--strict" in r.out and "Treat warnings as failures" in r.out


def test_a_probe_writing_to_a_log_shows_progress_lines(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "4096",
        "--iters",
        "1",
        "--json",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert r.rc == 0
    lines = [ln for ln in r.err.splitlines() if ln.startswith("probe: ")]
    assert lines and "s elapsed, per-step deadline 10.1 s" in lines[0]
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "4096",
        "--iters",
        "1",
        "--quiet",
        env=_probe_env(clean_env),
        timeout=120,
    )
    assert "probe: " not in r.err  # --quiet stays quiet


def test_probe_names_the_hostfile_it_blames(tmp_path, clean_env):
    """A backend written in the file is the file's fault (--backend was never passed); a
    one-entry file is named with what else is wrong in it."""
    one = {"backend": "carrier-pigeon", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}]}
    hf = write(tmp_path / "one.json", json.dumps(one))
    r = run_cli("probe", "--hostfile", str(hf), env=_probe_env(clean_env))
    assert r.rc == 2 and f"{hf}: 1 rank: a probe needs at least 2" in r.err, r.err
    assert "unknown backend 'carrier-pigeon'" in r.err
    two = dict(one, hosts=one["hosts"] * 2)
    hf = write(tmp_path / "two.json", json.dumps(two))
    r = run_cli("probe", "--hostfile", str(hf), env=_probe_env(clean_env))
    assert r.rc == 2 and "--hostfile" in r.err and "'--backend'" not in r.err, r.err
    assert f"{hf}: \"backend\": 'carrier-pigeon' is an unknown backend" in r.err
