"""`meshdoctor fix auto-setup` across a fake Mac fleet: three network-namespace hosts reached over
real ssh (tests/netns/), each with its own fake Mac stubs (its own fixture directory: RDMA
ports, ifconfig, `sysctl -n kern.boottime`, sudo), and a stub `mlx.distributed_config` that
configures every host, none (and fails), or only the first one.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

from tests import netns
from tests.helpers import run_cli
from tests.stubs import FIXTURES, install

why = netns.unavailable()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

CONFIGURED = ("ibv_devinfo__v.txt", "ifconfig.txt")  # what auto-setup changes on a Mac

STUB = r'''#!{python}
"""Stub mlx.distributed_config --auto-setup: configures the fake Macs named in STUB_FIXDIRS."""
import json, os, shutil, sys
args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
mode = open(os.environ["STUB_MODE"]).read().strip()
dirs = dict(x.split("=", 1) for x in os.environ["STUB_FIXDIRS"].split(","))
hosts = args[args.index("--hosts") + 1].split(",")
if mode == "precheck":  # MLX config.py's own ssh pre-check stops it before any change
    print("[ERROR] Maybe they are not set-up for password-less ssh?", file=sys.stderr)
    sys.exit(1)
todo = {{"ok": hosts, "half": hosts[:1], "fail": []}}[mode]
for h in todo:
    for name in {configured!r}:
        shutil.copy(os.path.join({healthy!r}, name), os.path.join(dirs[h], name))
if mode == "fail":  # it got as far as taking bridge0 down on the first host, then failed
    shutil.copy(os.path.join({healthy!r}, "ifconfig.txt"), os.path.join(dirs[hosts[0]], "ifconfig.txt"))
out = args[args.index("--output-hostfile") + 1]
if mode != "fail":
    shutil.copy(os.environ["STUB_HOSTFILE"], out)
sys.exit(1 if mode == "fail" else 0)
'''


class Fleet:
    """The bed plus helpers to set each fake Mac's boot time and state."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.fixdirs = {}
        host_env = {}
        for i in range(3):
            h = f"h{i}"
            env = install(tmp / h / "bin", ["healthy", "fe80-only"])
            self.fixdirs[h] = tmp / h / "bin-fixtures"
            host_env[h] = {
                "PATH": env["PATH"],
                "MESHDOCTOR_PLATFORM": "darwin",
                "MESHDOCTOR_STATE_DIR": str(tmp / h / "state"),  # each host's own
            }
        self.boot_all(time.time() - 3600)
        self.bed = netns.TestBed(3, host_env=host_env)

    def __enter__(self) -> "Fleet":
        self.bed.__enter__()
        b = self.bed
        self.hostfile = self.tmp / "hosts.json"
        rows = [
            [None, "rdma_en2", "rdma_en3"],
            ["rdma_en2", None, "rdma_en3"],
            ["rdma_en2", "rdma_en3", None],
        ]
        self.hostfile.write_text(
            json.dumps(
                {
                    "backend": "jaccl",
                    "hosts": [
                        {"ssh": h, "ips": [b.ips[h]], "rdma": rows[i]}
                        for i, h in enumerate(b.hosts)
                    ],
                }
            )
        )
        cbin = self.tmp / "coordinator-bin"
        cbin.mkdir()
        stub = cbin / "mlx.distributed_config"
        stub.write_text(
            STUB.format(
                python=sys.executable, configured=CONFIGURED, healthy=str(FIXTURES / "healthy")
            )
        )
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
        self.mode = self.tmp / "mode"
        self.log = self.tmp / "stub.log"
        self.log.write_text("")
        self.state = self.tmp / "state"
        self.out = self.tmp / "new-hosts.json"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        self.env.update(
            PATH=f"{cbin}{os.pathsep}{os.environ['PATH']}",
            MESHDOCTOR_STATE_DIR=str(self.state),
            MESHDOCTOR_SSH_CONFIG=str(b.ssh_config),
            MESHDOCTOR_REMOTE_PYTHON=sys.executable,
            STUB_MODE=str(self.mode),
            STUB_LOG=str(self.log),
            STUB_HOSTFILE=str(self.hostfile),
            STUB_FIXDIRS=",".join(f"{h}={d}" for h, d in self.fixdirs.items()),
        )
        return self

    def __exit__(self, *exc) -> None:
        self.bed.__exit__(*exc)

    def boot(self, host: str, epoch: float) -> None:
        (self.fixdirs[host] / "sysctl__n_kern.boottime.txt").write_text(
            f"{{ sec = {int(epoch)}, usec = 0 }} Thu Jan  1 00:00:00 1970\n"
        )

    def boot_all(self, epoch: float) -> None:
        for h in self.fixdirs:
            self.boot(h, epoch)

    def unconfigure(self) -> None:
        for d in self.fixdirs.values():
            for name in CONFIGURED:
                shutil.copy(FIXTURES / "fe80-only" / name, d / name)

    def fix(self, mode: str, *extra: str):
        self.mode.write_text(mode)
        return run_cli(
            "fix",
            "auto-setup",
            "--hostfile",
            str(self.hostfile),
            "--output-hostfile",
            str(self.out),
            "--json",
            *extra,
            env=self.env,
            timeout=240,
        )

    def runs(self) -> int:
        return len(self.log.read_text().splitlines())

    def receipts(self):
        d = self.state / "receipts"
        got = (
            [(json.loads(p.read_text()), p) for p in d.glob("auto-setup-*.json")]
            if d.is_dir()
            else []
        )
        return sorted(got, key=lambda x: x[0]["started_epoch"])


