"""Ranks in words, for messages about a hostfile's entries."""

from __future__ import annotations

from typing import List, Sequence


def n_ranks(n: int) -> str:
    """``"1 rank"``, ``"3 ranks"``."""
    return f"{n} rank" + ("" if n == 1 else "s")


def ranks_phrase(ranks: Sequence[int]) -> str:
    """``"rank 0"``, ``"ranks 0 and 1"``, ``"ranks 0, 1 and 2"``; four or more consecutive
    ranks as a range (``"ranks 0-7 and 9"``), so a summary stays one short line however large
    the mesh; ``"no rank"`` when empty."""
    r: List[str] = []
    i, xs = 0, list(ranks)
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        if j - i >= 3:
            r.append(f"{xs[i]}-{xs[j]}")
        else:
            r.extend(str(x) for x in xs[i : j + 1])
        i = j + 1
    if not r:
        return "no rank"
    if len(r) == 1:
        return f"ranks {r[0]}" if "-" in r[0] else f"rank {r[0]}"
    return f"ranks {', '.join(r[:-1])} and {r[-1]}"
