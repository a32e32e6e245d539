"""exo's placement refusals (exo src/exo/master/placement.py) and the NCCL connect failures
whose peer address says what went wrong (loopback, link-local), each read as its class."""

from __future__ import annotations

import pytest

from meshdoctor import signatures


@pytest.mark.parametrize(
    "line,words",
    [
        (
            '{"detail":"Requested RDMA (MlxJaccl) but no RDMA-connected cycles available"}',
            "Thunderbolt 5 cable",
        ),
        ("ValueError: No cycles found with sufficient memory", "available memory holds"),
        (
            "Requested Tensor sharding but this model does not support tensor parallelism: m",
            "use pipeline sharding",
        ),
        (
            "No tensor sharding found for model with hidden_size=7168, num_key_value_heads=8 "
            "across candidate cycles",
            "divide by the number of nodes",
        ),
        ("Pipeline parallelism is not supported for Gemma 4; use tensor", "use tensor sharding"),
        (
            "Model m backends ['mlx'] cannot satisfy engine MlxJaccl which requires ['torch']",
            "engine the model supports",
        ),
    ],
)
def test_an_exo_placement_refusal_is_read_as_its_class(line, words):
    (m,) = signatures.classify(line)
    assert m.code == "MD818" and words in m.meaning + m.remedy, m.meaning


@pytest.mark.parametrize(
    "peer,words",
    [
        ("127.0.0.1<45069>", "dialled a loopback address"),
        ("fe80::20d:3aff:fef7:74b3%enP7906s1<51577>", "link-local address"),
        ("169.254.10.2<40000>", "link-local address"),
        ("10.0.0.9<40000>", "Software caused connection abort"),  # the general reading
    ],
)
def test_an_nccl_connect_failure_reads_its_peer_address(peer, words):
    line = (
        f"h1:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to {peer} "
        "failed : Software caused connection abort"
    )
    (m,) = [m for m in signatures.classify(line) if m.code == "MD653"]
    assert words in m.meaning, m.meaning


def test_the_nvrtc_summary_line_gives_way_to_the_compilers_diagnostic():
    summary = "Error processing prompt: Nvrtc Error 6, NVRTC_ERROR_COMPILATION"
    diag = '<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half"'
    (s,) = signatures.classify(summary)
    (d,) = signatures.classify(diag)
    assert s.code == d.code == "MD819"
    assert s.role == signatures.CONSEQUENCE and d.role != signatures.CONSEQUENCE
    assert "float32" in d.meaning


def test_mlx_swifts_fatal_error_is_the_way_the_mlx_error_ended_the_process():
    """The MLX error it carries keeps its own reading, the stronger one; the wrapper says how
    the process ended and what keeps it up."""
    line = (
        "MLX/ErrorHandler.swift:345: Fatal error: [metal::malloc] Resource limit (499000) exceeded."
    )
    got = {m.code: m for m in signatures.classify(line)}
    assert set(got) == {"MD672", "MD820"}
    assert got["MD672"].role == signatures.CAUSE and got["MD820"].role == signatures.EITHER
    assert "withError" in got["MD820"].remedy


@pytest.mark.parametrize(
    "line,role,words",
    [
        ("Runner terminated with signal=9 (Killed: 9)", signatures.EITHER, "jetsam"),
        ("Runner terminated with signal=6 (Abort trap: 6)", signatures.EITHER, "C++ exception"),
        (
            "Runner terminated with signal=15 (Terminated: 15)",
            signatures.CONSEQUENCE,
            "exo stopped",
        ),
        ("Runner terminated with exitcode=1", signatures.EITHER, "traceback"),
    ],
)
def test_exos_runner_end_says_what_its_signal_means(line, role, words):
    (m,) = signatures.classify(line)
    assert m.code == "MD821" and m.role == role and words in m.meaning