@pytest.fixture
def fleet(tmp_path):
    with Fleet(tmp_path) as f:
        yield f


def _run_action(doc):
    return next(a for a in doc["actions"] if a["argv"][:1] == ["mlx.distributed_config"])


def test_failure_taints_the_boot_until_every_node_rebooted_then_once_per_boot(fleet):
    before = run_cli("check", "--only", "MD203", "--json", env=fleet.env)
    assert before.rc in (0, 1, 3)  # not a Mac: MD203 skips here (every check skipped: 3)

    plan = fleet.fix("ok")  # without --yes: plan only, nothing runs, no receipt
    assert plan.rc == 1 and fleet.runs() == 0 and not fleet.receipts()
    pre = [a for a in plan.doc["actions"] if a["mutates"] is False and a["host"] != "mesh"]
    assert {a["host"] for a in pre} == {"h0", "h1", "h2"}
    assert all(a["outcome"] == "ok" for a in pre), pre
    assert _run_action(plan.doc)["outcome"] == "planned"

    failed = fleet.fix("fail", "--yes")
    assert failed.rc == 1 and fleet.runs() == 1
    [(receipt, path)] = fleet.receipts()
    assert receipt["outcome"] == "failed"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert set(receipt["hosts"]) == {"h0", "h1", "h2"}
    assert all(v["boot_time"] is not None for v in receipt["hosts"].values())
    assert set(failed.doc["needs_reboot"]) == {"h0", "h1", "h2"}

    again = fleet.fix("ok", "--yes")  # same boot: refused, not run
    assert again.rc == 1 and fleet.runs() == 1
    res = again.results("MD703")[0]
    assert "reboot every node first" in res["summary"]
    assert "h0, h1, h2" in res["summary"]
    assert again.doc["needs_reboot"] == ["h0", "h1", "h2"]

    now = time.time() + 5
    fleet.boot("h0", now)
    fleet.boot("h1", now)
    partial_reboot = fleet.fix("ok", "--yes")
    assert partial_reboot.rc == 1 and fleet.runs() == 1
    summary = partial_reboot.results("MD703")[0]["summary"]
    assert "booted before it: h2" in summary and "h0" not in summary.split("booted before")[1]
    assert partial_reboot.doc["needs_reboot"] == ["h2"]

    fleet.boot("h2", now)
    good = fleet.fix("ok", "--yes")
    assert good.rc == 0, good.outcome()
    assert fleet.runs() == 1 + 1
    run = _run_action(good.doc)
    assert run["changed"] is True and run["outcome"].startswith("done")
    assert good.results("MD703")[0]["status"] == "ok"
    assert [r["outcome"] for r, _ in fleet.receipts()] == ["failed", "ok"]
    assert json.loads(fleet.out.read_text())["backend"] == "jaccl"

    second = fleet.fix("ok", "--yes")  # a second run on a good boot: unnecessary
    assert second.rc == 0 and fleet.runs() == 2
    res = second.results("MD703")[0]
    assert "already succeeded on this boot" in res["summary"]
    assert not any(a["changed"] for a in second.doc["actions"])
    assert res["evidence"]["changed"] is False


