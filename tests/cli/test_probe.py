"""meshdoctor probe with real MLX ranks over loopback (ring backend, mlx CPU build).

Every JSON verdict is validated against the shipped schema (tests/helpers.py ``run_cli``).
After every test no process carrying a probe marker created during the test may remain.
Sizes and iteration counts are modest: this runs on a loaded 2-core box.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import socket
import sys
import tempfile
import time
import uuid

import psutil
import pytest

from meshdoctor.model import Verdict
from meshdoctor.probe import report
from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.launcher import run_probe
from meshdoctor.ranks import find_ranks
from tests.helpers import outcome, run_cli, validate

pytest.importorskip("mlx.core")


TAG_ENV = "MESHDOCTOR_TEST_TAG"  # inherited by every rank a test starts, and only by those


def _tag_of(pid: int):
    try:
        return psutil.Process(pid).environ().get(TAG_ENV)
    except psutil.Error:
        return None


@pytest.fixture(autouse=True)
def no_rank_left_behind(clean_env, monkeypatch, tmp_path):
    """Nothing this test started survives it, and no temp file it made: its ranks carry a tag
    of this test in their environment and write their temp files into a directory of this test,
    so probes that other programs run on the machine are neither counted nor touched."""
    tag = f"md-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for k, v in ((TAG_ENV, tag), ("TMPDIR", str(tmp))):
        monkeypatch.setenv(k, v)
        clean_env[k] = v
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield
    left = [r for r in find_ranks() if r.marker and _tag_of(r.pid) == tag]
    for r in left:  # do not leak into the next test, but fail this one
        try:
            os.kill(r.pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, [r.to_dict() for r in left]
    files = glob.glob(os.path.join(str(tmp), "meshdoctor-probe-*"))
    assert not files, files  # MLX_HOSTFILE copies are removed even when a rank was killed


def env_with(clean_env, **kw):
    env = dict(clean_env)
    env.pop("MESHDOCTOR_PROBE_FAULT", None)
    env.update(kw)
    return env


def codes_of(doc, code):
    return [r for r in doc["results"] if r["code"] == code]


def test_three_ranks_64mib_all_ops(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "64MiB",
        "--iters",
        "3",
        "--json",
        env=env_with(clean_env),
        timeout=150,
        private_pids=True,
    )
    assert r.rc == 0, (r.out, r.err)
    p = r.doc["probe"]
    assert p["backend"] == "ring" and p["world_size"] == 3 and p["outcome"] == "ok"
    ops = {o["op"]: o for o in p["ops"]}
    assert set(ops) == {"all_sum", "all_gather", "send_recv", "all_max", "all_min", "sum_scatter"}
    assert ops.pop("sum_scatter")["unsupported"] is True  # the ring has none: skipped
    for o in ops.values():
        assert o["wrong"] == 0 and o["checked"] > 0
        assert o["busbw_gbs"] > 0 and o["algbw_gbs"] > 0
        assert o["time_s"]["min"] <= o["time_s"]["median"] <= o["time_s"]["max"]
        assert o["iters"] == 3
    assert ops["all_sum"]["size_bytes"] == 64 << 20
    assert ops["all_sum"]["busbw_gbs"] == pytest.approx(
        ops["all_sum"]["algbw_gbs"] * 4 / 3, rel=1e-3
    )
    assert ops["all_gather"]["digests_ok"] is True and len(ops["all_gather"]["digests"]) == 3
    assert [x["exit_code"] for x in p["ranks"]] == [0, 0, 0]
    assert all(x["mlx"] for x in p["ranks"])
    assert {x["code"] for x in r.doc["results"]} >= {"MD501", "MD504", "MD505", "MD506"}
    # 3 ranks on a 2-CPU box are oversubscribed (MD512 warns there); all else is ok
    skipped = ("probe.sum_scatter", "probe.oversubscribed")
    assert all(x["status"] == "ok" for x in r.doc["results"] if x["check"] not in skipped)


def test_kill_one_rank_mid_probe_api():
    """kill -9 rank 2 from outside while the probe runs: verdict within 2 s, rank and signal
    named, nothing left."""
    killed = {}

    def hook(rank, ev, launch):
        if (
            rank == 0
            and ev["ev"] == "hb"  # inside a timed batch, the heartbeat carries the step
            and (ev.get("step") or {}).get("op") == "all_sum"
            and (ev.get("step") or {}).get("phase") == "timed"
            and (ev.get("step") or {}).get("iter", 0) >= 5
            and not killed
        ):
            os.kill(launch.procs[2].pid, signal.SIGKILL)
            killed["t"] = time.monotonic()

    cfg = ProbeConfig(hostfile=local_hostfile(3), ops=["all_sum"], size=1 << 20, iters=500)
    run = run_probe(cfg, on_event=hook)
    v = report.build(run, Verdict(command="probe")).finish()
    latency = time.monotonic() - killed["t"]
    doc = v.to_dict()
    validate(doc)
    assert v.exit_code == 1 and latency < 2.0, latency
    dead = codes_of(doc, "MD502")
    assert dead and dead[0]["status"] == "fail"
    assert "rank 2" in dead[0]["summary"] and "SIGKILL" in dead[0]["summary"]
    assert dead[0]["evidence"]["signal"] == "SIGKILL"
    rank2 = doc["probe"]["ranks"][2]
    assert rank2["signal"] == "SIGKILL" and rank2["exit_code"] is None
    # the survivors' own errors went through the signature catalogue
    sigs = {m["code"] for x in doc["probe"]["ranks"][:2] for m in x["signatures"]}
    assert "MD613" in sigs
    assert codes_of(doc, "MD506")[0]["status"] == "ok"
    assert (
        not psutil.pid_exists(run.launches[0].ranks[2].pid)
        or psutil.Process(run.launches[0].ranks[2].pid).status() == psutil.STATUS_ZOMBIE
    )


def test_kill_one_rank_cli(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "1MiB",
        "--op",
        "all_gather",
        "--iters",
        "50",
        "--json",
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="kill:1:6"),
        timeout=60,
        private_pids=True,
    )
    assert r.rc == 1, (r.out, r.err)
    dead = codes_of(r.doc, "MD502")[0]
    assert dead["summary"].startswith("rank 1 ") and "SIGKILL" in dead["summary"]
    assert r.doc["probe"]["detect_s"] < 1.0


def test_a_rank_stopped_during_group_formation_is_named(clean_env):
    # SIGSTOP inside init (step 1): found by the hang report, not by the 45 s formation deadline
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "64KB",
        "--op",
        "all_sum",
        "--iters",
        "3",
        "--json",
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="stop-in:1:1"),
        timeout=120,
        private_pids=True,
    )
    assert r.rc == 1, (r.out, r.err)
    group = [x for x in codes_of(r.doc, "MD501") if x["status"] == "fail"]
    assert group, r.outcome()
    said = group[0]["summary"]
    assert "group formation (ring, 3 ranks) did not finish" in said, said
    assert "rank 1 (process stopped" in said and "within 45 s" not in said, said


def test_a_rank_stopped_before_it_connects_is_named_first(clean_env):
    """Rank 2 stops itself on entering group formation, before it connects. No rank
    heartbeats inside MLX's init, so every rank is silent alike: the stopped process (its state
    read from psutil) is the one named, first and alone in the evidence, and found from its
    state, not by the 45 s formation deadline or a neighbour's "Couldn't connect" after the
    ring's retries."""
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "64KB",
        "--op",
        "all_sum",
        "--iters",
        "3",
        "--json",
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="stop:2:1"),
        timeout=120,
        private_pids=True,
    )
    assert r.rc == 1, (r.out, r.err)
    group = [x for x in codes_of(r.doc, "MD501") if x["status"] == "fail"]
    assert group, r.outcome()
    said = group[0]["summary"]
    assert "did not finish: never arrived: rank 2 (process stopped" in said, said
    assert group[0]["evidence"]["ranks"] == [2], r.outcome()
    assert "within 45 s" not in said and "Couldn't connect" not in said, said


