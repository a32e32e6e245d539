"""``meshdoctor triage`` on macOS system reports beside the ranks' logs: a jetsam event
(bug_type 298) explains a rank's SIGKILL as macOS killing it for memory, a kernel panic
(bug_type 210) names the panic, a GPU restart report (284) makes a rank's Metal errors after it
its consequences, an EXC_RESOURCE report (385) or a crash of type EXC_RESOURCE says whether the
process was killed for its limit; all are read from files and DiagnosticReports folders and
placed on the timeline by their time."""

from __future__ import annotations

import json

from tests.helpers import run_cli, validate


def _report(path, bug_type, body, **header_fields):
    header = {
        "bug_type": bug_type,
        "timestamp": "2026-01-05 10:00:04.00 +0100",
        "os_version": "macOS 26.2 (25C56)",
        "incident_id": "8C2D3E4F-0000-4000-8000-00000000000A",
        **header_fields,
    }
    text = body if isinstance(body, str) else json.dumps(body, indent=2)
    path.write_text(json.dumps(header) + "\n" + text)
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


# GPU restart (284) and resource (385) reports have no published body layout: the tests give
# both a JSON body and a "Key: value" text body, the two shapes triage reads.
GPU_BODY = {
    "date": "2026-01-05 10:00:03.10 +0100",
    "procName": "python3.12",
    "pid": 48213,
    "reason": "GPU hang",
}
GPU_TEXT = "Date/Time:  2026-01-05 10:00:03.10 +0100\nEvent:      GPU restart\n"
METAL_LOG = (
    "2026-01-05 10:00:03,400 +0100 rank1: [METAL] Command buffer execution failed: Insufficient "
    "Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
)
WAKEUPS_TEXT = """Date/Time:        2026-01-05 10:00:02.000 +0100
End time:         2026-01-05 10:00:02.500 +0100
OS Version:       macOS 26.2 (Build 25C56)
Report Version:   48

Command:          python3.12
Path:             /opt/homebrew/bin/python3.12
PID:              48213

Event:            wakeups
Action taken:     none
Wakeups:          45001 wakeups over the last 279 seconds (161 wakeups per second average), \
exceeding limit of 150 wakeups per second over 300 seconds
Wakeups limit:    45000
Limit duration:   300s
""".replace("\\\n", "")


def test_a_gpu_restart_report_makes_a_ranks_metal_error_after_it_a_consequence(tmp_path):
    rep = _report(tmp_path / "GPURestart-2026-01-05-100003.ips", "284", GPU_BODY)
    log = tmp_path / "rank1.log"
    log.write_text(METAL_LOG)
    r = run_cli("triage", str(log), str(rep), "--json")
    assert r.rc == 1, r.err
    validate(r.doc)
    first, metal = r.doc["triage"]["findings"]
    assert first["code"] == "MD693" and first["first_cause"]
    assert first["time"].startswith("2026-01-05T09:00:03.1")
    assert first["line"] == "GPU restart (GPU hang) while python3.12[48213] ran"
    assert "macOS restarted it" in first["meaning"] and "python3.12[48213]" in first["meaning"]
    c = first["crash_report"]
    assert c["bug_type"] == "284" and c["incident_id"].endswith("00A")
    assert "no published layout" in c["read"]
    assert metal["code"] == "MD661" and metal["consequence_of"] == first["id"]
    human = run_cli("triage", str(log), str(rep))
    assert "FIRST CAUSE" in human.out and "GPU restart (GPU hang)" in human.out
    assert "consequence of F1 (macos.gpu-restart" in human.out


def test_a_gpu_restart_report_with_a_text_body_named_otherwise_is_read_by_its_header(tmp_path):
    rep = _report(tmp_path / "gpu-event.txt", "284", GPU_TEXT, name="GPURestart")
    r = run_cli("triage", str(rep), "--json")
    assert r.rc == 1, r.err
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD693" and f["line"] == "GPU restart"
    assert f["time"].startswith("2026-01-05T09:00:03.1")
    assert r.doc["triage"]["inputs"][0]["kind"] == "crash-report"


def test_reports_in_a_diagnostic_reports_folder_include_gpu_restarts_and_resources(tmp_path):
    d = tmp_path / "DiagnosticReports"
    d.mkdir()
    _report(d / "GPURestart-2026-01-05-100003.ips", "284", GPU_BODY)
    _report(d / "python3.12_2026-01-05-100002_Mac.wakeups_resource.ips", "385", WAKEUPS_TEXT)
    _report(d / "Safari-2026-01-05-100003.ips", "284", GPU_BODY)  # not collected by name
    r = run_cli("triage", "--crash-reports", str(d), "--since", "2d", "--json")
    assert r.rc == 1, r.err
    got = [(f["code"], f["time"][:19]) for f in r.doc["triage"]["findings"]]
    assert got == [("MD694", "2026-01-05T09:00:02"), ("MD693", "2026-01-05T09:00:03")]
    assert len(r.doc["triage"]["inputs"]) == 2


