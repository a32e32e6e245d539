"""meshdoctor.probe.api used from code: a ProbeRequest in, a Verdict out (a real 2-rank ring
probe over loopback, mlx CPU build), and a request the probe cannot run raising the typed error
before anything starts."""

from __future__ import annotations

import dataclasses

import pytest

from meshdoctor.commands.probe import probe as probe_command
from meshdoctor.probe import api
from meshdoctor.probe.setup import ProbeSetupError
from meshdoctor.ranks import find_ranks
from tests.helpers import validate


def test_the_request_has_the_command_lines_defaults():
    req = api.ProbeRequest()
    cli = probe_command.make_context("probe", []).params  # parsed, not run
    # every field of the request is an option of the command, by name (beside_hint: the
    # refusal's wording, which the command line leaves as it is)
    for field in dataclasses.fields(api.ProbeRequest):
        if field.name != "beside_hint":
            assert getattr(req, field.name) == cli[field.name], field.name
    assert req.given == []
    assert api.ProbeRequest(nranks=3).given == ["-n"]


def test_a_two_rank_ring_probe_from_code_is_a_go():
    pytest.importorskip("mlx.core")
    events, checked = [], []
    req = api.ProbeRequest(  # beside whatever else runs on the box (the gate is not tested here)
        nranks=2, backend="ring", op="all_sum", size="64KiB", iters=2, beside_running_job=True
    )
    v = api.probe(
        req, on_event=lambda rank, ev, launch: events.append(ev["ev"]), on_checked=checked.append
    )
    assert checked == [v]
    doc = v.finish().to_dict()
    validate(doc)
    assert v.verdict == "go" and v.exit_code == 0, doc["results"]
    p = doc["probe"]
    assert p["outcome"] == "ok" and p["backend"] == "ring" and p["world_size"] == 2
    assert [o["op"] for o in p["ops"]] == ["all_sum"] and p["ops"][0]["wrong"] == 0
    assert "ready" in events and "leave" in events
    assert not find_ranks(p["run_id"])


@pytest.mark.parametrize(
    "req, param",
    [
        (api.ProbeRequest(nranks=2, size="12 parsecs"), "--size"),
        (api.ProbeRequest(nranks=2, backend="jaccl"), "--backend"),
        (api.ProbeRequest(hosts="10.0.0.1,10.0.0.2", nranks=2), "--hosts/-n"),
        (api.ProbeRequest(hostfile="/nonexistent/hostfile.json"), "--hostfile"),
    ],
)
def test_a_bad_request_raises_the_typed_error_before_anything_runs(req, param):
    checked = []
    with pytest.raises(ProbeSetupError) as exc:
        api.probe(req, on_checked=checked.append)
    assert exc.value.param == param and str(exc.value)
    assert checked == []
