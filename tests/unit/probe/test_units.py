"""Probe parts that need no MLX ranks: sizes, the environment contract (jaccl included, it
cannot run here), the event tracker's hang analysis, usage checks."""

from __future__ import annotations

import json

import pytest

from meshdoctor.hostfile.load import parse
from meshdoctor.probe import env as envmod
from meshdoctor.probe import config, worker
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.events import RankState, Tracker, parse_line
from meshdoctor.probe.errors import ProbeNotNow
from meshdoctor.probe.setup import ProbeSetupError, make_config
from meshdoctor.probe.sizes import SizeError, format_size, memory_needed, parse_size
from meshdoctor.ranks import PROBE_MARKER_ENV


@pytest.mark.parametrize(
    "text,n",
    [
        ("256MiB", 256 << 20),
        ("1GiB", 1 << 30),
        ("4096", 4096),
        ("64KB", 64000),
        ("8M", 8 << 20),
        ("1.5KiB", 1536),
        (" 2 GIB ", 2 << 30),
        ("100B", 100),
        # b is a bit, in sizes as in rates (--min-busbw 800Mb/s): one meaning of each letter
        ("10MB", 10**7),
        ("10Mb", 10**7 // 8),
        ("80Mb", 10**7),
        ("8Mib", 1 << 20),
        (" 2 gib ", 2 << 27),
        ("4096b", 512),
        ("64kb", 8000),
    ],
)
def test_sizes_parse(text, n):
    assert parse_size(text) == n


def test_b_is_a_bit_in_every_size_and_rate():
    from meshdoctor.probe.sizes import parse_rate

    assert parse_size("800Mb") * 1e-9 == parse_rate("800Mb/s") == 0.1  # bytes, GB/s
    assert parse_size("10GB") * 1e-9 == parse_rate("10GB/s") == 10.0
    with pytest.raises(SizeError, match="whole number of bytes"):
        parse_size("3b")


@pytest.mark.parametrize("text", ["", "abc", "-5", "0", "12XB", "1.3B", "2TiB", "MiB", "1e9"])
def test_sizes_nonsense(text):
    with pytest.raises(SizeError) as e:
        parse_size(text)
    assert "256MiB" in str(e.value)  # the message shows valid examples


def test_format_and_memory():
    assert format_size(256 << 20) == "256MiB" and format_size(1000) == "1000B"
    assert memory_needed(1 << 30, 3) == 3 * (4 * (1 << 30) + (256 << 20))


def test_value_pattern_sums_stay_exact():
    for dtype, limit in worker.EXACT_LIMIT.items():
        for n in (2, 3, 8, 64, 300):
            m = worker.value_modulus(dtype, n)
            assert 1 <= m <= worker.VALUE_MOD_MAX
            assert m * n <= max(limit, n), (dtype, n)


JACCL_HF = {
    "backend": "jaccl",
    "envs": ["MLX_METAL_FAST_SYNCH=1"],
    "hosts": [
        {"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [None, "rdma_en3", ["rdma_en4", "rdma_en5"]]},
        {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en3", None, "rdma_en4"]},
        {"ssh": "m3", "ips": ["10.0.0.3"], "rdma": ["rdma_en5", "rdma_en3", None]},
    ],
}


def test_jaccl_environment_and_device_matrix():
    hf = parse(json.dumps(JACCL_HF))
    env, files = envmod.backend_env(hf, "jaccl", deadline_s=20.0)
    assert env["MLX_JACCL_COORDINATOR"] == "10.0.0.1:32323"
    assert "MLX_JACCL_RING" not in env
    assert env["JACCL_TIMEOUT_ACTION"] == "throw"
    assert int(env["JACCL_PROGRESS_TIMEOUT_MS"]) == 15000 < 20.0 * 1000
    assert json.loads(files["MLX_IBV_DEVICES"]) == [h["rdma"] for h in JACCL_HF["hosts"]]
    assert "MLX_HOSTFILE" not in files
    r1 = envmod.rank_env(
        hf, 1, run_id="md-probe-x", plan={"ops": ["all_sum"]}, shared_env=env, files=files
    )
    assert r1["MLX_RANK"] == "1" and r1[PROBE_MARKER_ENV] == "md-probe-x"
    assert r1["MLX_METAL_FAST_SYNCH"] == "1"  # hostfile envs pass through
    assert json.loads(r1[worker.FILES_ENV]) == files
    assert json.loads(r1[worker.PLAN_ENV]) == {"ops": ["all_sum"]}
    assert worker.MARKER_ENV == PROBE_MARKER_ENV


def test_jaccl_ring_environment_and_guard_below_deadline():
    hf = parse(json.dumps(dict(JACCL_HF, backend="jaccl-ring")))
    env, _ = envmod.backend_env(hf, "jaccl-ring", port=40000, deadline_s=2.0)
    assert env["MLX_JACCL_RING"] == "1" and env["MLX_JACCL_COORDINATOR"] == "10.0.0.1:40000"
    assert int(env["JACCL_PROGRESS_TIMEOUT_MS"]) == 1500


def test_jaccl_environment_refuses_a_short_row():
    bad = json.loads(json.dumps(JACCL_HF))
    bad["hosts"][2]["rdma"] = ["rdma_en5", None]
    with pytest.raises(envmod.EnvError, match=r"hosts\[2\]\.rdma has 2 entries, needs 3"):
        envmod.backend_env(parse(json.dumps(bad)), "jaccl")


def test_ring_hostfile_entries():
    hf = parse(
        json.dumps(
            [
                {"ssh": "a", "ips": ["10.0.0.1", "10.1.0.1"]},
                {"ssh": "b", "ips": ["10.0.0.2", "10.1.0.2"]},
            ]
        )
    )
    assert envmod.ring_entries(hf, [5000, 5001, 5002, 5003]) == [
        ["10.0.0.1:5000", "10.1.0.1:5001"],
        ["10.0.0.2:5002", "10.1.0.2:5003"],
    ]
    with pytest.raises(envmod.EnvError):
        envmod.ring_entries(parse(json.dumps([{"ssh": "a"}, {"ssh": "b"}])), [1, 2])


def test_pairs_plan():
    measured, unsupported = config.plan_pairs(4, "ring")
    assert [0, 2] in unsupported and [1, 3] in unsupported and [0, 1] in measured
    assert len(measured) == 8 and len(unsupported) == 4
    assert len(config.plan_pairs(4, "jaccl")[0]) == 12


def test_deadline_from_size_and_timeout():
    cfg = config.ProbeConfig(hostfile=config.local_hostfile(3), size=256 << 20, cpus=8)
    d = config.collective_deadline(cfg)
    # slack + bus bytes at the floor rate + a ring step allowance for each of the 2(n-1) steps
    assert d == pytest.approx(10 + (256 << 20) * 4 / 3 / 20e6 + 0.05 * 4)
    assert config.oversubscription(cfg) is None
    # the warm-up grows it: 5 x the slowest warm-up call, never below the size's deadline
    assert config.measured_deadline(cfg, 1.0) == pytest.approx(d)
    assert config.measured_deadline(cfg, 20.0) == pytest.approx(100.0)
    cfg.timeout = 3.0
    assert config.collective_deadline(cfg) == 3.0
    assert config.measured_deadline(cfg, 20.0) == 3.0  # an explicit --timeout stays as given
    assert config.init_deadline(cfg) == config.INIT_DEADLINE_S


def test_more_local_ranks_than_cpus_is_oversubscription_and_stretches_the_deadline():
    cfg = config.ProbeConfig(hostfile=config.local_hostfile(6), size=4096, cpus=2)
    assert config.oversubscription(cfg) == {"ranks": 6, "cpus": 2, "factor": 3.0}
    base = 10 + 4096 * 10 / 6 / 20e6 + 0.05 * 10
    assert config.collective_deadline(cfg) == pytest.approx(3 * base)
    # ranks over ssh are not counted: their hosts' CPUs are not known here
    remote = parse(json.dumps([{"ssh": f"h{i}", "ips": [f"10.0.0.{i + 1}"]} for i in range(6)]))
    assert config.oversubscription(config.ProbeConfig(hostfile=remote, cpus=2)) is None


def _ev(kind, **kw):
    return dict(kw, ev=kind)


def test_hang_analysis_names_waiting_missing_and_silent():
    ranks = [RankState(i, "localhost") for i in range(3)]
    tr = Tracker(ranks, now=0.0)
    for r in range(3):
        tr.event(r, _ev("ready", pid=100 + r), 0.1)
        tr.event(r, _ev("enter", op="init", phase="init", iter=0, seq=1), 0.2)
        tr.event(r, _ev("leave", op="init", phase="init", iter=0, seq=1), 1.0)
    for r in (0, 1):
        tr.event(r, _ev("enter", op="all_sum", phase="timed", iter=3, seq=2), 1.1)
        tr.event(r, _ev("hb", seq=2), 4.0)
    rep = tr.hang_report(now=4.2, hb_stale_s=2.0, states={2: "stopped"})
    assert rep["step"] == {"op": "all_sum", "phase": "timed", "iter": 3, "seq": 2}
    assert [w["rank"] for w in rep["waiting"]] == [0, 1]
    assert rep["waiting"][0]["waited_s"] == pytest.approx(3.1)
    assert [a["rank"] for a in rep["not_arrived"]] == [2]
    assert rep["not_arrived"][0]["last_op"] == "init"
    assert [s["rank"] for s in rep["no_heartbeat"]] == [2]
    assert rep["no_heartbeat"][0]["state"] == "stopped"
    assert not tr.failed()
    tr.exited(2, -9, 4.3)
    assert tr.first_failure == {"rank": 2, "kind": "exit", "at": 4.3}


def test_parse_line_ignores_noise():
    assert parse_line('{"ev":"hb","rank":0}') == {"ev": "hb", "rank": 0}
    assert parse_line("[ring] something on stdout") is None
    assert parse_line('{"not": "an event"}') is None and parse_line("{broken") is None


def _cfg(available=None, python=None, **kw):
    """make_config of a request of 1 MiB, 1 iteration, no warm-up, changed by ``kw``."""
    from meshdoctor.probe.api import ProbeRequest

    request = ProbeRequest(**{"size": "1MiB", "iters": 1, "warmup": 0, **kw})
    return make_config(request, available=available, python=python)


def test_setup_defaults_and_usage_errors():
    cfg = _cfg()
    assert cfg.world_size == 2 and cfg.backend == "ring"
    assert cfg.ops == ["all_sum", "all_gather", "send_recv", "all_max", "all_min", "sum_scatter"]
    with pytest.raises(ProbeSetupError, match="only one"):
        _cfg(hosts="a,b", nranks=2)  # --hosts and -n
    with pytest.raises(ProbeSetupError, match="IP"):
        _cfg(hosts="alpha,beta")
    with pytest.raises(ProbeNotNow) as e:  # a state of the machine, not a usage error
        _cfg(size="1GiB", nranks=3, available=2 << 30)
    assert e.value.param == "--size" and "12.75GiB" in str(e.value) and "2GiB" in str(e.value)
    assert not isinstance(e.value, ProbeSetupError)


def test_a_fault_can_name_its_step_and_fires_once():
    from meshdoctor.probe.worker import parse_faults

    assert parse_faults("stop:1:soak.all_sum.3,kill:0:7,corrupt:2,stop:1:bad") == [
        ("stop", 1, "soak.all_sum.3"),
        ("kill", 0, 7),
        ("corrupt", 2, None),
    ]


def test_rank_stderr_error_after_a_progress_bar_is_classified():
    """A rank's stderr line of ~150 KB of \\r progress, then the error on the same line (and a
    200 KB line with the error at its end): the error is kept and classified."""
    from meshdoctor.probe.culprits import rank_signatures

    bar = "".join(f"\r{i:3d}%|{'#' * (i // 5):<20}| {i}/100" for i in range(100))
    ranks = [RankState(0, "localhost"), RankState(1, "localhost")]
    tr = Tracker(ranks, now=0.0)
    tr.stderr_line(0, (bar * 40)[:150_000] + "\r[jaccl] Recv failed with errno=2\n")
    tr.stderr_line(1, "x" * 200_000 + " RuntimeError: [jaccl] Recv failed with errno=2\n")
    for st in ranks:
        assert [m.code for m in rank_signatures(st)] == ["MD606"]
        assert len(st.stderr) <= 2 and st.stderr_lines == len(st.stderr)
    # a stdout line that is not an event (NCCL prints there) is read the same way
    out = RankState(2, "localhost")
    tr = Tracker([RankState(0, "localhost"), RankState(1, "localhost"), out], now=0.0)
    nccl = "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there was a"
    tr.stdout_line(2, (bar * 40)[:150_000] + "\r" + nccl + " network error'\n", 1.0)
    assert "MD650" in [m.code for m in rank_signatures(out)]


def test_probe_ranks_use_meshdoctor_python(monkeypatch):
    monkeypatch.setenv("MESHDOCTOR_PYTHON", "/opt/ranks/bin/python3")
    cfg = ProbeConfig(
        hostfile=local_hostfile(2),
        backend="ring",
        ops=["all_sum"],
        size=4096,
        iters=1,
        warmup=0,
        dtype="float32",
        timeout=None,
        soak=0,
        pairs=False,
        port=None,
    )
    assert cfg.python == "/opt/ranks/bin/python3"


def test_a_step_inside_a_timed_batch_is_known_from_the_heartbeat():
    # worker.timed_batch: only the batch's first step writes enter and its last leave; the
    # heartbeat carries the step in between, and that is progress
    tr = Tracker([RankState(0, "h")], 0.0)
    tr.event(0, _ev("enter", op="all_sum", phase="timed", iter=0, seq=5), 1.0)
    step = {"op": "all_sum", "phase": "timed", "iter": 6, "seq": 11, "t0": 500.0}
    tr.event(0, dict(_ev("hb", seq=11, op="all_sum", step=step), t=500.25), 2.0)
    st = tr.ranks[0]
    # it began 0.25 s before the heartbeat, by the rank's clock
    assert st.current["seq"] == 11 and st.current["since"] == 1.75 and st.last_seq == 11
    assert tr.last_progress == 1.75
    tr.event(0, dict(_ev("hb", seq=11, op="all_sum", step=step), t=501.0), 3.0)  # still there
    assert st.current["since"] == 1.75 and tr.last_progress == 1.75
    tr.event(0, _ev("leave", op="all_sum", phase="timed", iter=9, seq=14, steps=10), 3.5)
    assert st.current is None and st.completed["all_sum/timed"] == 10
    assert st.last_step["iter"] == 9 and st.last_seq == 14