def test_half_success_is_partial_and_taints_the_boot(fleet):
    half = fleet.fix("half", "--yes")
    assert half.rc == 1 and fleet.runs() == 1
    [(receipt, _)] = fleet.receipts()
    assert receipt["outcome"] == "partial"
    assert receipt["hosts"]["h0"]["configured"] is True
    assert receipt["hosts"]["h1"]["configured"] is False
    assert set(half.doc["needs_reboot"]) == {"h0", "h1", "h2"}
    assert "partial" in half.results("MD703")[0]["summary"]
    refused = fleet.fix("ok", "--yes")
    assert refused.rc == 1 and fleet.runs() == 1
    assert "reboot every node first" in refused.results("MD703")[0]["summary"]


def test_hosts_without_passwordless_sudo_are_named_and_nothing_runs(fleet):
    (fleet.fixdirs["h1"] / "sudo.deny").write_text("")
    r = fleet.fix("ok", "--yes")
    assert r.rc == 1 and fleet.runs() == 0 and not fleet.receipts()
    bad = [a for a in r.doc["actions"] if a["outcome"].startswith("failed")]
    assert [a["host"] for a in bad] == ["h1"]
    assert "no passwordless sudo" in bad[0]["outcome"]
    assert "h1: ssh and passwordless sudo" in r.results("MD703")[0]["summary"]


def test_a_run_its_own_pre_check_stopped_changes_nothing_and_taints_nothing(fleet):
    stopped = fleet.fix("precheck", "--yes")
    assert stopped.rc == 1 and fleet.runs() == 1, stopped.outcome()
    [(receipt, _)] = fleet.receipts()
    assert receipt["outcome"] == "unchanged"
    run = _run_action(stopped.doc)
    assert run["changed"] is False
    assert "stopped before changing anything" in run["outcome"]
    assert "Maybe they are not set-up for password-less ssh?" in run["outcome"]
    res = stopped.results("MD703")[0]
    assert "this boot is not tainted" in res["summary"] and not stopped.doc["needs_reboot"]
    assert "reboot" not in res["summary"].split("tainted")[0]
    good = fleet.fix("ok", "--yes")  # the same boot: allowed, and it succeeds
    assert good.rc == 0 and fleet.runs() == 2, good.outcome()


def test_a_ring_hostfile_plans_no_thunderbolt_setup(fleet):
    ring = fleet.tmp / "ring.json"
    doc = json.loads(fleet.hostfile.read_text())
    ring.write_text(json.dumps({"backend": "ring", "hosts": doc["hosts"]}))
    fleet.mode.write_text("ok")
    r = run_cli(
        "fix", "auto-setup", "--hostfile", str(ring), "--yes", "--json", env=fleet.env, timeout=240
    )
    assert r.rc == 1 and fleet.runs() == 0, r.outcome()
    summary = r.results("MD703")[0]["summary"]
    assert "this hostfile's backend is ring" in summary, summary
    assert not any(
        a["outcome"].startswith("failed: ") and not a["outcome"][len("failed: ") :].strip()
        for a in r.doc["actions"]
    )  # never an empty reason


def _receipt(fleet, name: str, body: str) -> Path:
    d = fleet.state / "receipts"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    p = d / name
    p.write_text(body)
    p.chmod(0o600)
    return p


def test_a_receipt_cut_off_mid_write_makes_the_guard_fail_closed(fleet):
    """A failed run's receipt cut off mid-write: not skipped (that would run auto-setup again on
    a tainted boot) but refused, saying why."""
    cut = json.dumps({"started_epoch": time.time() - 60, "outcome": "failed"})[:30]
    p = _receipt(fleet, "auto-setup-20261201T000000-cut000.json", cut)
    r = fleet.fix("ok", "--yes")
    assert r.rc == 1 and fleet.runs() == 0
    summary = r.results("MD703")[0]["summary"]
    assert "cannot tell whether auto-setup ran on this boot" in summary
    assert f"{p} does not parse" in summary


def test_a_failed_run_whose_receipt_holds_nan_blocks_a_second_run(fleet):
    """A failed run's receipt with ``started_epoch: NaN`` (json reads it; no comparison with it
    holds): auto-setup does not run again, and says why."""
    body = '{"started_epoch": NaN, "outcome": "failed", "hosts": {}}'
    p = _receipt(fleet, "auto-setup-20261201T000000-nan000.json", body)
    r = fleet.fix("ok", "--yes")
    assert r.rc == 1 and fleet.runs() == 0, r.outcome()
    summary = r.results("MD703")[0]["summary"]
    assert "cannot tell whether auto-setup ran on this boot" in summary
    assert f"{p} holds a number that is not finite (started_epoch: nan)" in summary


