"""Identical lines are counted, not matched again (meshdoctor.triage.logs): the findings, their
counts, line numbers and the first cause are what matching every line gives."""

from __future__ import annotations

import pytest

from meshdoctor.triage import logs
from tests.unit.triage.test_triage import triage_bytes

RECV = b"RuntimeError: [jaccl] Recv failed with errno=2\n"


def without_memo(monkeypatch, data: bytes, chunk: int):
    """The triage document of ``data`` with every line matched (no memo, no runs counted)."""
    with monkeypatch.context() as m:
        m.setattr(logs, "MEMO_LINE_BYTES", -1)
        m.setattr(logs, "CHUNK", chunk)
        return triage_bytes(data)


def same(a, b):
    for d in (a, b):
        d.pop("started_at", None)
        d.pop("duration_s", None)
    return a == b


def test_200000_repeated_lines_give_one_first_cause_counted_200000_times():
    doc = triage_bytes(RECV * 200_000)
    (f,) = doc["triage"]["findings"]
    assert (f["code"], f["line_number"], f["count"], f["first_cause"]) == (
        "MD606",
        1,
        200_000,
        True,
    )
    assert doc["triage"]["first_cause"] == [f["id"]] and doc["verdict"] == "no-go"
    assert doc["triage"]["inputs"][0]["lines"] == 200_000


MIXED = (
    b"2026-01-05 10:00:00,000 INFO runner: step 1\n"
    + b"[rank 0] RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    + RECV * 3000
    + b"[rank 2] RuntimeError: [jaccl] Recv failed with errno=2\n" * 7
    + RECV * 5
    + b"Traceback (most recent call last):\n"
    + b'  File "train.py", line 3, in <module>\n'
    + b"RuntimeError: [jaccl] Recv failed with errno=2\n"
    + RECV * 11
    + b"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
    + RECV * 2
    + b"0 libthunderboltrdma.dylib 0x1 tbt_post_recv + 44\n"
    + (b"[ring] Socket 4 was closed by the peer\n" + RECV) * 400
    + b"last line without an end "
    + RECV.strip()
)


@pytest.mark.parametrize("chunk", [4 << 20, 4096, 61], ids=["one-block", "4KiB", "61B"])
def test_counting_repeats_gives_what_matching_every_line_gives(monkeypatch, chunk):
    """Runs, interleaved ranks, a traceback and a crash record amid the copies, block edges
    inside a run: the same document as matching every line."""
    monkeypatch.setattr(logs, "CHUNK", chunk)
    got = triage_bytes(MIXED)
    want = without_memo(monkeypatch, MIXED, chunk)
    assert same(got, want)
    counts = {(f["code"], f["rank"]): f["count"] for f in got["triage"]["findings"]}
    assert counts[("MD606", 2)] == 7 and counts[("MD606", 1)] == 3000 + 5 + 1 + 11 + 2 + 400 + 1


def test_memo_stays_bounded(monkeypatch):
    monkeypatch.setattr(logs, "MEMO_LINES", 8)
    data = b"".join(b"rank 1: [ring] Socket %d was closed by the peer\n" % i for i in range(100))
    got = triage_bytes(data * 3)
    assert same(got, without_memo(monkeypatch, data * 3, logs.CHUNK))
    assert got["triage"]["findings"][0]["count"] == 300


