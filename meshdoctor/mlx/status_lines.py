"""mlx.launch's per-rank status lines, read from its standard error.

MLX 0.32.x ``mlx/_distributed_utils/launch.py`` (``_launch_with_io``), each thread once its rank
ended, through ``common.log_warning`` / ``common.log`` (``print("\\033[33m[WARN]", *args,
"\\033[0m")`` to stderr):

* ``[WARN] Node with rank R exited with code C``: the rank ended with a non-zero status (C as
  Python's subprocess reports it: negative ``-N`` for a local process killed by signal N, 255
  for a remote one through ssh);
* ``[WARN] Node with rank R was killed``: mlx.launch itself stopped it after another rank
  failed, and its kill script found it still running;
* ``[INFO] Node with rank R completed``: only with ``--verbose``; without it a rank that ended
  with 0 prints nothing.

mlx.launch exits 0 in every case (no ``sys.exit`` with the ranks' codes in 0.32.4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

# colour codes around the line (common.log_warning), and any a terminal added
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# print("\033[33m[WARN]", message, "\033[0m") writes its three arguments, the spaces between
# them and the newline one by one, and mlx.launch's threads copying the ranks' output write to
# the same stream meanwhile: a rank's line can land before the message or right after it
# ("[WARN]rank 1 step 1\n Node with rank 1 exited with code 255", "[WARN] Node with rank 1
# exited with code 255rank 2 step 1\n \033[0m"). Two ranks' threads ending together interleave
# their pieces the same way ("[WARN][WARN] Node with rank 1 exited with code 1 Node with rank 2
# exited with code 1 \033[0m \033[0m"). The message itself is one write, so: levels are
# optional and may repeat, the first message starts the line (after the levels, if there),
# each further one follows the one before it (with levels and spaces between), and whatever
# else follows is not read.
_LEAD = re.compile(r"(?:\s|\[(?:WARN|INFO)\])*")
_MESSAGE = re.compile(
    r"Node with rank (?P<rank>\d+) "
    r"(?:exited with code (?P<code>-?\d+)|(?P<killed>was killed)|(?P<done>completed))"
)

EXITED = "exited"  # ``exited with code C``
KILLED = "killed"  # ``was killed`` (by mlx.launch, after another rank failed)
COMPLETED = "completed"  # ``completed`` (--verbose only)


@dataclass(frozen=True)
class StatusLine:
    """One rank's status as mlx.launch printed it: ``rank``; ``kind`` (:data:`EXITED`,
    :data:`KILLED`, :data:`COMPLETED`); ``code``: the exit status for :data:`EXITED` (negative:
    killed by that signal), 0 for :data:`COMPLETED`, None for :data:`KILLED`."""

    rank: int
    kind: str
    code: Optional[int]


def parse_all(line: str) -> List[StatusLine]:
    """Every :class:`StatusLine` in ``line`` (one line of mlx.launch's stderr, with or without
    its colour codes and newline), in order: several when ranks' threads ended together and
    their prints interleaved; [] for any other line (a rank's own output)."""
    text = _ANSI.sub("", line.rstrip("\r\n"))
    found: List[StatusLine] = []
    pos = 0
    while True:
        pos = _LEAD.match(text, pos).end()
        m = _MESSAGE.match(text, pos)
        if m is None:
            return found
        found.append(_status(m))
        pos = m.end()


def parse(line: str) -> Optional[StatusLine]:
    """The first :class:`StatusLine` in ``line`` (:func:`parse_all`), or None when it is any
    other line (a rank's own output)."""
    found = parse_all(line)
    return found[0] if found else None


def _status(m: "re.Match[str]") -> StatusLine:
    rank = int(m.group("rank"))
    if m.group("killed"):
        return StatusLine(rank, KILLED, None)
    if m.group("done"):
        return StatusLine(rank, COMPLETED, 0)
    return StatusLine(rank, EXITED, int(m.group("code")))


def shell_status(code: int) -> int:
    """An exit status as a shell would give it (0-255): a signal ``-N`` (Python's subprocess)
    becomes ``128 + N`` (bash(1), "EXIT STATUS"); a status outside 0-255 is taken modulo 256,
    as exit(3) does."""
    if code < 0:
        return min(255, 128 + (-code))
    return code & 0xFF