def test_sigstop_one_rank_hang_detected_at_deadline(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--size",
        "64KB",
        "--op",
        "all_sum",
        "--iters",
        "50",
        "--timeout",
        "3",
        "--json",
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="stop:1:6"),
        timeout=90,
    )
    assert r.rc == 1, (r.out, r.err)
    hang = codes_of(r.doc, "MD503")[0]
    assert hang["status"] == "fail"
    assert "never arrived: rank 1 (process stopped" in hang["summary"], hang["summary"]
    ev = hang["evidence"]["hang"]
    assert [a["rank"] for a in ev["not_arrived"]] == [1]
    assert sorted(w["rank"] for w in ev["waiting"]) == [0, 2]
    assert ev["no_progress_s"] >= 3.0 or max(w["waited_s"] for w in ev["waiting"]) >= 3.0
    # stacks of the waiting ranks, via faulthandler
    assert set(r.doc["probe"]["stacks"]) == {"0", "2"}
    assert "most recent call first" in r.doc["probe"]["stacks"]["0"]
    # everything torn down, the stopped rank included (SIGKILL)
    ranks = r.doc["probe"]["ranks"]
    assert ranks[1]["signal"] == "SIGKILL"
    assert all(x["exit_code"] is None or x["exit_code"] != 0 for x in ranks)
    assert codes_of(r.doc, "MD506")[0]["status"] == "ok"


