"""The failure-signature catalogue (meshdoctor.signatures): every MLX error string (mlx 0.30-0.32.4 sources) maps to
its code; unrelated text maps to nothing; every code is explainable."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from meshdoctor import catalogue, signatures
from meshdoctor.cli import cli

# (text as the field reports show it, expected code): strings from the MLX sources and public
# bug reports
CASES = [
    ("ValueError: [jaccl] Changing queue pair to RTR failed with errno 22", "MD601"),
    ("[jaccl] Changing queue pair to RTR failed with errno 60", "MD602"),
    ("[jaccl] Creating the queue pair failed with 'Resource busy (16)'", "MD603"),
    ("[jaccl] Changing queue pair to RTR failed with errno 16", "MD603"),
    ("RuntimeError: [jaccl] Couldn't allocate protection domain", "MD604"),
    ("[jaccl] Register memory region failed", "MD605"),
    ("RuntimeError: [jaccl] Recv failed with errno=2", "MD606"),
    ("RuntimeError: [jaccl] Recv failed with errno=60", "MD607"),
    ("[jaccl] Recv failed with error code -12", "MD608"),
    ("[jaccl] Send failed with error code -12", "MD608"),
    ("[jaccl] Could not find device rdma_en5 (3 available)", "MD609"),
    ("[jaccl] peer 2: no completion for 30000 ms", "MD610"),
    ("  frame #3: jaccl::MeshImpl::all_reduce<float>", "MD611"),
    ("0 libthunderboltrdma.dylib tbt_post_recv + 44", "MD612"),
    ("[ring] Socket 4 was closed by the peer", "MD613"),
    ("[ring] Too many send/recv errors. Failing pending tasks...", "MD613"),
    ("RuntimeError: [ring] connection to a peer was lost", "MD613"),
    ("[ring] Too many send/recv errors. Aborting...", "MD614"),
    ("[ring] Receiving from socket 4 failed with errno 104", "MD615"),
    (
        "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        "MD616",
    ),
    (
        "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
        "[jaccl] Recv failed with error code -12",
        "MD617",
    ),
    ("`ibv_devinfo -v` did not finish within 3.0 s (killed)", "MD619"),
    ("RuntimeError: [ring] Couldn't bind socket (error: 98)", "MD620"),
    ("RuntimeError: [ring] Couldn't connect (error: 111)", "MD621"),
]


@pytest.mark.parametrize("text,code", CASES)
def test_signature_found(text, code):
    found = [m.code for m in signatures.classify("some noise\n" + text + "\nmore noise")]
    assert code in found, (text, found)
    m = next(m for m in signatures.classify(text) if m.code == code)
    assert m.line == text.strip()[:300] and m.meaning and m.remedy


def test_inner_message_of_an_abort_is_classified_too():
    text = (
        "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
        "[jaccl] Recv failed with error code -12"
    )
    assert {"MD617", "MD608"} <= {m.code for m in signatures.classify(text)}


def test_ring_errno_meaning_is_specific():
    m = signatures.classify("[ring] Sending to socket 3 failed with errno 32")[0]
    assert m.code == "MD615" and m.groups == {"errno": "32"} and "broken pipe" in m.meaning


def test_unrelated_text_matches_nothing():
    assert (
        signatures.classify(
            "Traceback (most recent call last):\nKeyError: 'x'\n"
            "[jaccl] all good, errno 160 is not a thing"
        )
        == []
    )


def test_exit_status_signatures():
    assert [m.code for m in signatures.classify_exit(255, "Segmentation fault")] == ["MD618"]
    assert signatures.classify_exit(255, "[jaccl] Recv failed with errno=2") == []
    assert [m.code for m in signatures.classify_exit(75, "")] == ["MD622"]
    assert signatures.classify_exit(0, "") == [] and signatures.classify_exit(None, "") == []


def test_codes_are_unique_stable_and_registered():
    all_codes = list(signatures.codes())
    assert len(all_codes) == len(set(all_codes))
    assert all(re.fullmatch(r"MD6\d\d", c) for c in all_codes)
    catalogued = {e.code for e in catalogue.entries([catalogue.SIGNATURE])}
    for c in all_codes:
        assert c in catalogued


def test_explain_knows_signature_and_probe_codes():
    r = CliRunner().invoke(cli, ["explain", "MD613"])
    assert r.exit_code == 0 and "ring peer" in r.output
    r = CliRunner().invoke(cli, ["explain", "MD503"])
    assert r.exit_code == 0 and "deadline" in r.output


def test_backend_unavailable_message_of_mlx_0_32_4():
    from meshdoctor.signatures import classify

    got = classify("RuntimeError: Cannot initialize jaccl distributed backend.")
    assert [m.code for m in got] == ["MD623"] and got[0].groups == {"backend": "jaccl"}
