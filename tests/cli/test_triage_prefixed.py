"""``meshdoctor triage``: a Python traceback whose every line carries a launcher or rank
prefix (``[rank 1] ``, a timestamp and rank): the record is read as one traceback, so the
specific signature on its last line names it, not a generic Python exception; and sub-second
timestamps deciding the first cause whatever the order of the files."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli

BODY = [
    "Traceback (most recent call last):",
    '  File "/srv/serve.py", line 40, in <module>',
    "    group = mx.distributed.init(backend='jaccl')",
    "RuntimeError: [jaccl] Couldn't allocate protection domain",
]


@pytest.mark.parametrize(
    "prefix",
    [
        lambda i: "[rank 1] ",
        lambda i: f"2026-01-05 10:00:0{i},{100 + 7 * i} rank1: ",
        lambda i: "[1,0]<stderr>:",
    ],
    ids=["rank", "timestamp-and-rank", "mpirun"],
)
def test_a_prefixed_traceback_is_named_by_its_last_line(tmp_path, prefix):
    log = tmp_path / "rank1.log"
    log.write_text("".join(prefix(i) + line + "\n" for i, line in enumerate(BODY)))
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1, r.err
    codes = [f["code"] for f in r.doc["triage"]["findings"]]
    assert codes == ["MD604"], codes
    (f,) = r.doc["triage"]["findings"]
    assert any("serve.py" in c for c in f["context"])


@pytest.mark.parametrize("reverse", [False, True], ids=["files-in-order", "files-reversed"])
def test_sub_second_timestamps_decide_the_first_cause_whatever_the_file_order(tmp_path, reverse):
    (tmp_path / "rank0.log").write_text(
        "2026-01-05 10:00:04,910 RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    )
    (tmp_path / "rank1.log").write_text(
        "2026-01-05 10:00:04,120 RuntimeError: [jaccl] Register memory region failed\n"
    )
    files = sorted(str(p) for p in tmp_path.iterdir())
    r = run_cli("triage", *(files[::-1] if reverse else files), "--json")
    fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
    (first,) = r.doc["triage"]["first_cause"]
    assert fs[first]["code"] == "MD605" and fs[first]["rank"] == 1
    other = next(f for f in fs.values() if f["id"] != first)
    assert other["consequence_of"] == first