def stamped(n: int) -> bytes:
    """``n`` survivor lines, each behind a fresh timestamp, ranks 0-3 in turn, a traceback
    and a timestamp-only line in the middle (what exo-style runners write every step)."""
    out = []
    for i in range(n):
        out.append(
            b"2026-01-05 10:%02d:%02d,%03d ERROR rank %d: RuntimeError: [jaccl] Recv failed "
            b"with errno=2\n" % (i // 60000 % 60, i // 1000 % 60, i % 1000, i % 4)
        )
        if i == n // 2:
            out.append(b"[2026-01-05T10:00:09.5Z] Traceback (most recent call last):\n")
            out.append(b'  File "train.py", line 3, in <module>\n')
            out.append(b"RuntimeError: [jaccl] Recv failed with errno=2\n")
            out.append(b"2026-01-05 10:00:09,600\n")
    return b"".join(out)


@pytest.mark.parametrize("chunk", [4 << 20, 4096], ids=["one-block", "4KiB"])
def test_lines_that_differ_only_in_their_timestamp_are_counted_as_matching_gives(
    monkeypatch, chunk
):
    """The memo knows a line without its opening timestamp: the first line, time and last
    line of each rank's finding and every count are what matching every line gives."""
    monkeypatch.setattr(logs, "CHUNK", chunk)
    data = stamped(2000)
    got = triage_bytes(data)
    assert same(got, without_memo(monkeypatch, data, chunk))
    firsts = {f["rank"]: (f["line_number"], f["time"]) for f in got["triage"]["findings"]}
    assert firsts[3] == (4, "2026-01-05T10:00:00.003000+00:00")
    assert sum(f["count"] for f in got["triage"]["findings"]) == 2001


def test_memo_key_drops_only_an_opening_timestamp():
    assert logs.memo_key(b"2026-01-05 10:00:04,120 ERROR rank 1: x") == b" ERROR rank 1: x"
    assert logs.memo_key(b"[2026-01-05T10:00:04.5Z] x") == b" x"
    assert logs.memo_key(b"rank 1 at 2026-01-05 10:00:04: x") == b"rank 1 at 2026-01-05 10:00:04: x"


def survivors(n: int, seed: int = 7) -> bytes:
    """``n`` survivor lines that differ in more than their timestamp: a rank prefix, a pid, a
    step counter, hex addresses, several messages whose digits name the signature (errno=2,
    errno=60, errno=6; RTR errno 22 and 96), a launcher line naming another rank, long lines
    whose shown part loses the prefix; amid them a traceback, a crash record with a crash
    report's header, coloured lines, runner output, more than MAX_FINDINGS distinct findings."""
    import random

    rnd = random.Random(seed)
    msgs = [
        "RuntimeError: [jaccl] Recv failed with errno=%d" % 2,
        "RuntimeError: [jaccl] Recv failed with errno={e}",
        "[ring] Socket {s} was closed by the peer",
        "ValueError: [jaccl] Changing queue pair to RTR failed with errno {q}",
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
        "[jaccl] Recv failed with errno=60 at 0x{a:012x}",
        "[WARN] Node with rank {r2} exited with code 255",
        "INFO step {i} loss 2.{s} tokens/sec 1{s}00.5",
    ]
    out = []
    for i in range(n):
        r = i % 9
        msg = msgs[rnd.randrange(len(msgs))].format(
            e=rnd.choice((2, 60, 6)),
            s=rnd.randint(3, 40),
            q=rnd.choice((22, 96)),
            a=rnd.getrandbits(44) | (0x7F << 40),
            r2=rnd.randrange(9),
            i=i,
        )
        pid = 4000 + r * 37
        out.append(
            f"[rank {r}] 2026-12-02 00:{i // 60000 % 60:02d}:{i // 1000 % 60:02d},"
            f"{i % 1000:03d} pid {pid} iter {i // 9} /tmp/mlx-{pid}/step.py: {msg}\n".encode()
        )
        if i == n // 3:
            out += [
                b"[rank 4] Traceback (most recent call last):\n",
                b'[rank 4]   File "train.py", line 3, in <module>\n',
                b"[rank 4] RuntimeError: [jaccl] Recv failed with errno=2\n",
                b"Process:               python3.12 [4242]\n",
                b"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n",
                b"0 libthunderboltrdma.dylib 0x1 tbt_post_recv + 44\n",
                b"\x1b[31m[rank 3] RuntimeError: [jaccl] Recv failed with errno=2\x1b[0m\n",
            ]
        if i == n // 2:  # more distinct findings than are kept
            out += [b"rank %d: [ring] Socket 4 was closed by the peer\n" % k for k in range(250)]
    return b"".join(out)


@pytest.mark.parametrize("chunk", [4 << 20, 4096], ids=["one-block", "4KiB"])
def test_lines_that_differ_in_their_numbers_are_counted_by_shape_as_matching_gives(
    monkeypatch, chunk
):
    """Lines counted by shape (digits masked, the digits a signature or the rank reads kept
    as values) give the document matching every line gives: codes, ranks, counts, first and
    last lines, times, the first cause."""
    monkeypatch.setattr(logs, "CHUNK", chunk)
    data = survivors(6000)
    got = triage_bytes(data)
    assert same(got, without_memo(monkeypatch, data, chunk))
    codes = {(f["code"], f["rank"]) for f in got["triage"]["findings"]}
    assert {("MD606", 0), ("MD607", 1), ("MD639", 2), ("MD601", 3), ("MD636", 4)} <= codes


def test_a_shape_masks_numbers_and_addresses_not_words():
    line = b"[rank 3] pid 4242 iter 17 at 0x7f3a2b10c0: Recv failed 0xdead"
    assert logs.shape(line) == b"[rank 0] pid 0000 iter 00 at 0x#: Recv failed 0xdead"
    assert logs.shape(b"0xdeadbeefdevice") == b"0xdeadbeefdevice"  # a word, not an address