def test_corrupted_value_is_caught(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "1MiB",
        "--iters",
        "2",
        "--json",
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="corrupt:1"),
        timeout=60,
        private_pids=True,
    )
    assert r.rc == 1, (r.out, r.err)
    wrong = {x["check"]: x for x in codes_of(r.doc, "MD504")}
    assert wrong["probe.all_sum"]["status"] == "fail"
    assert wrong["probe.all_sum"]["evidence"]["wrong"] > 0
    ops = {o["op"]: o for o in r.doc["probe"]["ops"]}
    assert ops["all_gather"]["wrong"] > 0 and ops["send_recv"]["wrong"] > 0


def _held_port() -> socket.socket:
    """A loopback port that is bound (so nobody can listen there) but not listening."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s


def test_init_failure_unusable_ring_address(clean_env):
    held = _held_port()
    try:
        port = held.getsockname()[1]
        # rank 1 is given the held port: it cannot listen, rank 0 cannot connect to it
        r = run_cli(
            "probe",
            "-n",
            "2",
            "--port",
            str(port - 1),
            "--size",
            "64KB",
            "--json",
            env=env_with(clean_env),
            timeout=60,
        )
    finally:
        held.close()
    assert r.rc == 1, (r.out, r.err)
    grp = codes_of(r.doc, "MD501")[0]
    assert grp["status"] == "fail"
    assert "rank 1" in grp["summary"] and "Couldn't bind socket" in grp["summary"]
    assert "MD620" in grp["remediation"]["text"]
    assert r.doc["probe"]["outcome"] == "init"
    assert r.elapsed < 30


def test_init_failure_address_not_on_this_machine(clean_env, tmp_path):
    # 192.0.2.1 (TEST-NET-1) is never contacted: the launcher only tries to bind to it locally
    hf = tmp_path / "hosts.json"
    hf.write_text(
        json.dumps(
            [{"ssh": "localhost", "ips": ["127.0.0.1"]}, {"ssh": "localhost", "ips": ["192.0.2.1"]}]
        )
    )
    r = run_cli(
        "probe",
        "--hostfile",
        str(hf),
        "--size",
        "64KB",
        "--json",
        env=env_with(clean_env),
        timeout=30,
    )
    # the hostfile contradicts itself for this machine: a usage error (exit 2), as MD401 says
    assert r.rc == 2 and r.out == "", (r.out, r.err)
    assert "hosts[1].ips[0]: 192.0.2.1 is not an address of this machine" in r.err


def test_pairs_matrix(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "3",
        "--pairs",
        "--op",
        "send_recv",
        "--size",
        "1MiB",
        "--iters",
        "2",
        "--json",
        env=env_with(clean_env),
        timeout=90,
        private_pids=True,
    )
    assert r.rc == 0, (r.out, r.err)
    pf = r.doc["probe"]["pairs"]
    m = pf["busbw_gbs"]
    assert len(m) == 3 and all(m[i][i] is None for i in range(3))
    assert all(m[i][j] > 0 for i in range(3) for j in range(3) if i != j)
    s = pf["slowest"]
    assert m[s["src"]][s["dst"]] == min(m[i][j] for i in range(3) for j in range(3) if i != j)
    pr = codes_of(r.doc, "MD508")[0]
    assert pr["status"] == "ok" and f"{s['src']}->{s['dst']}" in pr["summary"]


def test_soak_counts_a_hang_and_goes_on(monkeypatch):
    # rank 1 stops itself on entering repetition 3 (its barrier): the step is named, not raced
    monkeypatch.setenv("MESHDOCTOR_PROBE_FAULT", "stop:1:soak.all_sum.3")
    cfg = ProbeConfig(
        hostfile=local_hostfile(2), ops=["all_sum"], size=64 << 10, soak=8, timeout=8.0
    )  # a step deadline a loaded 2-core box meets: only the stopped rank's step hangs
    run = run_probe(cfg)
    doc = report.build(run, Verdict(command="probe")).finish().to_dict()
    validate(doc)
    soak = doc["probe"]["soak"]
    assert soak["hangs"] == 1 and soak["relaunches"] == 1, (soak, doc["results"])
    assert soak["hang_steps"][0]["iter"] == 3
    assert soak["completed"] == 7 and soak["calls"] == 8, (
        soak,
        [launch.kind for launch in run.launches],
        outcome(doc),
    )
    assert soak["hang_rate"] == pytest.approx(1 / 8)
    assert codes_of(doc, "MD507")[0]["status"] == "fail" and doc["exit_code"] == 1


# Remote ranks over real ssh: tests/netns/test_probe.py (sshd in network namespaces).


def test_json_path_does_not_import_rich(clean_env):
    code = (
        "import sys\nfrom meshdoctor.cli import cli\n"
        "try:\n    cli(['probe', '-n', '2', '--size', '64KB', '--iters', '1', '--op', "
        "'all_sum', '--json'])\nexcept SystemExit as e:\n"
        "    sys.stderr.write(f'RC={e.code} RICH={\"rich\" in sys.modules}')\n"
    )
    import subprocess

    from tests.helpers import private_pids_prefix

    p = subprocess.run(  # beside no other job's rank (probe -n refuses those, MD411)
        [*private_pids_prefix(), sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env_with(clean_env),
        timeout=60,
    )
    assert "RC=0 RICH=False" in p.stderr, p.stderr
    validate(json.loads(p.stdout))


def test_usage_errors_exit_2(clean_env):
    for args in (
        ["--size", "lots"],
        ["--size", "64MiB", "-n", "3", "--hosts", "a,b"],
        ["-n", "1"],
    ):
        r = run_cli("probe", *args, env=env_with(clean_env), timeout=30)
        assert r.rc == 2, (args, r.out, r.err)
        assert "Error" in r.err


def test_not_enough_memory_right_now_is_could_not_assess_not_a_usage_error(clean_env):
    # reported: "not enough memory right now" was exit 2, like a typo; it is a state of the machine
    r = run_cli("probe", "--size", "900GiB", "-n", "3", env=env_with(clean_env), timeout=30)
    assert r.rc == 3, (r.out, r.err)
    assert "MD509" in r.out and "is available right now" in r.out and "Error" not in r.err
    assert "UNKNOWN (exit 3)" in r.out
    j = run_cli("probe", "--size", "900GiB", "-n", "3", "--json", env=env_with(clean_env))
    (start,) = j.results("MD509")
    assert start["status"] == "error" and start["evidence"]["need_bytes"] > (900 << 30)
    assert "probe" not in j.doc  # nothing was started


def _start_probe(clean_env, *args):
    import subprocess

    return subprocess.Popen(
        # about teardown, not the gate: it must run beside another job's ranks on the box
        [
            sys.executable,
            "-m",
            "meshdoctor",
            "probe",
            "-n",
            "3",
            "--json",
            "--beside-running-job",
            *args,
        ],
        env=env_with(clean_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_ranks(n, launcher, timeout=30.0):
    """The probe ranks ``launcher`` (a Popen of meshdoctor) started, once ``n`` are up."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        kids = {c.pid for c in psutil.Process(launcher.pid).children(recursive=True)}
        ranks = [
            r for r in find_ranks() if (r.marker or "").startswith("md-probe-") and r.pid in kids
        ]
        if len(ranks) >= n:
            return ranks
        time.sleep(0.1)
    raise AssertionError("ranks did not start")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_probe_tears_down_and_still_prints_its_verdict(clean_env, sig):
    p = _start_probe(clean_env, "--size", "16MiB", "--iters", "400", "--op", "all_sum")
    _wait_for_ranks(3, p)
    time.sleep(2.5)  # group formed, collectives running
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3, (
        err[-2000:],
        [
            (x["code"], x["status"], x["summary"])
            for x in json.loads(out or "{}").get("results", [])
        ],
    )
    doc = json.loads(out)
    validate(doc)
    assert [r["status"] for r in codes_of(doc, "MD510")] == ["error"]
    assert codes_of(doc, "MD506")[0]["status"] == "ok"


