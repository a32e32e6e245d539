"""Fleet mode across real hosts: network namespaces, each with its own sshd and its own fake Mac.

One 4-host bed serves every test of the module (bed set-up is the slow part); each test rewrites
the hosts' Macs (tests/netns/fleet_bed.py) and runs the real CLI, which reaches the hosts over
`ssh -o BatchMode=yes` with the bed's ssh config (MESHDOCTOR_SSH_CONFIG) and runs meshdoctor
there through the per-host interpreter (--python).
"""

from __future__ import annotations

import json
import os
import signal
import sys

import pytest

from tests import netns
from tests.helpers import run_cli
from tests.netns.fleet_bed import MacMesh, default_cables

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

TIMEOUT = "60"  # per-check deadline on each host: a bound on a hang, never waited out by a
# passing test (a loaded 2-core CI box has taken over 20 s for one remote check)


@pytest.fixture(scope="module")
def bed():
    with netns.TestBed(4) as tb:
        tb.mesh = MacMesh(tb)
        tb.hostfile = tb.mesh.hostfile(tb.dir / "hosts.json")
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env["MESHDOCTOR_SSH_CONFIG"] = str(tb.ssh_config)
        yield tb


def fleet(bed, *extra, hostfile=None, timeout=TIMEOUT):
    return run_cli(
        "check",
        "--hostfile",
        str(hostfile or bed.hostfile),
        "--python",
        bed.mesh.python,
        "--timeout",
        timeout,
        *extra,
        env=bed.env,
        timeout=180,
    )


def summaries(r, code):
    return " | ".join(x["summary"] for x in r.results(code))


def test_healthy_four_mac_mesh_is_go_with_every_edge_active(bed):
    bed.mesh.write()
    r = fleet(bed, "--json")
    assert r.rc == 0, json.dumps([x for x in r.doc["results"] if x["status"] != "ok"])[:3000]
    assert r.doc["fleet"]["hosts"] == ["h0", "h1", "h2", "h3"]
    assert [h["host"] for h in r.doc["hosts"]] == ["h0", "h1", "h2", "h3"]
    assert all(
        h["node"]["via"] == "ssh" and h["facts"]["platform"]["os"] == "darwin"
        for h in r.doc["hosts"]
    )
    assert "6/6 edges active" in summaries(r, "MD404")
    assert r.doc["fleet"]["edges"]["active"] == 6
    for code in ("MD403", "MD405", "MD406", "MD407", "MD409", "MD414"):
        assert r.status(code) == "ok", summaries(r, code)
    assert {x["host"] for x in r.doc["results"]} >= {"h0", "h1", "h2", "h3"}
    human = fleet(bed)
    assert human.rc == 0 and "6/6 edges active" in human.out and "GO" in human.out
    assert "rdma_en2" in human.out  # the edge matrix


def test_port_down_on_one_host_names_host_device_and_edge(bed):
    bed.mesh.write(down={"h2": ["rdma_en4"]})  # h2's port towards h3
    r = fleet(bed, "--json")
    assert r.rc == 1
    s = summaries(r, "MD404")
    assert "5/6 edges active" in s and "edge h2-h3" in s
    assert "rdma_en4 on h2 is PORT_DOWN" in s and "h3 rdma_en4" in s
    assert any(x["host"] == "h2" and x["status"] == "fail" for x in r.results("MD202"))
    q = fleet(bed, "--quiet")
    assert q.rc == 1 and "edge h2-h3" in q.out and "✔" not in q.out


def test_the_fleet_verdict_as_metrics_and_one_line(bed):
    """--format prometheus and oneline of a fleet run: the mesh's edges (MD404) and each host's
    named devices (MD202) as gauges, every host's check status; the one line names the first failure."""
    from prometheus_client.parser import text_string_to_metric_families

    bed.mesh.write(down={"h2": ["rdma_en4"]})  # h2's port towards h3
    r = fleet(bed, "--format", "prometheus")
    assert r.rc == 1, r.err
    fams = {f.name: f for f in text_string_to_metric_families(r.out)}
    assert fams["meshdoctor_rdma_edges_active"].samples[0].value == 5
    assert fams["meshdoctor_rdma_edges_expected"].samples[0].value == 6
    ends = {s.labels["host"]: s.value for s in fams["meshdoctor_rdma_devices_active"].samples}
    assert ends == {"h0": 4, "h1": 4, "h2": 2, "h3": 3}  # h0-h1: two cables; h2: one down
    failed = {
        (s.labels["host"], s.labels["code"])
        for s in fams["meshdoctor_check_status"].samples
        if s.labels["status"] == "fail" and s.value == 1
    }
    assert ("h2", "MD202") in failed
    assert fams["meshdoctor_info"].samples[0].labels["backend"] == "jaccl"
    one = fleet(bed, "--format", "oneline")
    assert one.rc == 1 and one.out.startswith("NO-GO ") and len(one.out.encode()) <= 80, one.out


