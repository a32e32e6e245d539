"""``--output`` writes (output.write_atomic): a reader sees the old file or the new one, never a
part; a link at the target is replaced, not followed; the file is readable by others (0644
less the umask), and nothing temporary stays behind."""

from __future__ import annotations

import os
import stat
import threading

from meshdoctor.output import write_atomic


def test_a_reader_never_sees_half_a_file(tmp_path):
    target = tmp_path / "m.prom"
    old, new = "a" * 300_000 + "\n", "b" * 600_000 + "\n"
    write_atomic(str(target), old)
    seen, stop = set(), threading.Event()

    def read():
        while not stop.is_set():
            seen.add(target.read_text())

    t = threading.Thread(target=read)
    t.start()
    try:
        for i in range(30):
            write_atomic(str(target), new if i % 2 == 0 else old)
    finally:
        stop.set()
        t.join()
    assert seen <= {old, new} and seen
    assert os.listdir(tmp_path) == ["m.prom"]


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "m.prom"
    link.symlink_to(victim)
    write_atomic(str(link), "x 1\n")
    assert victim.read_text() == "keep\n"
    assert not link.is_symlink() and link.read_text() == "x 1\n"
    assert stat.S_IMODE(link.stat().st_mode) & 0o044 == 0o044
