"""The --pairs matrix as people read it (meshdoctor/render/probe.py)."""

from __future__ import annotations

import io

from rich.console import Console

from meshdoctor.render.probe import pairs_table


def test_the_matrix_shows_rates_wrong_values_and_pairs_the_ring_does_not_connect():
    pf = {
        "busbw_gbs": [[None, 1.25, None], [0.5, None, 2.0], [None, None, None]],
        "wrong": [[None, 0, None], [3, None, 0], [None, None, None]],
        "unsupported": [[0, 2]],
        "slowest": {"src": 1, "dst": 0},
        "note": "ring backends connect ring neighbours only",
    }
    buf = io.StringIO()
    pairs_table(pf, Console(file=buf, width=100, color_system=None))
    text = buf.getvalue()
    assert "send/recv busbw GB/s (rows send, columns receive)" in text
    assert "1.250" in text and "2.000" in text
    assert "0.500 #wrong 3" in text  # values that arrived wrong are named in their cell
    assert "-" in text and "?" in text  # 0 -> 2 not connected; 2 -> 0 not measured
    assert "ring backends connect ring neighbours only" in text
