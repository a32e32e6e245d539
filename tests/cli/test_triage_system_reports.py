"""``meshdoctor triage`` on macOS system reports beside the ranks' logs: a jetsam event
(bug_type 298) explains a rank's SIGKILL as macOS killing it for memory, a kernel panic
(bug_type 210) names the panic; both are read from files and DiagnosticReports folders and placed
on the timeline by their time."""

from __future__ import annotations

import json

from tests.helpers import run_cli, validate


def _report(path, bug_type, body):
    header = {
        "bug_type": bug_type,
        "timestamp": "2026-01-05 10:00:04.00 +0100",
        "os_version": "macOS 26.2 (25C56)",
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(body, indent=2))
    return path


JETSAM_BODY = {
    "date": "2026-01-05 10:00:04.50 +0100",
    "largestProcess": "python3.12",
    "processes": [
        {"name": "WindowServer", "pid": 150},
        {"name": "python3.12", "pid": 48213, "reason": "vm-pageshortage"},
    ],
}
PANIC_BODY = {
    "date": "2026-01-05 10:00:03.00 +0100",
    "panicString": "panic(cpu 2 caller 0xfffffe002f8c1234): IOGPUMemory.cpp:550 Assertion "
    "failed: prepare count underflow\nDebugger message: panic\n",
}


def test_a_jetsam_event_explains_a_ranks_sigkill(tmp_path):
    rep = _report(tmp_path / "JetsamEvent-2026-01-05-100004.ips", "298", JETSAM_BODY)
    r = run_cli("triage", str(rep), "--json")
    assert r.rc == 1, r.err
    validate(r.doc)
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD677" and f["first_cause"]
    assert f["line"] == "jetsam killed python3.12[48213] (vm-pageshortage)"
    assert "macOS killed the process for memory" in f["meaning"]
    assert f["time"].startswith("2026-01-05T09:00:04")
    assert f["crash_report"]["killed"] == [
        {"process": "python3.12", "pid": 48213, "reason": "vm-pageshortage"}
    ]


def test_a_jetsam_event_that_killed_no_rank_is_read_without_a_finding(tmp_path):
    body = dict(
        JETSAM_BODY, processes=[{"name": "Safari", "pid": 9, "reason": "per-process-limit"}]
    )
    rep = _report(tmp_path / "JetsamEvent-2026-01-05-100005.ips", "298", body)
    r = run_cli("triage", str(rep), "--json")
    assert r.doc["triage"]["findings"] == [] and "error" not in r.doc["triage"]["inputs"][0]


def test_a_kernel_panic_in_a_diagnostic_reports_folder_is_named(tmp_path):
    d = tmp_path / "DiagnosticReports"
    d.mkdir()
    _report(d / "panic-full-2026-01-05-100003.ips", "210", PANIC_BODY)
    _report(
        d / "Safari-2026-01-05-100003.ips", "210", PANIC_BODY
    )  # not a rank, not a system report
    r = run_cli("triage", "--crash-reports", str(d), "--since", "2d", "--json")
    assert r.rc == 1, r.err
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD676"
    assert "IOGPUMemory" in f["line"] and "wired-memory accounting underflowed" in f["meaning"]
    assert f["time"].startswith("2026-01-05T09:00:03")


def test_a_native_crash_read_from_its_report_does_not_send_the_reader_to_find_it(tmp_path):
    from tests.unit.triage.test_triage import TBT_IPS

    text = TBT_IPS.read_text().replace("tbt_post_recv", "objc_release")
    text = text.replace("libthunderboltrdma.dylib", "libobjc.A.dylib")
    rep = tmp_path / "python3.12-2026-01-05-100004.ips"
    rep.write_text(text)
    r = run_cli("triage", str(rep), "--json")
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD662"
    assert "Find the crash report" not in f["remedy"] and "with this file" in f["remedy"]
