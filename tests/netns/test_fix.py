"""`meshdoctor fix stale-ranks --hostfile` across three network-namespace hosts over real ssh
(tests/netns/; each host has its own PID namespace): every host is cleaned at once, the ranks
of a job still running and a process that only looks like a rank are left alone."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
import uuid

import pytest

from tests import netns
from tests.helpers import run_cli
from tests.fixes.test_stale_ranks import SLEEP, SPIN_IGNORING_TERM, ignores_term

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")


@pytest.fixture
def bed(tmp_path):
    with netns.TestBed(3) as tb:
        hf = tmp_path / "hosts.json"
        hf.write_text(json.dumps([{"ssh": h, "ips": [tb.ips[h]]} for h in tb.hosts]))
        tb.hostfile = hf
        tb.token = f"t-{uuid.uuid4().hex[:10]}"
        tb.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        tb.env.update(
            MESHDOCTOR_SSH_CONFIG=str(tb.ssh_config),
            MESHDOCTOR_REMOTE_PYTHON=sys.executable,
            MESHDOCTOR_FIX_SCOPE=tb.token,
            MESHDOCTOR_STATE_DIR=str(tmp_path / "state"),
        )
        yield tb


def _start(bed, host: str, code: str, env: str, *, running: bool = False) -> int:
    """Start a python process on ``host``; ``running``: under a launcher shell that stays."""
    py = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    scope = f"MESHDOCTOR_FIX_SCOPE={bed.token} {env}"
    if running:
        inner = f"{scope} {py} & echo $! > /tmp/{bed.token}-{host}; wait"
        cmd = (
            f"setsid bash -c {shlex.quote(inner)} >/dev/null 2>&1 & "
            f"while [ ! -s /tmp/{bed.token}-{host} ]; do sleep 0.05; done; "
            f"cat /tmp/{bed.token}-{host}"
        )
    else:
        cmd = f"{scope} setsid {py} >/dev/null 2>&1 & echo $!"
    pid = int(bed.ssh(host, cmd).stdout.strip())
    if "SIG_IGN" in code:  # wait until it really ignores SIGTERM
        deadline = time.monotonic() + 20
        while not ignores_term(bed.ssh(host, f"cat /proc/{pid}/status").stdout):
            assert time.monotonic() < deadline, f"pid {pid} on {host} never ignored SIGTERM"
            time.sleep(0.05)
    return pid


def _alive(bed, host: str, pid: int) -> bool:
    st = bed.ssh(host, f"ps -o stat= -p {pid}").stdout.strip()
    return bool(st) and not st.startswith("Z")


def test_stale_ranks_on_every_host_at_once(bed):
    stubborn = {h: _start(bed, h, SPIN_IGNORING_TERM, "MLX_RANK=1") for h in bed.hosts}
    lookalike = _start(bed, "h1", SLEEP + "  # MLX_RANK=1", "NOT_MLX_RANK=1")
    running = _start(bed, "h2", SLEEP, "MLX_RANK=2", running=True)

    plan = run_cli(
        "fix", "stale-ranks", "--hostfile", str(bed.hostfile), "--json", env=bed.env, timeout=180
    )
    assert plan.rc == 1, plan.outcome()
    assert all(_alive(bed, h, p) for h, p in stubborn.items())
    planned = {
        (a["host"], a["detail"]["pid"]) for a in plan.doc["actions"] if a["outcome"] == "planned"
    }
    assert planned == {(h, p) for h, p in stubborn.items()}
    # "apply with" keeps the hostfile that made the plan: --yes alone cleans only this machine
    apply = {x["remediation"]["command"] for x in plan.results("MD701") if x["status"] == "fail"}
    assert apply == {
        shlex.join(["meshdoctor", "fix", "stale-ranks", "--hostfile", str(bed.hostfile), "--yes"])
    }
    # a remote host's remedy is a remote command: pasted here, `kill PID` would hit a local pid
    chk = run_cli(
        "check",
        "--hostfile",
        str(bed.hostfile),
        "--only",
        "MD301",
        "--python",
        sys.executable,
        "--json",
        env=bed.env,
        timeout=180,
    )
    kills = {
        x["host"]: x["remediation"].get("command")
        for x in chk.results("MD301")
        if x["status"] == "fail"
    }
    assert kills == {h: f"ssh {h} 'kill -KILL {p}'" for h, p in stubborn.items()}, chk.doc[
        "results"
    ]

    r = run_cli(
        "fix",
        "stale-ranks",
        "--hostfile",
        str(bed.hostfile),
        "--yes",
        "--json",
        env=bed.env,
        timeout=180,
    )
    assert r.rc == 0, r.outcome()
    assert [h["host"] for h in r.doc["hosts"]] == ["h0", "h1", "h2"]
    assert not any(_alive(bed, h, p) for h, p in stubborn.items())
    assert _alive(bed, "h1", lookalike) and _alive(bed, "h2", running)
    done = {a["host"]: a for a in r.doc["actions"] if a["changed"]}
    assert set(done) == {"h0", "h1", "h2"}
    assert all(a["outcome"] == "done: killed by SIGKILL" for a in done.values())
    res = {x["host"]: x for x in r.results("MD701")}
    assert set(res) == {"h0", "h1", "h2"} and all(x["status"] == "ok" for x in res.values())

    again = run_cli(
        "fix",
        "stale-ranks",
        "--hostfile",
        str(bed.hostfile),
        "--yes",
        "--json",
        env=bed.env,
        timeout=180,
    )
    assert again.rc == 0, [(x["host"], x["code"], x["summary"]) for x in again.doc["results"]]
    assert not any(a["changed"] for a in again.doc["actions"])


def test_unreachable_host_is_could_not_assess(bed):
    cfg = bed.ssh_config.read_text()
    bed.ssh_config.write_text(f"Host hx\n  HostName {bed.ips['h2']}\n  Port 2222\n" + cfg)
    hf = bed.dir / "hosts-hx.json"
    hf.write_text(
        json.dumps([{"ssh": "h0", "ips": [bed.ips["h0"]]}, {"ssh": "hx", "ips": [bed.ips["h2"]]}])
    )
    r = run_cli(
        "fix", "stale-ranks", "--hostfile", str(hf), "--yes", "--json", env=bed.env, timeout=120
    )
    assert r.rc == 3, r.outcome()
    assert {h["host"]: h["reachable"] for h in r.doc["hosts"]} == {"h0": True, "hx": False}
    err = [x for x in r.results("MD701") if x["host"] == "hx"]
    assert err and err[0]["status"] == "error"


def test_reset_group_across_hosts_recovers(bed):
    stale = {
        h: _start(bed, h, SPIN_IGNORING_TERM, f"MLX_RANK={i}") for i, h in enumerate(bed.hosts)
    }
    r = run_cli(
        "fix",
        "reset-group",
        "--hostfile",
        str(bed.hostfile),
        "--yes",
        "--json",
        env=bed.env,
        timeout=240,
    )
    assert r.rc == 0, r.outcome()
    assert not any(_alive(bed, h, p) for h, p in stale.items())
    probe = next(a for a in r.doc["actions"] if a["step"].startswith("one-element all_sum"))
    assert probe["outcome"] == "ok" and "across 3 rank(s)" in probe["step"]
    res = r.results("MD702")[0]
    assert res["status"] == "ok" and "recovered" in res["summary"]
    for h in bed.hosts:  # nothing of the probe is left on any host
        assert "md-probe-" not in bed.ssh(h, "ps -eo args=").stdout


def test_fix_without_names_checks_every_host_and_plans_for_the_failures(bed):
    pid = _start(bed, "h1", SLEEP, "MLX_RANK=1")
    r = run_cli("fix", "--hostfile", str(bed.hostfile), "--json", env=bed.env, timeout=240)
    assert r.rc == 1, r.outcome()
    planned = [a for a in r.doc["actions"] if a["outcome"] == "planned"]
    assert [(a["host"], a["code"], a["detail"]["pid"]) for a in planned] == [("h1", "MD701", pid)]
    assert _alive(bed, "h1", pid)
    res = {x["host"]: x["status"] for x in r.results("MD701")}
    assert res == {"h0": "ok", "h1": "fail", "h2": "ok"}


def test_a_remote_stale_ranks_remedy_prose_names_the_remote_command(bed):
    # the prose's escalation is pasteable as it is shown: ssh HOST 'kill -KILL PID', the real pid
    plain = _start(bed, "h1", SLEEP, "MLX_RANK=1")
    chk = run_cli(
        "check",
        "--hostfile",
        str(bed.hostfile),
        "--only",
        "MD301",
        "--python",
        sys.executable,
        "--json",
        env=bed.env,
        timeout=180,
    )
    mine = [x for x in chk.results("MD301") if x["evidence"].get("pid") == plain]
    assert mine and mine[0]["host"] == "h1", chk.outcome()
    rem = mine[0]["remediation"]
    assert rem["command"] == f"ssh h1 'kill {plain}'", rem
    assert f"`ssh h1 'kill -KILL {plain}'`" in rem["text"], rem
    assert f"`kill -KILL {plain}`" not in rem["text"], rem
    bed.ssh("h1", f"kill -KILL {plain}")


def test_stale_ranks_on_hosts_without_meshdoctor_or_psutil(bed):
    """The remote hosts run the system interpreter, which has neither meshdoctor nor psutil
    (meshdoctor is sent over ssh, meshdoctor.ship; processes are read from /proc): the same
    plan and the same clean-up as with both installed."""
    from tests.netns.fleet_bed import NO_MESHDOCTOR_PY

    env = dict(bed.env, MESHDOCTOR_REMOTE_PYTHON=NO_MESHDOCTOR_PY)
    stubborn = {h: _start(bed, h, SPIN_IGNORING_TERM, "MLX_RANK=1") for h in ("h1", "h2")}
    args = ["fix", "stale-ranks", "--hostfile", str(bed.hostfile), "--json"]
    plan = run_cli(*args, env=env, timeout=240)
    assert plan.rc == 1, plan.outcome()
    planned = {
        (a["host"], a["detail"]["pid"]) for a in plan.doc["actions"] if a["outcome"] == "planned"
    }
    assert planned == set(stubborn.items())
    r = run_cli(*args, "--yes", env=env, timeout=240)
    assert r.rc == 0, r.outcome()
    assert not any(_alive(bed, h, p) for h, p in stubborn.items())
    done = {a["host"]: a["outcome"] for a in r.doc["actions"] if a["changed"]}
    assert done == {h: "done: killed by SIGKILL" for h in stubborn}, r.doc["actions"]
