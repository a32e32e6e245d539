"""The source-site tables (``meshdoctor/signatures/sites/*.tsv``, made by
``tools/extract_sites.py`` from MLX's and NCCL's sources and wheels) against the catalogue:
every row's text, its wildcards filled with sample values and written as the user meets it,
is read by a signature through the scanner triage uses."""

from __future__ import annotations

import re

import pytest

from meshdoctor.signatures import coverage

TABLES = list(coverage.TABLES)


def _rows(table):
    return coverage.load(table)


@pytest.mark.parametrize("table", TABLES)
def test_every_table_says_where_it_comes_from(table):
    rows, prov = _rows(table)
    keys = [k for k, _ in prov]
    assert "source" in keys and re.search(r"commit [0-9a-f]{40}", dict(prov)["source"])
    if table == "mlx.tsv":  # MLX 0.32.2-0.32.4 exist only as wheels
        assert "wheel" in keys
    assert rows and all(r.component and r.where and r.pattern for r in rows)


@pytest.mark.parametrize("table", TABLES)
def test_every_source_site_is_read_by_a_signature(table):
    rows, _ = _rows(table)
    missed = [
        f"{r.site.component} {r.site.where}: {r.lines}"
        for r in map(coverage.read, rows)
        if r.status == coverage.MISSED
    ]
    assert missed == []


def test_generic_readings_are_at_most_a_tenth_of_the_sites():
    rs = [coverage.read(r) for t in TABLES for r in _rows(t)[0]]
    generic = [f"{r.site.where}: {r.lines[0]}" for r in rs if r.status == coverage.GENERIC]
    assert len(generic) * 10 <= len(rs), generic


def test_a_sample_line_is_the_text_as_the_user_meets_it():
    site = coverage.Site(
        "ring",
        "mlx/distributed/ring/ring.cpp:212",
        "stderr",
        "[ring] Sending to socket {fd} failed with errno {errno}",
        "mlx.tsv",
    )
    assert coverage.sample_lines(site) == ("[ring] Sending to socket 7 failed with errno 22",)
    r = coverage.read(site)
    assert r.status == coverage.COVERED and r.codes == ("MD615",)
    # a text nothing reads is missed, never counted
    nothing = coverage.Site("x", "x.cpp:1", "stderr", "all is well {x}", "mlx.tsv")
    assert coverage.read(nothing).status == coverage.MISSED


def test_an_nccl_warning_is_read_with_and_without_its_prefix():
    site = coverage.Site(
        "shm",
        "src/os/linux.cc:120",
        "WARN",
        "Error while {s} shared memory segment {s} (size {d}), error: {s} ({d})",
        "nccl.tsv",
    )
    lines = coverage.sample_lines(site)
    assert lines[0].startswith("gpu-node-7:48213:48299 [0] linux.cc:120 NCCL WARN Error while")
    assert lines[1].startswith("NCCL WARN Error while")
    r = coverage.read(site)
    assert r.status == coverage.COVERED and r.codes == ("MD653",)
    from meshdoctor.signatures import match_line

    (m,) = match_line(lines[0])
    assert "NCCL_SHM_DISABLE=1" in m.meaning and "/dev/shm" in m.meaning


def test_an_nccl_failure_is_read_as_nccl_nccl_tests_and_mlx_print_it():
    """NCCL's result string through MLX (``NCCL error file:line '...'``) and nccl-tests
    (``Test NCCL failure file.cu:N '... / ...'``), and NCCL's trace line (``file:line -> N``,
    NCCL v2.30.7 src/include/checks.h) whose result code names the class."""
    from meshdoctor.signatures import match_line

    mlx = "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'invalid usage (run with NCCL_DEBUG=WARN for details)'"
    tests = "node1: Test NCCL failure common.cu:1279 'invalid usage (run with NCCL_DEBUG=WARN for details) / '"
    for line in (mlx, tests):
        (m,) = match_line(line)
        assert m.code == "MD650" and "ncclInvalidUsage" in m.meaning
    (first,) = match_line("h1:1234:1240 [0] NCCL INFO bootstrap.cc:312 -> 2")
    assert "bootstrap.cc:312" in first.meaning and "ncclSystemError" in first.meaning
    assert first.role != "consequence"
    (echo,) = match_line("h2:99:101 [1] NCCL INFO transport/net.cc:12 -> 6")
    assert echo.role == "consequence" and "ncclRemoteError" in echo.meaning


def test_a_full_dev_shm_is_named_from_the_lines_of_nvidia_nccl_290():
    """NVIDIA/nccl #290 (NCCL in a container with docker's 64 MB /dev/shm): the WARN names
    the shared-memory class and its remedy, the trace line after it a system error."""
    from meshdoctor.signatures import classify

    text = (
        "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : "
        "No space left on device\n"
        "gpu2-ru7:2143:2561 [1] NCCL INFO include/shm.h:41 -> 2\n"
    )
    (m,) = classify(text)
    assert m.code == "MD653" and "/dev/shm" in m.meaning and "NCCL_SHM_DISABLE=1" in m.meaning
    assert m.signature.failure_class(m.groups).name == "nccl.shm"


def test_the_nccl_table_holds_the_texts_of_older_releases_with_their_tag():
    """Releases still in the field print texts v2.30.7 does not (tools/extract_sites.py
    --older): each such row names its tag, and the provenance lists every tag read."""
    rows, prov = _rows("nccl.tsv")
    older = [v for k, v in prov if k == "older"]
    assert len(older) >= 6 and all(re.search(r"commit [0-9a-f]{40}", v) for v in older)
    tagged = [r for r in rows if re.search(r"\(v2\.\d+\.\d+-\d\)$", r.where)]
    assert tagged
    # NCCL 2.21.5's shmutils.cc and the allocation macros every release prints through
    texts = {r.pattern: r.where for r in rows}
    assert "(v2.21.5-1)" in texts["Error while {s} shared memory segment {s} (size {d})"]
    assert texts["Failed to CUDA calloc {d} bytes"].startswith("src/include/alloc.h:")