def test_crossed_rails_on_the_two_cable_pair(bed):
    cables = [c for c in default_cables(4) if c != ((0, 1), (1, 1)) and c != ((0, 6), (1, 6))]
    bed.mesh.write(cables=cables + [((0, 1), (1, 6)), ((0, 6), (1, 1))])
    r = fleet(bed, "--json")
    assert r.rc == 1
    assert "crossed rails between h0 and h1" in summaries(r, "MD405")


def test_cable_plugged_into_another_host_than_the_hostfile_says(bed):
    # h0's cables towards h2 (receptacle 2) and h3 (receptacle 3) swapped at h0
    cables = [c for c in default_cables(4) if c[0] not in ((0, 2), (0, 3))]
    bed.mesh.write(cables=cables + [((0, 2), (3, 1)), ((0, 3), (2, 1))])
    r = fleet(bed, "--json")
    assert r.rc == 1
    s = summaries(r, "MD405")
    assert "h0 rdma_en3 is cabled to h3" in s and "the hostfile says h2" in s


def test_fast_synch_on_three_hosts_of_four_fails_naming_the_fourth(bed):
    bed.mesh.write(env={h: {"MLX_METAL_FAST_SYNCH": "1"} for h in ("h0", "h1", "h2")})
    r = fleet(bed, "--json")
    assert r.rc == 1
    bad = [x for x in r.results("MD407") if x["status"] == "fail"]
    assert bad and bad[0]["host"] == "h3" and "MLX_METAL_FAST_SYNCH" in bad[0]["summary"]
    assert "h3: unset" in bad[0]["summary"]


def test_mixed_mlx_versions_fail_for_jaccl_naming_the_odd_host(bed):
    bed.mesh.write(mlx={"h1": ("0.32.0", True)})
    r = fleet(bed, "--json")
    assert r.rc == 1
    bad = [x for x in r.results("MD403") if x["status"] == "fail"]
    assert bad and bad[0]["host"] == "h1" and "0.32.0" in bad[0]["summary"]


def test_leftover_wired_memory_on_one_host_blocks_the_launch_named_by_host(bed):
    bed.mesh.write(sets={"h1": ["wired-leftover"]})
    r = fleet(bed, "--json")
    assert r.rc == 1
    bad = [x for x in r.results("MD409") if x["status"] == "fail"]
    assert bad and bad[0]["host"] == "h1" and "h1" in bad[0]["summary"]
    assert r.doc["needs_reboot"] == ["h1"]


def test_one_mac_that_sleeps_is_named_with_the_command_to_paste_here(bed):
    """pmset on h2 says sleep 1: its MD104 warns with the command through `ssh h2`, and MD414
    names h2 as the Mac whose sleep settings differ from the other three."""
    bed.mesh.write(sets={"h2": ["sleep-on"]})
    r = fleet(bed, "--json")
    never = "sudo pmset -a sleep 0 disksleep 0 powernap 0"
    (w,) = [x for x in r.results("MD104") if x["status"] == "warn"]
    assert w["host"] == "h2" and w["summary"].startswith("system sleep is on")
    assert w["remediation"]["command"] == f"ssh h2 '{never}'"
    assert f"`ssh h2 '{never}'`" in w["remediation"]["text"]
    assert {x["host"] for x in r.results("MD104") if x["status"] == "ok"} == {"h0", "h1", "h3"}
    (d,) = r.results("MD414")
    assert d["status"] == "warn" and d["host"] == "h2"
    assert d["summary"].endswith("odd one(s) out: h2")
    assert d["remediation"]["command"] == f"ssh h2 '{never}'"


