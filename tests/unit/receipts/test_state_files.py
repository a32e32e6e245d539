"""The state directory and the files in it (meshdoctor.receipts): created 0700, owner and mode
checked on every use, no link followed, only our own regular files read, every write whole."""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import pytest

from meshdoctor import receipts
from tests.helpers import other_user


@pytest.fixture
def state(tmp_path, monkeypatch):
    d = tmp_path / "state"
    monkeypatch.setenv(receipts.STATE_ENV, str(d))
    return d


@pytest.fixture
def shared():
    """A folder in /tmp every user can write (pytest's own are 0700)."""
    d = tempfile.mkdtemp(prefix="md-shared-")
    os.chmod(d, 0o1777)  # like /tmp: everyone may add, only owners remove
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_the_state_directory_and_its_folders_are_made_0700(state):
    receipts.write("auto-setup", {"started_epoch": 1.0, "outcome": "ok"})
    assert oct(state.stat().st_mode & 0o777) == "0o700"
    assert oct((state / "receipts").stat().st_mode & 0o777) == "0o700"
    [p] = (state / "receipts").iterdir()
    assert oct(p.stat().st_mode & 0o777) == "0o600"
    assert json.loads(p.read_text())["outcome"] == "ok"


def test_a_state_directory_others_can_write_is_refused_with_what_to_do(state):
    state.mkdir(mode=0o700)
    os.chmod(state, 0o777)
    with pytest.raises(receipts.StateDirError) as exc:
        receipts.state_dir()
    msg = str(exc.value)
    assert f"state directory {state} cannot be used (mode 0777: others can write it)" in msg
    assert "chmod 700" in msg and receipts.STATE_ENV in msg


def test_a_state_directory_of_another_user_is_refused(shared, monkeypatch):
    with other_user() as as_them:
        d = os.path.join(shared, "theirs")
        assert as_them(f"mkdir -m 700 {d}").returncode == 0
        monkeypatch.setenv(receipts.STATE_ENV, d)
        with pytest.raises(receipts.StateDirError, match=r"owned by uid \d+, not by uid 0"):
            receipts.state_dir()
        with pytest.raises(receipts.StateDirError):
            receipts.write("auto-setup", {"outcome": "ok"})


def test_a_linked_receipts_folder_is_never_written_through(state, tmp_path):
    state.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (state / "receipts").symlink_to(elsewhere)
    with pytest.raises(receipts.StateDirError, match="a symbolic link"):
        receipts.write("auto-setup", {"outcome": "failed"})
    with pytest.raises(receipts.StateDirError, match="a symbolic link"):
        receipts.scan("auto-setup")
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_a_link_and_a_cut_off_receipt_are_problems_never_read_blocking(state, tmp_path):
    receipts.write("auto-setup", {"started_epoch": 1.0, "outcome": "ok"})
    d = state / "receipts"
    os.mkfifo(d / "auto-setup-20260101T000000-fifo00.json")  # no writer: open would block
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"started_epoch": 2.0, "outcome": "ok"}))
    (d / "auto-setup-20260101T000001-link00.json").symlink_to(target)
    (d / "auto-setup-20260101T000002-cut000.json").write_text('{"started_epoch": 3.0, "outc')
    got, problems = receipts.scan("auto-setup")
    assert [r["outcome"] for r in got] == ["ok"]
    assert len(problems) == 3, problems
    assert any("fifo00.json: not a regular file" in p for p in problems)
    assert any("link00.json: not a regular file" in p for p in problems)
    assert any("cut000.json does not parse" in p for p in problems)


def test_a_write_is_whole_or_absent_and_leaves_no_temporary(state):
    with receipts.folder("cache") as d:
        receipts.write_file(d, "x.json", b"1" * 100_000)
        receipts.write_file(d, "x.json", b"2")
        assert receipts.read_file(d, "x.json", 10) == b"2"
    assert sorted(os.listdir(state / "cache")) == ["x.json"]


def test_a_hard_link_or_a_file_of_another_user_is_not_read(state, shared):
    with receipts.folder() as d:
        receipts.write_file(d, "a.json", b"{}")
    os.link(state / "a.json", state / "b.json")
    with receipts.folder() as d, pytest.raises(receipts.StateFileError, match="2 links"):
        receipts.read_file(d, "b.json", 10)
    with other_user() as as_them:
        (state / "b.json").unlink()
        theirs = os.path.join(shared, "theirs.json")
        assert as_them(f"echo '{{}}' > {theirs}").returncode == 0
        shutil.copy2(theirs, state / "c.json")
        os.chown(state / "c.json", os.stat(theirs).st_uid, -1)
        with receipts.folder() as d, pytest.raises(receipts.StateFileError, match="not by us"):
            receipts.read_file(d, "c.json", 10)


@pytest.mark.parametrize(
    "body,why",
    [
        ('{"started_epoch": NaN, "outcome": "failed"}', "not finite (started_epoch: nan)"),
        ('{"started_epoch": 5.0, "hosts": {"h1": {"boot_time": Infinity}}}', "h1.boot_time: inf"),
        ('{"started_epoch": 1e999, "outcome": "failed"}', "not finite (started_epoch: inf)"),
        ('{"started_epoch": "yesterday", "outcome": "failed"}', "started_epoch is not a number"),
    ],
)
def test_a_receipt_that_cannot_be_ordered_or_compared_is_a_problem(state, body, why):
    """NaN, Infinity (json reads both) or a started_epoch that is no number: a problem,
    as an unreadable one is (auto-setup fails closed on problems), never silently dropped or
    sorted anywhere."""
    receipts.write("auto-setup", {"started_epoch": 1.0, "outcome": "ok"})
    (state / "receipts" / "auto-setup-20260101T000003-bad000.json").write_text(body)
    got, problems = receipts.scan("auto-setup")
    assert [r["outcome"] for r in got] == ["ok"]
    assert len(problems) == 1 and "bad000.json" in problems[0] and why in problems[0], problems