def test_ranks_do_not_outlive_a_killed_launcher(clean_env):
    p = _start_probe(clean_env, "--size", "16MiB", "--iters", "400", "--op", "all_sum")
    ranks = _wait_for_ranks(3, p)
    time.sleep(2.5)
    os.kill(p.pid, signal.SIGKILL)  # no teardown possible: the ranks must notice by themselves
    p.communicate(timeout=30)
    t_end = time.monotonic() + 5.0
    alive = ranks
    while alive and time.monotonic() < t_end:
        alive = [
            r
            for r in ranks
            if psutil.pid_exists(r.pid) and psutil.Process(r.pid).status() != psutil.STATUS_ZOMBIE
        ]
        time.sleep(0.1)
    assert not alive, [r.to_dict() for r in alive]


def test_ring_hostfile_is_in_the_verdict(clean_env):
    r = run_cli(
        "probe",
        "-n",
        "2",
        "--size",
        "64KiB",
        "--iters",
        "1",
        "--op",
        "all_sum",
        "--json",
        env=env_with(clean_env),
        timeout=90,
    )
    assert r.rc == 0, r.err
    rh = r.doc["probe"]["ring_hostfile"]
    assert len(rh) == 2 and all(e[0].startswith("127.0.0.1:") for e in rh)


def test_a_bug_in_the_launcher_still_tears_every_rank_down():
    """An exception inside the watch loop (here: from the event hook) propagates, but only after
    teardown: the autouse fixture asserts no rank is left."""

    def hook(rank, ev, launch):
        if ev["ev"] == "leave" and ev.get("op") == "init":
            raise RuntimeError("bug in a progress display")

    cfg = ProbeConfig(hostfile=local_hostfile(2), ops=["all_sum"], size=64 << 10, iters=50)
    with pytest.raises(RuntimeError, match="bug in a progress display"):
        run_probe(cfg, on_event=hook)


