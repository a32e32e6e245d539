"""The failure-signature catalogue (meshdoctor.signatures): every MLX error string (mlx 0.30-0.32.4 sources) maps to
its code; unrelated text maps to nothing; every code is explainable."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner

from meshdoctor import catalogue, signatures
from meshdoctor.cli import cli
from meshdoctor.codes.model import kind_of
from meshdoctor.triage.collect import Collected, launcher_zero, read_stream
from meshdoctor.triage.findings import Input

# Every signature declares its example lines (``examples=``: lines from the MLX sources and
# public bug reports, or a multi-line record); an example must give its own signature and only
# signatures of the same family (a compatible code: the inner [jaccl] message of an abort, the
# NCCL result string inside an ``NCCL error`` line, the exit status an mlx.launch line reports).
FAMILY = {s.code: f.__name__ for f in signatures.FAMILIES for s in f.SIGNATURES}
EXAMPLES = [(s, text) for s in signatures.CATALOGUE for text in s.examples]


def recognised(text):
    """The codes triage gives a log holding ``text``: its findings' codes, the signature of the
    exit status each mlx.launch ``exited with code C`` line reports and, after such a line, of
    mlx.launch's own exit 0 (it exits 0 whatever its ranks did: mlx/_distributed_utils/launch.py)."""
    col = Collected()
    read_stream(io.BytesIO(text.encode()), Input(source="rank1.log"), col)
    if any(f.exit for f in col.findings):
        launcher_zero(col)
    exited = {f.exit["signature"] for f in col.findings if f.exit}
    return ({f.code for f in col.findings} | exited) - {None}


def test_every_signature_declares_examples():
    assert [s.code for s in signatures.CATALOGUE if not s.examples] == []


@pytest.mark.parametrize(
    "sig,text", EXAMPLES, ids=[f"{s.code}-{i}" for i, (s, _) in enumerate(EXAMPLES)]
)
def test_example_matches_its_signature_and_only_compatible_ones(sig, text):
    noisy = "some noise\n" + text + "\nmore noise"
    got = recognised(noisy)
    assert sig.code in got, (text, got)
    if sig.pattern is not None and sig.fallback is None:  # the probe's reading finds it too
        assert sig.code in [m.code for m in signatures.classify(noisy)], text
    assert {FAMILY[c] for c in got} == {FAMILY[sig.code]}, (text, got)
    lines = text.splitlines()
    # the lines a reader must see hold an anchor (inside an open record, a traceback's body or
    # a crashed thread's frames, every line is read)
    sc = signatures.Scanner(generic=True)
    for i, line in enumerate(lines, 1):
        if not sc.wants_every_line:
            assert any(a in line for a in signatures.ANCHORS), line
        sc.feed(i, line)
    if sig.pattern is not None and len(lines) == 1:
        got = signatures.classify(text, generic=sig.fallback is not None)
        m = next(m for m in got if m.code == sig.code)
        assert m.line == signatures.strip_ansi(text).strip()[:300] and m.meaning and m.remedy


# the exception wrapper an example line may carry; MLX also prints the bare message (std::cerr,
# a C++ caller, a log that keeps only the message)
_WRAPPER = re.compile(r"^(RuntimeError|ValueError|std::runtime_error|libc\+\+abi: .*?): ")
BARE = [
    (s, _WRAPPER.sub("", text, count=1))
    for s, text in EXAMPLES
    if s.pattern is not None and "\n" not in text and _WRAPPER.match(text)
]


@pytest.mark.parametrize("sig,text", BARE, ids=[f"{s.code}-{i}" for i, (s, _) in enumerate(BARE)])
def test_a_message_without_its_exception_wrapper_is_read_too(sig, text):
    """The log reader picks lines by the anchors every signature's own pattern requires, not
    by the ``RuntimeError:`` in front: ``[mpi] MPI found but it does not appear to be Open
    MPI.MLX requires ...`` as MLX prints it to stderr is found."""
    if sig.pattern.search(text) is None:
        pytest.skip("the pattern includes the wrapper")
    assert sig.code in recognised("noise\n" + text + "\nnoise"), text


def test_the_bare_open_mpi_warning_is_read():
    text = "[mpi] MPI found but it does not appear to be Open MPI.MLX requires Open MPI but this is MPICH"
    assert "MD669" in recognised(text)


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
    # MD6xx, and MD8xx once MD6xx was full (codes.model.RANGES)
    assert all(kind_of(c) == catalogue.SIGNATURE for c in all_codes)
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


def test_the_scanner_names_no_code():
    """What a signature is recognised by is declared on it; the scanner only reads text."""
    import inspect

    from meshdoctor.signatures import scanner

    assert not re.search(r"MD\d{3}", inspect.getsource(scanner))


@pytest.mark.parametrize(
    "line,says",
    [
        ("NCCL WARN socketStartConnect: exceeded retries (20000)", "refused on every retry"),
        ("NCCL WARN Bootstrap : no socket interface found", "NCCL_SOCKET_IFNAME"),
        (
            "NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
            "one rank per GPU",
        ),
        ("NCCL WARN Cuda failure 'out of memory'", "ran out of GPU memory"),
        (
            "NCCL WARN NET/Socket : peer 10.0.0.2<55555> message truncated : receiving "
            "1048576 bytes instead of 65536",
            "different sizes or in a different order",
        ),
    ],
)
def test_an_nccl_warning_of_a_known_class_says_what_it_means(line, says):
    (m,) = [m for m in signatures.classify("node1:2345:2400 [0] " + line) if m.code == "MD653"]
    assert says in m.meaning, m.meaning


def test_an_nccl_warning_of_no_known_class_keeps_the_generic_meaning():
    (m,) = signatures.classify("NCCL WARN something new")
    assert m.code == "MD653" and "Here:" not in m.meaning


def test_every_match_of_every_line_signature_holds_an_anchor():
    """The log reader feeds only lines holding an anchor: every text a line signature's
    pattern can match holds one (checked on the pattern itself, not only on its examples)."""
    from meshdoctor.signatures.scanner import anchored

    loose = [s.code for s in signatures.CATALOGUE if s.pattern is not None]
    assert [c for c in loose if not anchored(signatures.BY_CODE[c].pattern)] == []
    assert len(signatures.ANCHORS) <= 64  # one automaton over them keeps its SIMD prefilter
