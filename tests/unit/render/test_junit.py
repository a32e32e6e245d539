"""``--format junit`` (render/junit.py), read back by a real JUnit parser (junitparser): one
test case per result, failure / error / skipped as the status says, counts on the suite, and
characters XML cannot hold escaped instead of breaking the document."""

from __future__ import annotations

from junitparser import Error, Failure, JUnitXml, Skipped

from meshdoctor.model import Remediation, Result, Verdict
from meshdoctor.render import junit


def _suite(v: Verdict):
    xml = JUnitXml.fromstring(junit.render(v.finish().to_dict()).encode("utf-8"))
    suites = list(xml)
    assert len(suites) == 1
    return suites[0]


def test_one_case_per_result_with_its_outcome():
    v = Verdict(command="check")
    v.results += [
        Result("MD101", "node.platform", "ok", "linux", host="m0"),
        Result(
            "MD113",
            "gpu.health",
            "fail",
            "GPU 3 row remap pending",
            host="m0",
            remediation=Remediation("reset the GPU", command="nvidia-smi -r -i 3"),
        ),
        Result("MD301", "proc.stale_ranks", "error", "could not read", host="m0"),
        Result("MD205", "thunderbolt.links", "skip", "not on linux", host="m0"),
        Result("MD302", "node.memory", "warn", "hot", host="m0"),
    ]
    suite = _suite(v)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 1, 1, 1)
    cases = {c.name: c for c in suite}
    assert list(cases) == [
        "MD101 node.platform",
        "MD113 gpu.health",
        "MD301 proc.stale_ranks",
        "MD205 thunderbolt.links",
        "MD302 node.memory",
    ]
    assert cases["MD101 node.platform"].is_passed
    fail = cases["MD113 gpu.health"].result
    assert isinstance(fail[0], Failure) and fail[0].message == "GPU 3 row remap pending"
    assert "nvidia-smi -r -i 3" in fail[0].text
    assert isinstance(cases["MD301 proc.stale_ranks"].result[0], Error)
    assert isinstance(cases["MD205 thunderbolt.links"].result[0], Skipped)
    assert cases["MD302 node.memory"].is_passed  # a warning passes unless --strict
    assert cases["MD113 gpu.health"].classname == "meshdoctor.check.m0"
    props = {p.name: p.value for p in suite.properties()}
    assert props["verdict"] == "no-go" and props["exit_code"] == "1"


def test_strict_fails_a_warning():
    v = Verdict(command="check", strict=True)
    v.results.append(Result("MD302", "node.memory", "warn", "hot"))
    suite = _suite(v)
    assert suite.failures == 1 and isinstance(list(suite)[0].result[0], Failure)


def test_text_xml_cannot_hold_is_escaped():
    v = Verdict(command="triage")
    v.results.append(Result("MD690", "tri\x00age", "fail", "bell\x07 esc\x1b[31m <&>"))
    case = list(_suite(v))[0]
    assert case.name == "MD690 tri\\x00age"
    assert case.result[0].message == "bell\\x07 esc\\x1b[31m <&>"