def test_ranks_that_never_stop_printing_are_cut_stopped_and_named(tmp_path, clean_env):
    """A rank (here: its interpreter) printing without end: each rank's stream is cut at the cap,
    the rank killed, and the verdict says so; no rank is left."""
    from tests.helpers import run_cli, write

    endless = write(tmp_path / "endless-python", '#!/bin/sh\nexec yes \'{"ev": "x"}\'\n')
    endless.chmod(0o755)
    env = dict(clean_env, MESHDOCTOR_PYTHON=str(endless))
    r = run_cli("probe", "--json", env=env, timeout=300, private_pids=True)
    assert r.rc == 3, r.err[-2000:]
    [res] = r.results("MD509")
    assert (
        "rank 0 printed more than 8388608 bytes on stdout (cut there and killed)"
        in (res["summary"])
    )
    assert r.status("MD506") == "ok"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs a CPU affinity mask")
def test_more_ranks_than_cpus_is_named_and_no_defect_of_another_mlx_is_blamed(clean_env):
    """Reported: `probe -n 64 --size 4096` on 2 cores took 8.5-10.2 s per all_sum against a
    10 s deadline and was blamed on the ring deadlock of mlx 0.32.2 with 0.32.4 installed. Here
    6 ranks on 2 CPUs (this process's affinity, which the probe inherits): the oversubscription
    is named with its counts, and a defect the installed MLX does not have is not blamed,
    whether or not a call outlasts its deadline."""
    from meshdoctor.mlx.defects import RING_ALL_SUM_HANG

    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, sorted(before)[:2])
    try:
        cpus = len(os.sched_getaffinity(0))
        r = run_cli(
            "probe",
            "-n",
            "6",
            "--size",
            "4096",
            "--op",
            "all_sum",
            "--iters",
            "3",
            "--json",
            env=clean_env,
            timeout=600,
        )
    finally:
        os.sched_setaffinity(0, before)
    assert r.rc in (0, 1), (r.out, r.err)
    if cpus >= 6:
        pytest.skip("fewer than 6 ranks' worth of CPUs could not be set")
    over = codes_of(r.doc, "MD512")[0]
    assert over["status"] == "warn"
    assert f"6 ranks on this host's {cpus} CPUs (oversubscribed" in over["summary"]
    assert r.doc["probe"]["oversubscribed"]["ranks"] == 6
    assert r.doc["probe"]["step_deadline_s"] >= r.doc["probe"]["deadline_s"]
    versions = {x["mlx"] for x in r.doc["probe"]["ranks"] if x["mlx"]}
    if not any(RING_ALL_SUM_HANG.has(v) for v in versions):
        said = json.dumps(r.doc["results"])
        assert "0.32.2" not in said and "#4475" not in said and "deadlock" not in said


