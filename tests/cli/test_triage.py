"""``meshdoctor triage`` through the CLI: exit statuses, multi-rank logs, crash reports, bad input,
what reaches the terminal. (Recognition from a log without the CLI: tests/unit/triage/.)"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from meshdoctor.mlx import exits
from tests.helpers import run_cli, validate
from tests.unit.triage.test_triage import METAL_IPS, REG_MR_IPS, TBT_IPS, _progress_bar


@pytest.mark.parametrize(
    "code,sig,role,words",
    [
        (-15, "MD658", "consequence", "SIGTERM"),
        (-12, "MD658", "either", "SIGUSR2 on Linux"),
        (-9, "MD658", "cause", "out-of-memory"),
        (137, "MD658", "cause", "128 + 9"),
        (139, "MD658", "cause", "SIGSEGV"),
        (255, "MD618", "either", "ssh"),
        (75, "MD622", "consequence", "progress guard"),
        (1, "MD659", "either", "NCCL"),
        (3, "MD664", "either", "no specific meaning"),
        (127, "MD664", "cause", "a job launched without its interpreter exits 127"),
        (126, "MD664", "cause", "could not execute it"),
    ],
)
def test_exit_status_explained(code, sig, role, words):
    e = exits.explain(code)
    assert (e.code_md, e.role) == (sig, role) and words in e.summary
    r = run_cli("triage", "--exit-code", str(code), "--json")
    assert r.rc == 1
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == sig and words in f["meaning"] and f["first_cause"]


def test_launcher_zero_hides_a_failed_rank(tmp_path):
    log = tmp_path / "launch.log"
    log.write_text("\x1b[33m[WARN] Node with rank 1 exited with code 255\x1b[0m\n")
    r = run_cli("triage", str(log), "--exit-code", "0", "--json")
    assert r.rc == 1
    codes = {f["code"]: f for f in r.doc["triage"]["findings"]}
    assert codes["MD657"]["first_cause"] and codes["MD657"]["rank"] == 1
    assert codes["MD657"]["exit"]["signature"] == "MD618"
    assert "must not trust" in codes["MD660"]["meaning"]
    assert codes["MD660"]["consequence_of"] == codes["MD657"]["id"]
    clean = tmp_path / "ok.log"
    clean.write_text("[INFO] rank 0 step 10 loss 1.9\n")
    r = run_cli("triage", str(clean), "--exit-code", "0", "--json")
    assert r.rc == 0 and r.doc["verdict"] == "go" and r.doc["triage"]["findings"] == []


def _three_ranks(d: Path, stamps: bool = True) -> None:
    ts = (
        (lambda s: f"2026-01-05 10:00:{s:02d},{(s * 37) % 1000:03d} ") if stamps else (lambda s: "")
    )
    (d / "rank0.log").write_text(
        f"{ts(1)}INFO runner: init jaccl, world size 3\n"
        f"{ts(5)}ERROR runner: group failed\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/run.py", line 12, in <module>\n'
        "    group = mx.distributed.init(backend='jaccl')\n"
        "RuntimeError: [jaccl] Recv failed with errno=2\n"
    )
    (d / "rank1.log").write_text(
        f"{ts(1)}INFO runner: init jaccl, world size 3\n"
        f"{ts(4)}ERROR runner: RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    )
    (d / "rank2.log").write_text(
        f"{ts(1)}INFO runner: init jaccl, world size 3\n"
        f"{ts(4)}ERROR runner: ValueError: [jaccl] Changing queue pair to RTR failed with "
        "errno 22\n"
    )
    (d / "launch.log").write_text(
        "\x1b[33m[WARN] Node with rank 1 exited with code 1\x1b[0m\n"
        "\x1b[33m[WARN] Node with rank 0 exited with code -15\x1b[0m\n"
        "[WARN] Node with rank 2 exited with code -15\n"
    )


@pytest.mark.parametrize("stamps", [True, False], ids=["timestamps", "file-order"])
def test_three_rank_logs_single_out_the_first_cause(tmp_path, stamps):
    _three_ranks(tmp_path, stamps)
    files = [str(tmp_path / n) for n in ("rank0.log", "rank2.log", "rank1.log", "launch.log")]
    r = run_cli("triage", *files, "--json")
    assert r.rc == 1, r.err
    fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
    (first,) = r.doc["triage"]["first_cause"]
    assert fs[first]["code"] == "MD604" and fs[first]["rank"] == 1
    others = [f for f in fs.values() if f["id"] != first]
    assert {f["code"] for f in others} >= {"MD606", "MD601", "MD657"}
    assert all(f["consequence_of"] == first for f in others), others
    assert r.doc["results"][0]["code"] == "MD604"
    assert "FIRST CAUSE" in r.doc["results"][0]["summary"]
    human = run_cli("triage", *files)
    assert human.rc == 1 and "FIRST CAUSE" in human.out and "consequence of" in human.out


def test_two_equally_early_causes_are_both_named(tmp_path):
    (tmp_path / "rank0.log").write_text(
        "2026-01-05 10:00:04 RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    )
    (tmp_path / "rank1.log").write_text(
        "2026-01-05 10:00:04 RuntimeError: [jaccl] Register memory region failed\n"
    )
    (tmp_path / "rank2.log").write_text("2026-01-05 10:00:06 [jaccl] Recv failed with errno=2\n")
    r = run_cli("triage", *sorted(str(p) for p in tmp_path.iterdir()), "--json")
    fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
    firsts = r.doc["triage"]["first_cause"]
    assert sorted(fs[i]["code"] for i in firsts) == ["MD604", "MD605"]
    recv = next(f for f in fs.values() if f["code"] == "MD606")
    assert recv["consequence_of"] in firsts


def test_crash_report_with_the_thunderbolt_rdma_frame():
    r = run_cli("triage", str(TBT_IPS), "--json")
    assert r.rc == 1, r.err
    (f,) = r.doc["triage"]["findings"]
    c = f["crash_report"]
    assert f["code"] == "MD612" and f["first_cause"]
    assert (c["process"], c["pid"], c["exception_type"], c["signal"]) == (
        "python3.12",
        48213,
        "EXC_BAD_ACCESS",
        "SIGSEGV",
    )
    assert c["faulting_frame"] == {"image": "libthunderboltrdma.dylib", "symbol": "tbt_post_recv"}
    assert c["os"] == "macOS 26.2 (25C56)" and c["mlx_version"] == "0.32.1"
    assert f["time"].startswith("2026-01-05T09:00:04")  # +0100 in the report, UTC here
    assert any("MeshImpl::all_reduce" in x for x in c["top_frames"])
    assert r.doc["needs_reboot"] == ["localhost"]
    human = run_cli("triage", str(TBT_IPS))
    assert "tbt_post_recv" in human.out and "python3.12[48213]" in human.out


def test_crash_reports_ibv_reg_mr_and_metal_abort():
    r = run_cli("triage", str(REG_MR_IPS), str(METAL_IPS), "--json")
    got = {f["code"]: f for f in r.doc["triage"]["findings"]}
    assert got["MD609"]["crash_report"]["faulting_frame"]["symbol"] == "ibv_reg_mr"
    assert "MD661" in got and got["MD661"]["crash_report"]["signal"] == "SIGABRT"


def test_truncated_crash_report_gives_what_it_can_with_a_warning(tmp_path):
    data = TBT_IPS.read_bytes()
    cut = tmp_path / "python3.12-cut.ips"
    cut.write_bytes(data[: data.index(b'"ibv_post_recv"') + 5])
    r = run_cli("triage", str(cut), "--json")
    assert r.rc == 1 and "Traceback" not in r.err
    (f,) = r.doc["triage"]["findings"]
    assert f["code"] == "MD612" and f["crash_report"]["salvaged"] is True
    assert f["crash_report"]["pid"] == 48213 and f["crash_report"]["signal"] == "SIGSEGV"
    warn = [x for x in r.doc["results"] if x["code"] == "MD690" and x["status"] == "warn"]
    assert warn and "truncated or corrupted" in warn[0]["summary"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x00\x01\x02garbage\xff" * 50,
        b'{"bug_type":"309"}\n{not json at all',
        b"[1,2,3]\n[4]",
    ],
    ids=["empty", "binary", "bad-body", "json-not-object"],
)
def test_corrupted_crash_report_never_a_traceback(tmp_path, content):
    p = tmp_path / "python-2026-01-05-100000.ips"
    p.write_bytes(content)
    r = run_cli("triage", str(p), "--json")
    assert r.rc in (1, 3) and "Traceback" not in r.err, r.err
    assert r.doc["triage"]["inputs"][0]["kind"] == "crash-report"


DEEP = "[" * 500_000 + "]" * 500_000  # one .ips body nested 500,000 levels deep


@pytest.mark.parametrize("header", ['{"bug_type":"309"}\n', ""], ids=["body", "header"])
@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_deeply_nested_crash_report_costs_that_report_only(tmp_path, header, where):
    d = tmp_path / "DiagnosticReports"
    d.mkdir()
    deep = d / "python3.12-2026-01-05-100000.ips"
    deep.write_text(header + DEEP)
    shutil.copy(TBT_IPS, d / TBT_IPS.name)
    args = [str(deep), str(d / TBT_IPS.name)] if where == "file" else ["--crash-reports", str(d)]
    r = run_cli("triage", *args, "--since", "3650d", "--json")
    assert r.rc == 1, r.outcome()  # the good report's finding is still there
    assert "RecursionError" not in r.out + r.err and not r.results("MD100"), r.outcome()
    codes = [f["code"] for f in r.doc["triage"]["findings"]]
    assert "MD612" in codes, codes
    named = [x for x in r.results("MD690") if str(deep) in x["summary"]]
    assert named and named[0]["status"] in ("warn", "error"), r.outcome()
    assert "nested too deeply" in named[0]["summary"], named


def test_crash_report_folder_filtered_by_process_and_since(tmp_path):
    d = tmp_path / "DiagnosticReports"
    d.mkdir()
    shutil.copy(TBT_IPS, d / TBT_IPS.name)
    old = d / "python3.12-2025-12-01-100000.ips"
    shutil.copy(REG_MR_IPS, old)
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    shutil.copy(METAL_IPS, d / "Safari-2026-01-05-120000.ips")
    r = run_cli("triage", "--crash-reports", str(d), "--since", "2d", "--json")
    assert r.rc == 1
    assert [i["source"] for i in r.doc["triage"]["inputs"]] == [str(d / TBT_IPS.name)]
    r = run_cli("triage", "--crash-reports", str(d), "--since", "4d", "--json")
    assert len(r.doc["triage"]["inputs"]) == 2
    r = run_cli("triage", "--crash-reports", str(tmp_path / "nope"), "--json")
    assert r.rc == 3


def test_stdin_clean_input_is_go():
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "meshdoctor", "triage", "-", "--json"],
        input=b"[INFO] rank 0 step 1 loss 2.0\n" * 100,
        capture_output=True,
        timeout=60,
    )
    doc = json.loads(p.stdout)
    validate(doc)
    assert p.returncode == 0 and doc["verdict"] == "go"
    assert doc["triage"]["inputs"][0] == {
        **doc["triage"]["inputs"][0],
        "source": "<stdin>",
        "lines": 100,
    }


def test_usage_and_unreadable_inputs(tmp_path):
    r = run_cli("triage")
    assert r.rc == 2 and "nothing to triage" in r.err
    r = run_cli("triage", "--since", "soon", "-")
    assert r.rc == 2
    r = run_cli("triage", str(tmp_path / "missing.log"), "--json")
    assert r.rc == 3 and r.doc["verdict"] == "unknown"
    assert "cannot read" in r.doc["results"][0]["summary"]


def test_binary_input_has_a_clear_message_and_a_verdict(tmp_path):
    p = tmp_path / "core.bin"
    p.write_bytes(
        bytes(range(256)) * 64 + b"\nRuntimeError: [ring] Couldn't connect "
        b"(error: 111)\n" + b"\xff\xfe\x00" * 100
    )
    r = run_cli("triage", str(p), "--json")
    assert r.rc == 1 and "Traceback" not in r.err
    warn = next(x for x in r.doc["results"] if x["code"] == "MD690" and x["status"] == "warn")
    assert "looks binary" in warn["summary"]
    human = run_cli("triage", str(p))
    assert human.rc == 1 and "\x00" not in human.out


def test_control_characters_never_reach_the_terminal(tmp_path):
    p = tmp_path / "rank0.log"
    p.write_bytes(
        b"\x1b]0;owned\x07RuntimeError: [ring] Couldn't connect (error: 111)\x08\x08"
        b"\x1b[2J [bold red]markup[/]\r\n"
    )
    r = run_cli("triage", str(p))
    assert r.rc == 1
    assert not any(c in r.out for c in "\x07\x08\x1b\r"), repr(r.out)
    assert "[bold red]markup[/]" in r.out and "\\x08" in r.out


def test_error_after_progress_bar_on_one_line_is_found(tmp_path):
    """~150 KB of \\r progress and then the error on the same line: a terminal shows the error
    as its own line; triage matches it there and says no-go."""
    p = tmp_path / "rank1.log"
    p.write_text(_progress_bar(150_000) + "\r[jaccl] Recv failed with errno=2\n")
    r = run_cli("triage", str(p), "--json")
    assert r.rc == 1, r.out
    doc = json.loads(r.out)
    assert doc["verdict"] == "no-go"
    f = next(f for f in doc["triage"]["findings"] if f["code"] == "MD606")
    assert f["line"] == "[jaccl] Recv failed with errno=2"
    assert not any("cut" in w for i in doc["triage"]["inputs"] for w in i.get("warnings", []))
    r = run_cli("triage", str(p))
    assert r.rc == 1 and "NO-GO" in r.out and "jaccl.recv-errno-2" in r.out


@pytest.mark.parametrize("value", ["99999999999999999999", "256", "-65"])
def test_exit_code_is_bounded_to_what_an_exit_status_can_be(value):
    r = run_cli("triage", "--exit-code", value)
    assert r.rc == 2 and "-64<=x<=255" in r.err, (r.out, r.err)


def test_exit_code_of_a_signal_is_accepted():
    r = run_cli("triage", "--exit-code", "-15", "--json")
    assert r.rc == 1 and r.doc["verdict"] == "no-go"


def test_a_pipe_is_read_when_no_file_is_named():
    """`... | meshdoctor triage --exit-code 0` (no `-`): the pipe is read, the failed rank named."""
    r = run_cli(
        "triage",
        "--exit-code",
        "0",
        "--json",
        input="[WARN] Node with rank 1 exited with code 255\n",
    )
    assert r.rc == 1, r.outcome()
    codes = {f["code"]: f for f in r.doc["triage"]["findings"]}
    assert codes["MD657"]["first_cause"] and codes["MD657"]["rank"] == 1, r.outcome()
    assert [i["source"] for i in r.doc["triage"]["inputs"]][0] == "<stdin>"


def test_nothing_read_is_not_a_go(tmp_path):
    """An empty log, an empty pipe, or only --exit-code 0 (which proves nothing: MD660) is
    exit 3 "nothing to read", never GO."""
    empty = tmp_path / "empty.log"
    empty.write_text("")
    for args, stdin in (
        ([str(empty)], None),
        (["--exit-code", "0"], None),
        ([str(empty), "--exit-code", "0"], None),
        ([], ""),
    ):
        r = run_cli("triage", *args, "--json", input=stdin)
        assert r.rc == 3 and r.doc["verdict"] == "unknown", (args, r.outcome())
        (e,) = [x for x in r.results("MD690") if x["status"] == "error"]
        assert e["summary"].startswith("nothing to read"), (args, r.outcome())
    r = run_cli("triage", "--exit-code", "0")
    assert r.rc == 3 and "nothing to read" in r.out and "proves nothing" in r.out, r.out


@pytest.mark.parametrize("source", ["device", "stdin"])
def test_a_device_is_read_up_to_the_stated_cap_and_not_assessed_past_it(source, clean_env):
    """A device may never end: reading stops at the cap and the verdict is unknown (exit 3,
    "not assessed past 1 GiB"), never a go."""
    import subprocess
    import sys

    from meshdoctor.triage.collect import STREAM_MAX_BYTES

    line = f"{sys.executable} -m meshdoctor triage --json /dev/zero"
    if source == "stdin":
        line = f"{sys.executable} -m meshdoctor triage --json - < /dev/zero"
    p = subprocess.run(
        ["bash", "-c", f"timeout 300 {line}"],
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=330,
    )
    assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["verdict"] == "unknown"
    (inp,) = doc["triage"]["inputs"]
    assert inp["bytes"] == STREAM_MAX_BYTES, inp
    (e,) = [x for x in doc["results"] if x["code"] == "MD690" and x["status"] == "error"]
    assert f"not assessed past {STREAM_MAX_BYTES >> 30} GiB" in e["summary"], e


def test_a_pipe_is_read_to_its_end_past_the_device_cap(clean_env):
    """``job | meshdoctor triage`` reads the whole pipe (bounded memory): the job's writes
    never meet a closed pipe (SIGPIPE, exit 141), and the error at its very end is found."""
    import subprocess
    import sys

    from meshdoctor.triage.collect import STREAM_MAX_BYTES

    n = STREAM_MAX_BYTES + (64 << 20)
    err = "RuntimeError: [jaccl] Recv failed with errno=104"
    job = f"{{ yes 'step 1 loss 2.31 tokens/s 4012' | head -c {n}; echo '{err}'; }}"
    p = subprocess.run(
        [
            "bash",
            "-c",
            f"{job} | timeout 600 {sys.executable} -m meshdoctor triage --json -;"
            ' echo "pipestatus ${PIPESTATUS[*]}" >&2',
        ],
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=660,
    )
    assert "pipestatus 0 1" in p.stderr, p.stderr[-2000:]  # the job 0, triage no-go
    doc = json.loads(p.stdout)
    validate(doc)
    (inp,) = doc["triage"]["inputs"]
    assert inp["bytes"] == n + len(err) + 1 and not inp["warnings"], inp
    assert doc["verdict"] == "no-go" and doc["triage"]["first_cause"], doc["triage"]["first_cause"]


def test_a_fifo_nobody_writes_to_ends_at_the_stated_wait(tmp_path, clean_env):
    from meshdoctor.triage.collect import WRITER_WAIT_S

    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    r = run_cli("triage", str(fifo), "--exit-code", "1", "--json", env=clean_env, timeout=300)
    assert r.rc == 1, r.outcome()  # the exit status still explains the failure
    said = [x for x in r.results("MD690") if str(fifo) in x["summary"]]
    assert said and f"a FIFO nobody wrote to within {WRITER_WAIT_S:g} s" in said[0]["summary"]


def test_a_fifo_with_a_writer_is_read(tmp_path, clean_env):
    import subprocess

    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    line = "RuntimeError: [jaccl] Recv failed with errno=104"
    writer = subprocess.Popen(["bash", "-c", f"sleep 1; echo '{line}' > {fifo}"])
    try:
        r = run_cli("triage", str(fifo), "--json", env=clean_env, timeout=300)
    finally:
        writer.kill()
        writer.wait()
    assert r.doc["triage"]["inputs"][0]["bytes"] == len(line) + 1, r.outcome()
    assert r.doc["triage"]["findings"], r.outcome()


def test_triage_hostfile_with_127_0_0_1_entries_reads_the_named_local_file_here(
    tmp_path, clean_env
):
    # mlx.launch runs 127.0.0.1 without ssh (MLX 0.32.4 launch.py): triage reads it here too
    log = tmp_path / "job.log"
    log.write_text("step 1\nRuntimeError: [jaccl] Recv failed with errno=104\n")
    hf = tmp_path / "h.json"
    hf.write_text(json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2))
    r = run_cli(
        "triage", "--hostfile", str(hf), str(log), "--exit-code", "0", "--json", env=clean_env
    )
    assert r.rc == 1, r.outcome()  # the log's failure, read here
    sources = [i["source"] for i in r.doc["triage"]["inputs"]]
    assert str(log) in sources, sources
    assert [h["host"] for h in r.doc["hosts"]] == ["127.0.0.1"], r.doc["hosts"]
    assert "ssh" not in json.dumps(r.doc["results"]).lower(), r.outcome()


def test_triage_hostfile_reads_a_named_file_that_exists_here_as_well(tmp_path, clean_env):
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: [jaccl] Recv failed with errno=104\n")
    hf = tmp_path / "h.json"
    hf.write_text(json.dumps([{"ssh": "ghost-h1.invalid", "ips": ["10.0.0.2"]}]))
    r = run_cli("triage", "--hostfile", str(hf), str(log), "--json", env=clean_env, timeout=300)
    sources = [i["source"] for i in r.doc["triage"]["inputs"]]
    assert str(log) in sources, sources  # read here; the ghost host is reported unreachable
    assert [h["host"] for h in r.doc["hosts"]] == ["ghost-h1.invalid"]


def test_an_interrupted_triage_json_keeps_what_it_had_read(tmp_path, clean_env):
    import signal
    import subprocess
    import sys

    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: [jaccl] Recv failed with errno=104\n")
    fifo = tmp_path / "rank1.log"
    os.mkfifo(fifo)  # nobody writes: triage waits on it
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", "triage", str(log), str(fifo), "--json"],
        env=clean_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        t_end = time.monotonic() + 60
        while time.monotonic() < t_end and p.poll() is None:
            try:
                fds = [
                    os.readlink(f"/proc/{p.pid}/fd/{n}") for n in os.listdir(f"/proc/{p.pid}/fd")
                ]
            except OSError:
                fds = []
            if str(fifo) in fds:
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 1, (out[-2000:], err[-2000:])  # the finding read before it counts
    doc = json.loads(out)
    validate(doc)
    assert [f["code"] for f in doc["triage"]["findings"]], doc["triage"]
    stop = [x for x in doc["results"] if x["code"] == "MD690" and x["status"] == "error"]
    assert stop and str(fifo) in stop[0]["summary"], doc["results"]
    assert "interrupted by SIGINT while reading it" in stop[0]["summary"]


def test_a_cut_crash_report_says_so_and_claims_nothing_it_cannot_read(tmp_path):
    # reported: a header-only .ips gave "crashed with crash" and no truncation warning; a
    # truncated one printed `SIGSEGV in  tbt_post_recv` (the missing image left two spaces)
    text = Path(TBT_IPS).read_text()
    header = tmp_path / "python3.12-2026-01-05-100004.ips"
    header.write_text(text.split("\n", 1)[0] + "\n")
    r = run_cli("triage", str(header))
    assert "crashed with crash" not in r.out and "[?]" not in r.out
    assert "only its header line" in r.out and "truncated" in r.out
    assert "cut before the exception" in r.out
    cut = tmp_path / "python3.12-2026-01-05-110200.ips"
    cut.write_text(text[: len(text) * 2 // 3])
    r = run_cli("triage", str(cut), "--json")
    lines = [f["summary"] for f in r.doc["results"] if f["code"] != "MD690"]
    assert lines and not [ln for ln in lines if " in  " in ln], lines
    assert any("truncated or corrupted body" in f["summary"] for f in r.results("MD690"))


def test_a_consequence_is_one_line_and_the_first_cause_has_the_causes_in_full(tmp_path):
    # reported: triage repeated every finding's full "Known causes" list
    log = tmp_path / "rank0.log"
    log.write_text(
        "2026-01-05 10:00:01 [ring] Too many send/recv errors. Aborting\n"
        "2026-01-05 10:00:02 [ring] Socket 5 was closed by the peer\n"
    )
    r = run_cli("triage", str(log))
    assert r.rc == 1, r.out
    assert r.out.count("Known causes") == 1
    # only a survivor's echoes were read: the first of them is "first seen", not a cause
    first = r.out.index("FIRST SEEN (an echo: its cause is in a log not given, or in none)")
    assert first < r.out.index("Known causes, most common first") < r.out.index("consequence of")
    assert "→ Fix F1 first: this follows from it" in r.out


def test_nccl_network_failures_and_a_metal_fence_timeout_are_named(tmp_path):
    # public inputs: NCCL net_ib.cc's completion error (status 12, IBV_WC_RETRY_EXC_ERR) with
    # the peer and HCA named, NCCL's socket closed by the peer, MLX's "[Fence::wait] Timed
    # out" (exo #2208, #2173); the generic "NCCL WARN: read it" gives way to the specific one
    log = tmp_path / "ranks.log"
    log.write_text(
        "2026-01-05 10:00:01 node1:2345:2400 [0] NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.2<55034> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
        "::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0\n"
        "2026-01-05 10:00:02 node2:1234:1300 [1] NCCL WARN Net : Connection closed by remote "
        "peer 10.0.0.1<40123>\n"
        "2026-01-05 10:00:03 libc++abi: terminating due to uncaught exception of type "
        "std::runtime_error: [Fence::wait] Timed out\n"
    )
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1
    codes = [x["code"] for x in r.doc["results"] if x["code"] != "MD690"]
    assert codes[0] == "MD685" and "MD653" not in codes, codes
    assert {"MD686", "MD678"} <= set(codes)
    (ib,) = r.results("MD685")
    assert "IBV_WC_RETRY_EXC_ERR" in ib["summary"] and "on HCA mlx5_0" in ib["summary"]
    assert "FIRST CAUSE" in ib["summary"]
    human = run_cli("triage", str(log))
    assert "node2:1234:1300" in human.out  # as written: no emoji code turned into a picture


def test_an_applications_address_in_use_traceback_points_at_the_port_checks(tmp_path):
    # a job's own server failing to bind (Python's socket.bind, errno 98 / 48 on macOS) was the
    # generic Python exception; it is a port held by a leftover (MD301) or taken (MD408)
    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "server.py", line 10, in <module>\n'
        '    httpd = HTTPServer(("", 8080), H)\n'
        "OSError: [Errno 98] Address already in use\n"
    )
    r = run_cli("triage", str(log), "--json")
    (f,) = r.results("MD679")
    assert "FIRST CAUSE" in f["summary"] and not r.results("MD663")
    assert f["remediation"]["command"] == "meshdoctor check --only MD301"
    assert "--only MD408" in f["remediation"]["text"]