def test_stopped_sshd_is_could_not_assess_and_not_waited_on(bed):
    bed.mesh.write()
    pid = bed.sshd_pid("h3")
    os.kill(pid, signal.SIGSTOP)
    try:
        r = fleet(bed, "--json", timeout="20")  # waited out on h3: shorter
    finally:
        os.kill(pid, signal.SIGCONT)
    assert r.rc == 3, r.outcome()
    # bounded: not waited on beyond its deadline, generously (benchmarks/fleet_speed.py times it)
    assert r.elapsed < r.doc["fleet"]["deadline_s"] + 30, (r.elapsed, r.outcome())
    err = [x for x in r.results("MD402") if x["host"] == "h3"]
    assert err and err[0]["status"] == "error"
    assert "timed out" in err[0]["summary"].lower()  # ssh's own message
    assert [h["reachable"] for h in r.doc["hosts"]] == [True, True, True, False]


def test_host_without_the_interpreter_is_an_error_that_names_it(bed):
    """meshdoctor needs nothing installed on a host (it is sent over ssh:
    tests/netns/test_ship.py); the interpreter the ranks use must be there."""
    bed.mesh.write(env={"h2": {"MD_PY": "/opt/no-python-here/python3"}})
    r = fleet(bed, "--json")
    assert r.rc == 3
    err = [x for x in r.results("MD402") if x["host"] == "h2"]
    assert err and "not found" in err[0]["summary"], err
    assert "--python" in err[0]["remediation"]["text"]
    assert "Nothing of meshdoctor needs installing there" in err[0]["remediation"]["text"]
    assert err[0]["remediation"]["command"].startswith("ssh h2 ")
    assert "scp" not in json.dumps(err)
    human = fleet(bed)
    assert "h2" in human.out and "pip install meshdoctor" not in human.out