def test_bandwidth_is_judged_against_a_floor_and_a_saved_baseline(clean_env, tmp_path):
    """--min-busbw fails below the rate; --save-baseline keeps a healthy run's figures and a
    later --baseline names the pair that fell, with its wire; the human output shows the
    --pairs matrix."""
    base = tmp_path / "baseline.json"
    common = ("probe", "-n", "2", "--size", "64KB", "--op", "all_sum", "--iters", "3", "--pairs")
    r = run_cli(*common, "--save-baseline", str(base), "--json", env=clean_env, timeout=120)
    assert r.rc == 0, (r.out, r.err)
    saved = codes_of(r.doc, "MD513")[0]
    assert saved["status"] == "ok" and f"baseline saved to {base}" in saved["summary"]
    doc = json.loads(base.read_text())
    assert {(p["src"], p["dst"], p["wire"]) for p in doc["pairs"]} == {
        (0, 1, "127.0.0.1"),
        (1, 0, "127.0.0.1"),
    }
    # a baseline no loopback can reach: every figure is far below it
    for fig in doc["ops"] + doc["pairs"]:
        fig["busbw_gbs"] = 1e6
    base.write_text(json.dumps(doc))
    r = run_cli(
        *common, "--baseline", str(base), "--min-busbw", "1000000GB/s", env=clean_env, timeout=120
    )
    assert r.rc == 1, (r.out, r.err)
    assert "send/recv busbw GB/s (rows send, columns receive)" in r.out and "src\\dst" in r.out
    assert "MD513 probe bandwidth judgement: busbw below --min-busbw 1000000.000 GB/s" in r.out
    assert "rank 0 -> 1 at " in r.out and "of its baseline (wire 127.0.0.1)" in r.out
    bad = run_cli(*common, "--min-busbw", "fast", env=clean_env, timeout=60)
    assert bad.rc == 2 and "--min-busbw" in bad.err and "e.g. 10GB/s" in bad.err


