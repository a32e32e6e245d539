"""``--format oneline`` (render/oneline.py): the first failure first, ``(+N more)``, and never
more than 80 bytes of UTF-8 with its newline, whatever the summary (node-problem-detector cuts a
plugin's output at max_output_length, 80 by default)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from meshdoctor.model import HostInfo, Result, Verdict
from meshdoctor.render import oneline


def _doc(*results: Result, strict: bool = False, hosts=()) -> dict:
    v = Verdict(command="check", strict=strict, results=list(results), hosts=list(hosts))
    return v.finish().to_dict()


def test_the_first_failure_comes_first_with_the_count_of_the_others():
    doc = _doc(
        Result("MD302", "node.memory", "warn", "hot"),
        Result("MD301", "proc.stale_ranks", "error", "could not read"),
        Result("MD113", "gpu.health", "fail", "GPU 3 row remap pending"),
        Result("MD202", "rdma.ports", "fail", "rdma_en3 is PORT_DOWN"),
    )
    assert oneline.render(doc) == "NO-GO MD113 gpu.health GPU 3 row remap pending (+2 more)\n"


def test_go_counts_and_unknown_names_the_error_or_the_host():
    assert oneline.render(_doc(Result("A", "a", "ok", "x"), Result("B", "b", "skip", "y"))) == (
        "GO 1 ok, 1 skip\n"
    )
    assert oneline.render(_doc(Result("MD100", "meshdoctor", "error", "internal error"))) == (
        "UNKNOWN MD100 meshdoctor internal error\n"
    )
    doc = _doc(Result("A", "a", "ok", "x"), hosts=[HostInfo("mac02", reachable=False)])
    assert oneline.render(doc) == "UNKNOWN unreachable: mac02\n"


def test_strict_counts_a_warning_and_several_hosts_name_the_host():
    doc = _doc(
        Result("MD302", "node.memory", "warn", "hot", host="mac01"),
        Result("MD101", "node.platform", "ok", "fine", host="mac02"),
        strict=True,
        hosts=[HostInfo("mac01"), HostInfo("mac02")],
    )
    assert oneline.render(doc) == "NO-GO MD302 node.memory mac01: hot\n"


def test_a_long_summary_is_cut_and_the_count_stays():
    doc = _doc(
        Result("MD113", "gpu.health", "fail", "é" * 200),
        Result("MD202", "rdma.ports", "fail", "x"),
    )
    line = oneline.render(doc)
    assert len(line.encode("utf-8")) <= oneline.MAX_BYTES
    assert line.startswith("NO-GO MD113 gpu.health éé") and line.endswith("... (+1 more)\n")


@settings(max_examples=200, deadline=None)
@given(
    summary=st.text(max_size=300),
    check=st.text(max_size=120),
    host=st.text(max_size=60),
    more=st.integers(0, 3),
)
def test_never_over_80_bytes_and_always_one_line(summary, check, host, more):
    results = [Result("MD113", check or "c", "fail", summary, host=host)]
    results += [Result("MD202", "rdma.ports", "fail", "x", host="other") for _ in range(more)]
    line = oneline.render(_doc(*results))
    data = line.encode("utf-8")  # decodes: never cut inside a character
    assert len(data) <= oneline.MAX_BYTES
    assert line.endswith("\n") and "\n" not in line[:-1] and line.startswith("NO-GO ")