def test_an_exc_resource_wakeups_report_is_a_warning_not_a_kill(tmp_path):
    rep = _report(tmp_path / "python3.12_2026-01-05-100002.ips", "385", WAKEUPS_TEXT)
    r = run_cli("triage", str(rep), "--json")
    validate(r.doc)
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD694" and f["role"] == "either"
    assert f["line"] == (
        "python3.12[48213] EXC_RESOURCE wakeups (limit 150 wakeups per second over 300 "
        "seconds): not killed"
    )
    assert "the process was not killed" in f["meaning"] and "action taken: none" in f["meaning"]
    c = f["crash_report"]
    assert (c["resource"], c["killed"], c["pid"]) == ("wakeups", False, 48213)
    assert "Find the crash report" not in f["remedy"]


def test_an_exc_resource_report_of_another_process_gives_no_finding(tmp_path):
    text = WAKEUPS_TEXT.replace("python3.12", "Safari")
    rep = _report(tmp_path / "Safari_2026-01-05-100002.ips", "385", text)
    r = run_cli("triage", str(rep), "--json")
    assert r.doc["triage"]["findings"] == []
    (inp,) = r.doc["triage"]["inputs"]
    assert "error" not in inp and any("not an MLX rank" in w for w in inp["warnings"])


def test_a_crash_of_type_exc_resource_memory_reads_as_killed_for_memory(tmp_path):
    from tests.unit.triage.test_triage import TBT_IPS

    head, body = TBT_IPS.read_text().split("\n", 1)
    doc = json.loads(body)
    doc["exception"] = {
        "codes": "0x0000000000001000, 0x0000000000001800",
        "type": "EXC_RESOURCE",
        "subtype": "MEMORY",
        "message": "(limit=6144 MB) Crossed hard memory limit",
    }
    doc.pop("termination")
    rep = tmp_path / "python3.12-2026-01-05-100004.ips"
    rep.write_text(head + "\n" + json.dumps(doc))
    r = run_cli("triage", str(rep), "--json")
    assert r.rc == 1, r.err
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD694" and f["first_cause"]
    assert f["line"] == "python3.12[48213] EXC_RESOURCE memory (limit 6144 MB): killed"
    assert "killed by macOS for going over its memory limit" in f["meaning"]
    assert (
        f["crash_report"]["killed"] is True and f["crash_report"]["exception_subtype"] == "MEMORY"
    )
    human = run_cli("triage", str(rep))
    assert "killed by macOS for going over its memory limit" in human.out
    assert "native crash" not in human.out
    # beside mlx.launch's line for that rank's SIGKILL, the report is the first cause
    log = tmp_path / "launch.log"
    log.write_text("[WARN] Node with rank 1 exited with code -9\n")
    r = run_cli("triage", str(log), str(rep), "--json")
    first, kill = r.doc["triage"]["findings"]
    assert (first["code"], first["role"], first["first_cause"]) == ("MD694", "cause", True)
    assert kill["code"] == "MD657" and kill["consequence_of"] == first["id"]


GENERIC = ("Find the crash report", "Look for a crash report", "DiagnosticReports/*.ips")


def test_no_finding_from_a_crash_report_sends_the_reader_to_find_one(tmp_path):
    from tests.unit.triage.test_triage import METAL_IPS, REG_MR_IPS, TBT_IPS

    cut = tmp_path / "python3.12-2026-01-05-100009.ips"
    cut.write_text(TBT_IPS.read_text().split("\n", 1)[0] + "\n")  # its header line only
    native = tmp_path / "python3.12-2026-01-05-100008.ips"
    native.write_text(TBT_IPS.read_text().replace("tbt_post_recv", "objc_release"))
    reports = [
        TBT_IPS,
        REG_MR_IPS,
        METAL_IPS,
        cut,
        native,
        _report(tmp_path / "JetsamEvent-2026-01-05-100004.ips", "298", JETSAM_BODY),
        _report(tmp_path / "panic-full-2026-01-05-100003.ips", "210", PANIC_BODY),
        _report(tmp_path / "GPURestart-2026-01-05-100003.ips", "284", GPU_BODY),
        _report(tmp_path / "python3.12_2026-01-05-100002.ips", "385", WAKEUPS_TEXT),
    ]
    r = run_cli("triage", *map(str, reports), "--json")
    found = r.doc["triage"]["findings"]
    codes = {f["code"] for f in found}
    assert {"MD612", "MD609", "MD661", "MD662", "MD677", "MD676", "MD693", "MD694"} <= codes
    assert all("crash_report" in f for f in found)
    for f in found:
        assert not any(g in f["remedy"] for g in GENERIC), (f["code"], f["remedy"])
    human = run_cli("triage", *map(str, reports))
    assert not any(g in human.out for g in GENERIC), human.out