def test_an_interrupted_probe_suggests_the_same_probe_again(clean_env):
    import signal
    import subprocess
    import sys

    args = [
        "probe",
        "-n",
        "2",
        "--size",
        "4KiB",
        "--timeout",
        "60",
        "--json",
        "--beside-running-job",
    ]
    p = subprocess.Popen(  # rank 1 stops at step 3: the probe cannot end before the signal
        [sys.executable, "-m", "meshdoctor", *args],
        env=env_with(clean_env, MESHDOCTOR_PROBE_FAULT="stop:1:3"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2.0)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    doc = json.loads(out)
    (stop,) = [x for x in doc["results"] if x["code"] == "MD510"]
    assert stop["remediation"]["command"] == "meshdoctor " + " ".join(args), stop


def test_probe_hostfile_human_output_shows_the_figures_as_n_does(clean_env, tmp_path):
    """The fleet table stands for the gate's checks only: the probe's own results (MD501,
    MD504, MD505, MD506) are printed after it, ok ones included, as ``probe -n`` prints them."""
    hf = tmp_path / "hosts.json"
    hf.write_text(json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2))
    common = ("--size", "4096", "--iters", "1", "--op", "all_sum")
    fleet = run_cli(
        "probe", "--hostfile", str(hf), *common, env=env_with(clean_env), timeout=180,
        private_pids=True,
    )  # fmt: skip
    local = run_cli(
        "probe", "-n", "2", *common, env=env_with(clean_env), timeout=180, private_pids=True
    )  # fmt: skip
    assert fleet.rc == 0 and local.rc == 0, (fleet.out, fleet.err, local.out)
    assert "fleet: 1 host(s)" in fleet.out, fleet.out
    for code in ("MD501", "MD504", "MD505", "MD506"):
        assert f"✔ {code} " in fleet.out and f"✔ {code} " in local.out, (code, fleet.out)
    assert "busbw" in fleet.out and "#wrong 0 of" in fleet.out, fleet.out


def _beside_a_rank(clean_env, *args: str):
    """``probe ARGS --json`` in a private PID namespace beside a rank of a running job planted
    there (``MLX_RANK=1`` under a live shell): ``(exit status, verdict, stderr, rank pid)``."""
    import subprocess

    from tests.helpers import private_pids_prefix

    prefix = list(private_pids_prefix())
    if not prefix:
        pytest.skip("needs a private PID namespace (unshare)")
    script = (
        "MLX_RANK=1 sleep 300 & rank=$!; sleep 0.5; "
        '"$0" -m meshdoctor probe "$@" --json > "$OUT"; rc=$?; '
        'kill "$rank"; echo "$rank" >&2; exit $rc'
    )
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    try:
        p = subprocess.run(
            # pid 1 of the namespace adopts what it starts: the rank's parent is a second shell
            prefix + ["sh", "-c", 'sh -c "$0" "$@"; exit $?', script, sys.executable, *args],
            env=dict(clean_env, OUT=out),
            capture_output=True,
            text=True,
            timeout=240,
            stdin=subprocess.DEVNULL,
        )
        doc = json.loads(open(out).read())
    finally:
        os.unlink(out)
    validate(doc)
    return p.returncode, doc, p.stderr, int(p.stderr.strip().splitlines()[-1])


def test_probe_n_beside_a_running_jobs_rank_here_refuses_as_probe_hostfile_does(clean_env):
    # the rule of check (MD301 warns) and probe --hostfile (MD411 refuses) for the local mesh
    rc, doc, err, pid = _beside_a_rank(clean_env, "-n", "2", "--size", "4096")
    assert rc == 1, err
    refused = [x for x in doc["results"] if x["code"] == "MD411" and x["status"] == "fail"]
    assert refused and refused[0]["summary"].startswith("not launched: the mesh is in use")
    assert f"rank 1 pid {pid}" in refused[0]["summary"], refused
    assert "--beside-running-job" in refused[0]["remediation"]["text"]
    assert doc.get("probe") is None  # no rank was started
    rc, doc, err, _ = _beside_a_rank(clean_env, "-n", "2", "--size", "4096", "--beside-running-job")
    assert rc == 0 and doc["probe"], err
