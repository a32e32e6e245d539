"""`probe --pairs` promises an N x N matrix: the human output prints it, not only the JSON."""

from __future__ import annotations

import io

from rich.console import Console

from meshdoctor.model import Verdict
from meshdoctor.probe.figures import pair_figures
from meshdoctor.render import verdict as render


def test_the_pairs_matrix_is_printed_for_people():
    ev = [
        {"op": "pair", "src": s, "dst": d, "size": 1 << 20, "times": [0.001], "wrong": 0}
        for s in range(3)
        for d in range(3)
        if s != d
    ]
    ev[1]["wrong"] = 3  # 0 -> 2 arrived wrong
    pf = pair_figures({0: ev}, 3, [(s, d) for s in range(3) for d in range(3) if s != d], [])
    v = Verdict(command="probe", probe={"pairs": pf})
    buf = io.StringIO()
    render.verdict(v, out=Console(file=buf, width=100, highlight=False))
    text = buf.getvalue()
    assert "send/recv busbw, GB/s (row: sender, column: receiver)" in text
    row0 = next(ln for ln in text.splitlines() if ln.strip("│ ").startswith("0 "))
    assert "-" in row0 and "wrong" in row0 and "1.0486" in row0, text
