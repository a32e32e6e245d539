"""mlx.launch's per-rank status lines (MLX 0.32.x launch.py ``_launch_with_io``), read as they
come from its stderr, colour codes included."""

from __future__ import annotations

import pytest

from meshdoctor.mlx.status_lines import (
    COMPLETED,
    EXITED,
    KILLED,
    StatusLine,
    parse,
    parse_all,
    shell_status,
)


@pytest.mark.parametrize(
    "line, want",
    [
        (
            "\x1b[33m[WARN] Node with rank 1 exited with code 255 \x1b[0m\n",
            StatusLine(1, EXITED, 255),
        ),
        ("[WARN] Node with rank 12 exited with code -9", StatusLine(12, EXITED, -9)),
        ("\x1b[33m[WARN] Node with rank 3 was killed \x1b[0m", StatusLine(3, KILLED, None)),
        ("\x1b[32m[INFO] Node with rank 0 completed \x1b[0m\r\n", StatusLine(0, COMPLETED, 0)),
        # print() wrote "[WARN]", then another thread a rank's line, then the rest (seen in a
        # 3-rank run on a loaded box: the rest began with print's separator, or without it)
        (" Node with rank 1 exited with code 255 \x1b[0m\n", StatusLine(1, EXITED, 255)),
        ("Node with rank 1 exited with code 255 \x1b[0m\n", StatusLine(1, EXITED, 255)),
        # ... or right after the message, before print's separator (seen in CI)
        (
            "\x1b[33m[WARN] Node with rank 1 exited with code 255rank 2 step 1 sum 6\n",
            StatusLine(1, EXITED, 255),
        ),
    ],
)
def test_each_wording_is_read(line, want):
    assert parse(line) == want


@pytest.mark.parametrize(
    "line, want",
    [
        # two ranks' threads ended together: print()'s pieces interleaved (each message whole)
        (
            "\x1b[33m[WARN]\x1b[33m[WARN] Node with rank 1 exited with code 1 Node with rank 2 "
            "exited with code -9 \x1b[0m \x1b[0m\n",
            [StatusLine(1, EXITED, 1), StatusLine(2, EXITED, -9)],
        ),
        (
            "[WARN][WARN]  Node with rank 1 exited with code 1Node with rank 2 was killed",
            [StatusLine(1, EXITED, 1), StatusLine(2, KILLED, None)],
        ),
        (
            "[WARN] Node with rank 0 exited with code 1 [WARN] Node with rank 3 completed",
            [StatusLine(0, EXITED, 1), StatusLine(3, COMPLETED, 0)],
        ),
        ("[WARN] Node with rank 1 exited with code 255rank 2 step 1", [StatusLine(1, EXITED, 255)]),
        ("rank 1: [WARN] Node with rank 1 exited with code 255", []),
    ],
)
def test_interleaved_lines_keep_every_ranks_status(line, want):
    assert parse_all(line) == want
    assert parse(line) == (want[0] if want else None)


@pytest.mark.parametrize(
    "line",
    [
        "rank 1: [WARN] Node with rank 1 exited with code 255",  # a rank's own output quoting it
        "[WARN] Node with rank one exited with code 255",
        "[WARN] Node with rank 1 exited with code",
        "\x1b[33m[WARN]rank 1 step 1 sum 6",  # the first half of a line split as above
    ],
)
def test_anything_else_is_not_a_status_line(line):
    assert parse(line) is None


@pytest.mark.parametrize("code, status", [(0, 0), (255, 255), (-9, 137), (-15, 143), (300, 44)])
def test_shell_status(code, status):
    assert shell_status(code) == status