def test_a_fifo_among_the_receipts_is_refused_at_once_not_opened(fleet):
    d = fleet.state / "receipts"
    d.mkdir(parents=True, mode=0o700)
    os.mkfifo(d / "auto-setup-20261201T000000-fifo00.json")  # no writer
    for extra in ((), ("--yes",)):
        r = fleet.fix("ok", *extra)  # 240 s bound: a blocking open would hang here
        assert r.rc == 1 and fleet.runs() == 0
        summary = r.results("MD703")[0]["summary"]
        assert "cannot tell whether auto-setup ran on this boot" in summary
        assert "fifo00.json: not a regular file" in summary


def test_a_receipt_forged_by_another_user_never_says_go(fleet, tmp_path):
    """A shared state directory another user can write, with their forged 'ok' receipt: the
    plan refuses (it cannot tell), --yes refuses the state directory (MD700); never 'already
    succeeded', nothing run."""
    from tests.helpers import other_user

    opened = [p for p in fleet.tmp.parents if str(p).startswith("/tmp/pytest-of-")]
    modes = {p: os.stat(p).st_mode for p in opened}
    with other_user() as as_them:
        try:
            for p in opened:  # let them reach it (pytest's folders are 0700)
                os.chmod(p, modes[p] | 0o055)
            os.chmod(fleet.tmp, 0o755)
            fleet.state.mkdir(mode=0o700)
            os.chmod(fleet.state, 0o777)
            forged = json.dumps(
                {
                    "started_epoch": time.time() - 60,
                    "outcome": "ok",
                    "hosts": {h: {"boot_time": time.time() - 3600} for h in fleet.fixdirs},
                }
            )
            made = as_them(
                f"mkdir -m 700 {fleet.state}/receipts && printf '%s' '{forged}' > "
                f"{fleet.state}/receipts/auto-setup-20261201T000000-forged.json"
            )
            assert made.returncode == 0, made.stderr
            plan = fleet.fix("ok")
            assert plan.rc == 1 and fleet.runs() == 0
            summary = plan.results("MD703")[0]["summary"]
            assert "cannot tell whether auto-setup ran on this boot" in summary
            assert "(mode 0777: others can write it)" in summary
            r = fleet.fix("ok", "--yes")
            assert r.rc == 3 and fleet.runs() == 0
            assert "(mode 0777: others can write it)" in r.results("MD700")[0]["summary"]
            assert not r.results("MD703")
        finally:
            for p in opened:
                os.chmod(p, modes[p])


def test_after_a_success_on_this_boot_the_state_it_set_up_is_checked_again(fleet):
    assert fleet.fix("ok", "--yes").rc == 0 and fleet.runs() == 1
    fleet.unconfigure()  # the GIDs and IPv4 addresses gone on the same boot
    r = fleet.fix("ok", "--yes")
    assert r.rc == 1 and fleet.runs() == 1  # not run again, and not ok either
    summary = r.results("MD703")[0]["summary"]
    assert "already succeeded on this boot" in summary
    assert "but what it set up is gone on this boot: h0: MD20" in summary


def test_each_host_records_its_setup_and_a_reboot_since_is_told_apart(fleet, tmp_path):
    assert fleet.fix("ok", "--yes").rc == 0
    for h in ("h0", "h1", "h2"):  # recorded on the host itself
        got = list((fleet.tmp / h / "state" / "receipts").glob("host-setup-*.json"))
        assert len(got) == 1 and json.loads(got[0].read_text())["configured"] is True
    fleet.boot("h1", time.time())  # h1 rebooted since
    other = dict(fleet.env, MESHDOCTOR_STATE_DIR=str(tmp_path / "second-operator"))
    r = run_cli(
        "check",
        "--hostfile",
        str(fleet.out),
        "--only",
        "MD206",
        "--json",
        env=other,
        timeout=180,
    )
    by_host = {x["host"]: x for x in r.results("MD206")}
    assert set(by_host) == {"h0", "h1", "h2"}, r.outcome()
    assert by_host["h0"]["status"] == "ok"
    assert by_host["h0"]["summary"].startswith("configured by auto-setup in this boot")
    assert by_host["h1"]["status"] == "warn"
    assert by_host["h1"]["summary"].startswith("booted since the last auto-setup")
