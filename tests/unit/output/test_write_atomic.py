"""``--output`` writes (output.write_atomic): a reader sees the old file or the new one, never a
part; nothing but a regular file of ours is ever replaced (a link of ours is followed and
stays, one planted by another user or into another user's folder is refused; a device, FIFO or
descriptor is written in place); the file is readable by others (0644 less the umask), and
nothing temporary stays behind."""

from __future__ import annotations

import os
import stat
import errno
import threading

import pytest

from meshdoctor.output import write_atomic
from meshdoctor.receipts import output_problem, write_path


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


def test_a_link_of_ours_is_followed_and_stays_a_link(tmp_path):
    """A link is not a regular file of ours: it is never replaced; ours (owned by us, into a
    folder of ours) leads to the file that is replaced atomically."""
    victim = tmp_path / "target.prom"
    victim.write_text("old\n")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "m.prom"
    link.symlink_to(victim)
    write_atomic(str(link), "x 1\n")
    assert link.is_symlink() and victim.read_text() == "x 1\n"
    assert stat.S_IMODE(victim.stat().st_mode) & 0o044 == 0o044
    assert sorted(os.listdir(tmp_path / "out")) == ["m.prom"]
    assert sorted(os.listdir(tmp_path)) == ["out", "target.prom"]


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_link_planted_by_another_user_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "m.prom"
    link.symlink_to(victim)
    os.lchown(link, 4321, 4321)
    with pytest.raises(OSError, match="owned by uid 4321"):
        write_atomic(str(link), "x 1\n")
    assert victim.read_text() == "keep\n" and link.is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_link_into_another_users_folder_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 4321, 4321)
    link = tmp_path / "m.prom"
    link.symlink_to(theirs / "f")
    with pytest.raises(OSError, match="a folder of uid 4321"):
        write_atomic(str(link), "x 1\n")
    assert os.listdir(theirs) == [] and link.is_symlink()
    assert output_problem(str(link)) is not None


def test_a_device_a_fifo_and_a_descriptor_are_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    t.start()
    write_path(str(fifo), b"through\n")
    t.join(30)
    assert got == [b"through\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    r, w = os.pipe()
    try:
        write_path(f"/dev/fd/{w}", b"fd\n")
        assert os.read(r, 100) == b"fd\n"
    finally:
        os.close(r)
        os.close(w)
    if os.geteuid() == 0:
        dev = tmp_path / "full"
        os.mknod(dev, stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
        with pytest.raises(OSError) as exc:  # written in place: the device's own ENOSPC
            write_path(str(dev), b"x")
        assert exc.value.errno == errno.ENOSPC and stat.S_ISCHR(os.lstat(dev).st_mode)


def test_what_is_refused_is_said_before_the_work(tmp_path):
    assert output_problem(str(tmp_path)) is not None  # a folder
    assert "does not exist" in output_problem(str(tmp_path / "no" / "x"))
    assert output_problem(str(tmp_path / "new.json")) is None
    assert output_problem("/dev/fd/987") == "descriptor 987 is not open"
    if os.path.exists("/dev/loop0") and stat.S_ISBLK(os.stat("/dev/loop0").st_mode):
        assert "block device" in output_problem("/dev/loop0")
