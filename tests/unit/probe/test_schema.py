"""The probe section's JSON schema ($defs/probe in meshdoctor/verdict.schema.json) and the report's
one function per outcome: verdicts built from launches written as the launcher records them
validate, each with the result a user would read; a malformed probe section is rejected. (The
real loopback probes validate their --json output in tests/cli/test_probe.py and elsewhere.)"""

from __future__ import annotations

import copy
import signal

import jsonschema
import pytest

from meshdoctor.model import Verdict
from meshdoctor.probe import report
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome, ProbeRun
from meshdoctor.mlx.backends import PROBE_BACKENDS
from tests.helpers import SCHEMA, VALIDATOR, validate

STEP = {"op": "all_sum", "phase": "timed", "iter": 1, "seq": 7}


def _rank(rank, formed=True, rc=0, done=True):
    st = RankState(rank, "localhost", pid=4000 + rank, returncode=rc, exited_at=1.0 + rank)
    st.ready = {"mlx": "0.32.4", "python": "3.12.3"}
    st.done = done
    st.last_step = dict(STEP)
    if formed:
        st.completed = {"init/init": 1, "all_sum/timed": 2, "all_sum/soak": 2}
    st.results = [
        {"op": "all_sum", "size": 4096, "dtype": "float32", "times": [0.01, 0.02]}
        | {"wrong": 0, "checked": 2048},
        {"op": "sum_scatter", "skipped": "not in this MLX", "unsupported": True},
    ]
    if rank == 1:
        st.results.append(
            {"op": "pair", "src": 0, "dst": 1, "size": 4096, "times": [0.001], "wrong": 0}
        )
    if rank == 0:
        st.results.append(
            {"op": "pair", "src": 1, "dst": 0, "size": 4096, "times": [0.002], "wrong": 0}
        )
    return st


def _run(kind, ranks, **out_kw):
    cfg = ProbeConfig(
        hostfile=local_hostfile(2), ops=["all_sum", "sum_scatter"], size=4096, pairs=True, soak=2
    )
    out = LaunchOutcome(kind, "md-probe-x", ranks, {}, 5.0, started_at=0.0, **out_kw)
    out.early_exits = {s.rank: s.returncode for s in ranks if s.returncode is not None}
    out.finished_at = 3.0
    out.actions = [{"action": "SIGTERM rank 0 (pid 4000)", "outcome": "exited"}]
    run = ProbeRun(cfg, "md-probe-x", launches=[out])
    return report.build(run, Verdict(command="probe")).finish().to_dict()


def _codes(doc, code):
    return [(r["status"], r["summary"]) for r in doc["results"] if r["code"] == code]


def test_a_go_probe_validates_with_figures_pairs_and_soak():
    doc = _run("ok", [_rank(0), _rank(1)])
    validate(doc)
    p = doc["probe"]
    assert p["outcome"] == "ok" and doc["exit_code"] == 0
    assert p["ops"][0]["busbw_gbs"] == 0.00027307  # 4096 B / 1e9 / 0.015 s x 2(2-1)/2
    assert p["pairs"]["slowest"]["src"] == 1 and p["soak"]["completed"] == 2
    assert _codes(doc, "MD505")[0][1].startswith("all_sum 4KiB: busbw 273.070 KB/s")


def test_every_outcome_kind_validates_and_names_what_happened():
    lost = _rank(0, rc=1, done=False)
    lost.stderr.append("[ring] connection to a peer was lost")  # a consequence (MD613)
    dead = _run("dead", [lost, _rank(1, rc=-signal.SIGKILL, done=False)])
    validate(dead)
    ((status, summary),) = _codes(dead, "MD502")
    assert status == "fail" and summary.startswith("rank 1 (localhost, pid 4001) was killed by")
    assert summary.endswith("; rank 0 then failed (peer lost)")

    hung = _run(
        "hang",
        [_rank(0, rc=None, done=False), _rank(1, rc=None, done=False)],
        hang={
            "step": STEP,
            "waiting": [dict(STEP, rank=0, host="localhost", waited_s=5.2)],
            "not_arrived": [{"rank": 1, "host": "localhost", "in_step": False, "stalled": True}],
            "no_heartbeat": [{"rank": 1, "host": "localhost", "silent_s": 5.0, "state": "stopped"}],
        },
        stacks={0: "Thread 0x1 (most recent call first):"},
    )
    validate(hung)
    assert "never arrived: rank 1 (process stopped" in _codes(hung, "MD503")[0][1]
    assert hung["probe"]["stacks"] == {"0": "Thread 0x1 (most recent call first):"}

    init = _run("init", [_rank(0, formed=False, rc=1, done=False), _rank(1, formed=False)])
    validate(init)
    assert _codes(init, "MD501")[0][0] == "fail"

    start = _run("start", [_rank(0, formed=False, rc=1, done=False), _rank(1, formed=False)])
    validate(start)
    assert _codes(start, "MD509")[0][0] == "error" and start["exit_code"] == 3

    cut = _run("interrupted", [_rank(0), _rank(1)], message="interrupted by SIGTERM")
    validate(cut)
    assert _codes(cut, "MD510") == [("error", "interrupted by SIGTERM; every rank was torn down")]


def test_a_probe_that_never_launched_validates():
    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=4096)
    run = ProbeRun(cfg, "md-probe-p", preflight={"where": "rank 0", "message": "10.9.9.9 not here"})
    doc = report.build(run, Verdict(command="probe")).finish().to_dict()
    validate(doc)
    assert doc["probe"]["outcome"] == "preflight" and doc["probe"]["launches"] == 0


def _broken(doc, change):
    bad = copy.deepcopy(doc)
    change(bad["probe"])
    return bad


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["ops"][0].update(busbw_gbs="0.00027307"),  # busbw as a string
        lambda p: p["ops"][0].pop("algbw_gbs"),  # busbw without algbw
        lambda p: p.pop("world_size"),  # always present
        lambda p: p.update(outcome="exploded"),
        lambda p: p["ranks"][0].update(signal=9),
        lambda p: p["ranks"][1].update(surprise=True),
        lambda p: p["pairs"]["cells"][0]["time_s"].pop("median"),
        lambda p: p["soak"].update(hang_rate=2.0),
        lambda p: p.update(busbw="fast"),  # a key the probe section does not have
    ],
    ids=[
        "busbw-string",
        "busbw-without-algbw",
        "no-world-size",
        "unknown-outcome",
        "signal-number",
        "unknown-rank-key",
        "pair-without-median",
        "hang-rate-above-1",
        "unknown-key",
    ],
)
def test_a_malformed_probe_section_is_rejected(change):
    doc = _run("ok", [_rank(0), _rank(1)])
    validate(doc)
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(_broken(doc, change))


def test_the_schema_and_the_option_list_the_backends_the_probe_runs():
    from meshdoctor.commands.probe import probe

    assert SCHEMA["$defs"]["probe"]["properties"]["backend"]["enum"] == list(PROBE_BACKENDS)
    choice = next(o for o in probe.params if o.name == "backend").type
    assert list(choice.choices) == list(PROBE_BACKENDS)
