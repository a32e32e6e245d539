"""Pictures (meshdoctor.render.pictures): the files written hold the hosts, the figures and
what failed, read back from the SVG itself (xml.etree: its <text> elements)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from meshdoctor.hostfile.load import parse
from meshdoctor.model import Result
from meshdoctor.render import pictures

SVG = "{http://www.w3.org/2000/svg}"

# a --pairs section as the verdict's $defs/probe_pairs gives it: 3 ranks, 1->2 slow, 2->0 wrong
PAIRS = {
    "busbw_gbs": [[None, 11.52, 11.9], [12.03, None, 0.41], [11.7, 11.8, None]],
    "wrong": [[None, 0, 0], [0, None, 0], [3, 0, None]],
    "cells": [],
    "unsupported": [],
    "missing": [],
    "slowest": {"src": 1, "dst": 2, "busbw_gbs": 0.41, "wrong": 0},
    "note": "",
}


def texts(path) -> list:
    root = ET.parse(path).getroot()
    return ["".join(t.itertext()).strip() for t in root.iter(SVG + "text")]


def test_the_pairs_heat_map_holds_every_rank_and_every_figure(tmp_path):
    out = tmp_path / "pairs.svg"
    pictures.pairs_heatmap(PAIRS, str(out), ["rank 0 m1", "rank 1 m2", "rank 2 m3"])
    got = texts(out)
    for label in ("rank 0 m1", "rank 1 m2", "rank 2 m3"):
        assert got.count(label) == 2  # a row and a column
    for figure in ("11.5", "11.9", "12.0", "0.41", "11.8", "wrong 3"):
        assert figure in got
    assert any("slowest 1->2" in t for t in got)
    assert got.count("-") >= 3  # the diagonal: not measured


def test_a_png_is_written_too(tmp_path):
    out = tmp_path / "pairs.png"
    pictures.pairs_heatmap(PAIRS, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


JACCL = parse(
    json.dumps(
        {
            "backend": "jaccl",
            "hosts": [
                {"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [None, "rdma_en3", "rdma_en4"]},
                {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en3", None, "rdma_en5"]},
                {"ssh": "m3", "ips": ["10.0.0.3"], "rdma": ["rdma_en4", "rdma_en5", None]},
            ],
        }
    )
)


def test_the_mesh_names_each_host_each_cable_and_what_fails(tmp_path):
    out = tmp_path / "mesh.svg"
    results = [
        Result(
            "MD404", "fleet.edges", "fail", "edge m2-m3", host="m2", evidence={"edge": ["m2", "m3"]}
        ),
        Result("MD101", "node.platform", "error", "m1 did not answer", host="m1"),
        Result("MD102", "node.memory", "warn", "m3 is short of memory", host="m3"),
    ]
    pictures.mesh_graph(JACCL, results, str(out))
    got = texts(out)
    for line in ("m1", "rank 0", "m2", "rank 1", "m3", "rank 2"):  # a node's two lines
        assert line in got
    for cable in ("rdma_en3 / rdma_en3", "rdma_en4 / rdma_en4", "rdma_en5 / rdma_en5"):
        assert cable in got
    assert any("failing: 1 hosts, 1 links" in t for t in got)  # m1; m2-m3 (a warn is no failure)
    assert pictures.mesh_links(JACCL) == (
        [
            (0, 1, "rdma_en3 / rdma_en3"),
            (0, 2, "rdma_en4 / rdma_en4"),
            (1, 2, "rdma_en5 / rdma_en5"),
        ],
        False,
    )


def test_a_ring_is_drawn_in_its_ring_order():
    ring = parse(json.dumps([{"ssh": f"n{i}", "ips": [f"10.0.1.{i}"]} for i in range(4)]))
    assert pictures.mesh_links(ring) == (
        [(0, 1, "1"), (1, 2, "2"), (2, 3, "3"), (3, 0, "4")],
        True,
    )


def test_a_host_name_is_shown_as_text_never_as_markup_or_math(tmp_path):
    odd = parse(
        json.dumps([{"ssh": "a$b<c>", "ips": ["10.0.0.1"]}, {"ssh": "d", "ips": ["10.0.0.2"]}])
    )
    out = tmp_path / "mesh.svg"
    pictures.mesh_graph(odd, [], str(out))
    assert any("a$b<c>" in t for t in texts(out))


def test_a_suffix_of_no_known_format_or_no_matplotlib_is_said(monkeypatch):
    with pytest.raises(pictures.PictureError, match=r"\.svg or \.png"):
        pictures.require("mesh.pdf")
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    with pytest.raises(pictures.PictureError, match=r"pip install 'meshdoctor\[plot\]'"):
        pictures.require("mesh.svg")