def test_ring_probe_across_three_hosts_runs_the_fleet_check_first(bed):
    hf = bed.dir / "ring.json"
    hf.write_text(json.dumps([{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts[:3]]))
    env = dict(bed.env, MESHDOCTOR_REMOTE_PYTHON=sys.executable)
    r = run_cli(
        "probe",
        "--hostfile",
        str(hf),
        "--size",
        "1MiB",
        "--iters",
        "2",
        "--op",
        "all_sum",
        "--json",
        env=env,
        timeout=240,
    )
    assert r.rc == 0, r.outcome()
    assert r.doc["fleet"]["hosts"] == ["h0", "h1", "h2"]
    assert r.doc["probe"]["world_size"] == 3
    # the gate checked each rank's ring address from its left neighbour and the ring ports
    areas = r.doc["fleet"]["areas"]
    assert [areas["addressing"][h]["status"] for h in ("h0", "h1", "h2")] == ["ok"] * 3
    assert [areas["ports"][h]["status"] for h in ("h0", "h1", "h2")] == ["ok"] * 3
    # a no-go fleet check refuses the launch: h1 listens on h1's ring port 32324 first
    holder = bed.ssh(
        "h1",
        f"{sys.executable} -c 'import socket,time; s=socket.socket(); "
        's.bind(("0.0.0.0", 32324)); s.listen(); time.sleep(120)\' '
        ">/dev/null 2>&1 & echo $!",
        timeout=30,
    )
    pid = int(holder.stdout.split()[-1])
    try:
        r = run_cli(
            "probe",
            "--hostfile",
            str(hf),
            "--size",
            "1MiB",
            "--iters",
            "2",
            "--op",
            "all_sum",
            "--json",
            env=env,
            timeout=240,
        )
        assert r.rc == 1, r.outcome()
        assert "probe" not in r.doc
        assert any(x["status"] == "fail" and x["host"] == "h1" for x in r.results("MD408"))
    finally:
        bed.ssh("h1", f"kill {pid}")


def _interrupt_while_h3_hangs(bed, args, *, h0_h2_first=True):
    """Run meshdoctor ``args`` with h3's interpreter hanging (ssh gets through, meshdoctor never
    starts there: nothing but the command's own per-host deadline ends that call), wait until
    the ssh calls to h0-h2 have come back and only h3's is left (``h0_h2_first``; else until
    h3's call is in flight), then SIGINT it; returns (rc, stdout, stderr).

    The hang is on h3's side, not a stopped sshd: ssh gives up on a server that does not
    answer after its connect timeout (5 s, meshdoctor.remote), and on a loaded box h0-h2 can
    take longer than that, so h3 was no longer left when they came back. Every host has
    meshdoctor in its cache first, as a first run leaves it, so that each host's run is one
    ssh call, not the three of a first run (meshdoctor.ship): the watch below tells "came back"
    from "between two calls"."""
    import subprocess
    import time

    import psutil

    from meshdoctor import ship

    for h in bed.hosts:
        cache = bed.dir / f"cache-{h}" / "meshdoctor"
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        (cache / f"{ship.digest()}.pyz").write_bytes(ship.payload())
    pids = bed.dir / "h3-hang.pids"
    pids.write_text("")
    hang = bed.dir / "hang-python"
    hang.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 600\n")  # $$: h3's own pid
    hang.chmod(0o755)
    bed.mesh.write(env={"h3": {"MD_PY": str(hang)}})
    p = subprocess.Popen(
        [sys.executable, "-m", "meshdoctor", *args],
        env=bed.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen, t_end = set(), time.monotonic() + 300  # a bound on a hang, never waited out
        while time.monotonic() < t_end and p.poll() is None:
            now = set()
            for c in psutil.Process(p.pid).children(recursive=True):
                try:
                    argv = c.cmdline()
                except psutil.Error:
                    continue
                if argv and os.path.basename(argv[0]) == "ssh":
                    now |= {h for h in bed.hosts if h in argv}
            seen |= now
            if "h3" in now and pids.read_text().split():  # h3's call is in its hang
                if not h0_h2_first or (seen == set(bed.hosts) and now == {"h3"}):
                    break
            time.sleep(0.05)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in pids.read_text().split():  # the hang on h3, whose ssh was ended: its pid
            # is one of h3's own PID namespace, so it is killed there, and only if it is that sleep
            bed.ssh("h3", f'[ "$(cat /proc/{int(pid)}/comm)" = sleep ] && kill -KILL {int(pid)}')
    return p.returncode, out, err


def test_an_interrupted_fleet_check_keeps_the_hosts_that_answered(bed):
    from tests.helpers import validate

    bed.mesh.write()
    args = ["check", "--hostfile", str(bed.hostfile), "--python", bed.mesh.python]
    rc, out, err = _interrupt_while_h3_hangs(bed, args + ["--timeout", TIMEOUT, "--json"])
    assert rc == 3, (out[-3000:], err[-2000:])
    doc = json.loads(out)
    validate(doc)
    assert [h["host"] for h in doc["hosts"]] == ["h0", "h1", "h2", "h3"]
    answered = [h for h in doc["hosts"] if h["node"].get("verdict") == "go"]
    assert [h["host"] for h in answered] == ["h0", "h1", "h2"], doc["hosts"]
    assert {r["host"] for r in doc["results"]} >= {"h0", "h1", "h2"}  # their results kept
    last = doc["results"][-1]
    assert last["code"] == "MD190" and "interrupted by SIGINT" in last["summary"]
    assert "1 of 4 hosts did not finish" in last["summary"], last
    h3 = doc["hosts"][3]
    assert "interrupted by SIGINT before it answered" in h3["node"]["error"]


def test_a_probe_interrupted_during_its_fleet_gate_prints_one_verdict(bed):
    from tests.helpers import validate

    bed.mesh.write()
    env = dict(bed.env, MESHDOCTOR_REMOTE_PYTHON=bed.mesh.python)
    bed.env, saved = env, bed.env
    try:
        # the gate gives each host its own deadline (20 s): interrupted once h3's call is in
        # flight, so a loaded box whose h0-h2 take longer still interrupts the gate itself
        rc, out, err = _interrupt_while_h3_hangs(
            bed,
            ["probe", "--hostfile", str(bed.hostfile), "--json", "--size", "4KiB"],
            h0_h2_first=False,
        )
    finally:
        bed.env = saved
    assert rc == 3, (out[-3000:], err[-2000:])
    doc = json.loads(out)
    validate(doc)
    last = doc["results"][-1]
    assert last["code"] == "MD510", doc["results"]
    assert "interrupted by SIGINT during the fleet check" in last["summary"], last
