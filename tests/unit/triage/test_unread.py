"""MD883: an error line no signature reads, only when nothing else was found."""

from __future__ import annotations

from meshdoctor.triage import unread
from meshdoctor.triage.findings import Input


def _log(text: str, name: str = "node.log") -> Input:
    return Input(source=name, head=text, tail=text, lines=text.count("\n"))


def test_an_unknown_programs_error_line_is_the_finding_with_its_tag():
    inp = _log(
        "2026-01-05 10:00:01 frobd starting\n"
        "E0105 10:00:04.000001 4242 frob_link.cc:88] link setup refused by frob0\n"
        "2026-01-05 10:00:05 frobd ERROR: giving up\n"
    )
    (f,) = unread.readings([inp], [])
    assert f.code == "MD883" and f.match.lineno == 2 and f.count == 2
    assert "printed at frob_link.cc:88" in f.match.meaning
    assert "1 more error line after it" in f.match.meaning


def test_info_lines_and_zero_error_counts_are_not_errors():
    inp = _log(
        "host:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
        "I0105 10:00:04.000001 4242 x.cc:1] retry failed once, fine\n"
        "# Out of bounds values : 0 OK\n"
        "validation: 0 errors\n"
        "errors: 0\n"
    )
    assert unread.readings([inp], []) == []


def test_nothing_when_another_finding_exists():
    from tests.unit.triage.test_triage import triage_bytes

    doc = triage_bytes(b"RuntimeError: [jaccl] Recv failed with errno=2\nfrobd ERROR: x\n")
    assert "MD883" not in [f["code"] for f in doc["triage"]["findings"]]


def test_a_logged_traceback_without_its_exception_names_the_innermost_frame():
    inp = _log(
        'ERROR 10-15 09:00:49 [x.py:6]   File "/srv/a.py", line 3, in main\n'
        "ERROR 10-15 09:00:49 [x.py:6]     run()\n"
        'ERROR 10-15 09:00:49 [x.py:6]   File "/srv/b.py", line 9, in run\n'
        "ERROR 10-15 09:00:49 [x.py:6]     dist.init_process_group('nccl')\n"
    )
    (f,) = unread.readings([inp], [])
    assert "innermost frame is /srv/b.py:9 in run" in f.match.meaning
    assert "at `dist.init_process_group('nccl')`" in f.match.meaning
    assert "a cut inside init_process_group" in f.match.meaning


def test_a_job_that_exited_0_is_not_failed_by_an_unread_error_line(tmp_path):
    from tests.helpers import run_cli

    log = tmp_path / "node.log"
    log.write_text("worker started\nfrobd ERROR: optional plugin missing, continuing\ndone\n")
    r = run_cli("triage", str(log), "--exit-code", "0", "--json")
    assert r.rc == 0 and "MD883" not in [f["code"] for f in r.doc["triage"]["findings"]]
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1 and [f["code"] for f in r.doc["triage"]["findings"]] == ["MD883"]


def test_a_bare_gdb_backtrace_names_its_first_frame_that_is_not_the_systems():
    inp = _log(
        "#0  __memcpy_avx512_unaligned_erms ()\n"
        "    at ../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:265\n"
        "#1  engine::CopyPool::worker ()\n"
        "    from /srv/venv/lib/python3.12/site-packages/engine/store.so\n"
        "#2  start_thread\n"
    )
    (f,) = unread.readings([inp], [])
    assert f.match.lineno == 3
    assert "is engine::CopyPool::worker (in store.so)" in f.match.meaning


def test_the_line_it_quotes_is_shown_without_terminal_escapes():
    inp = _log("frobd ERROR: bad \x1b[31mred\x1b[0m thing\n")
    (f,) = unread.readings([inp], [])
    assert "\x1b" not in f.match.meaning and "\x1b" not in f.match.line


def test_a_line_ending_in_a_system_error_is_an_error_line_that_names_it():
    """No level word and no 'failed': the strerror words alone make it an error line, and
    the finding says what that errno usually means and what to run."""
    inp = _log(
        "2026-01-05 10:00:01 uploader: starting\n"
        "uploader: write /data/ckpt/shard3: No space left on device\n"
    )
    (f,) = unread.readings([inp], [])
    assert f.match.lineno == 2
    assert "ENOSPC ('No space left on device')" in f.match.meaning
    assert "df -h PATH /tmp /dev/shm" in f.match.meaning


def test_an_error_line_holding_a_python_message_names_the_programs_own_mistake():
    """A program that catches an exception and logs str(exc) prints CPython's message without
    its class: the finding names the class and reads it as the program's bug."""
    inp = _log(
        "2025-06-01 12:00:00,120 - engine - INFO - request 7 started\n"
        "2025-06-01 12:00:00,123 - engine - ERROR - Failed to generate: list index out of range\n"
    )
    (f,) = unread.readings([inp], [])
    assert f.match.lineno == 2
    assert "'list index out of range' is Python's IndexError message" in f.match.meaning
    assert "not the mesh" in f.match.meaning and "issue tracker" in f.match.meaning
