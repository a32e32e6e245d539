"""The pictures commands draw (probe --pairs --plot, check --graph), read back from the SVG:
the real probe over loopback ranks, the real fleet check over ssh to loopback addresses."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.cli.test_probe import env_with
from tests.helpers import run_cli

SVG = "{http://www.w3.org/2000/svg}"


def texts(path) -> list:
    return ["".join(t.itertext()).strip() for t in ET.parse(path).getroot().iter(SVG + "text")]


def test_probe_pairs_plot_holds_each_rank_and_each_pairs_busbw(clean_env, tmp_path):
    out = tmp_path / "pairs.svg"
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--pairs",
        "--op",
        "send_recv",
        "--size",
        "64KB",
        "--iters",
        "2",
        "--plot",
        str(out),
        "--json",
        env=env_with(clean_env),
        timeout=120,
    )
    assert r.rc == 0, (r.out, r.err)
    m = r.doc["probe"]["pairs"]["busbw_gbs"]
    got = texts(out)
    assert got.count("rank 0") == 2 and got.count("rank 1") == 2, got  # a row and a column
    for s, d in ((0, 1), (1, 0)):
        v = m[s][d]
        assert (f"{v:.2f}" if v < 10 else f"{v:.1f}") in got


def test_plot_needs_pairs_and_a_known_suffix(clean_env, tmp_path):
    r = run_cli("probe", "-n", "2", "--plot", str(tmp_path / "p.svg"), env=env_with(clean_env))
    assert r.rc == 2 and "--plot needs --pairs" in r.err
    r = run_cli(
        "probe", "-n", "2", "--pairs", "--plot", str(tmp_path / "p.pdf"), env=env_with(clean_env)
    )
    assert r.rc == 2 and ".svg or .png" in r.err
    assert not (tmp_path / "p.svg").exists() and not (tmp_path / "p.pdf").exists()


def test_graph_needs_a_fleet(clean_env, tmp_path):
    r = run_cli("check", "--graph", str(tmp_path / "g.svg"), env=env_with(clean_env))
    assert r.rc == 2 and "--graph needs --hostfile or --hosts" in r.err


def test_check_graph_draws_each_host_and_counts_what_failed(clean_env, tmp_path):
    out = tmp_path / "mesh.svg"
    r = run_cli(
        "check",
        "--hosts",
        "127.0.0.2,127.0.0.3",
        "--graph",
        str(out),
        "--json",
        env=env_with(clean_env),
        timeout=120,
    )
    assert r.rc in (0, 1), (r.out, r.err)
    got = texts(out)
    for line in ("127.0.0.2", "rank 0", "127.0.0.3", "rank 1"):
        assert line in got
    bad = {x["host"] for x in r.doc["results"] if x["status"] in ("fail", "error")}
    title = next(t for t in got if "failing:" in t)
    assert "backend ring: ring order" in title
    assert f"failing: {len(bad & {'127.0.0.2', '127.0.0.3'})} hosts" in title
