"""MD302 attributes wired memory to live MLX processes before blaming a dead one: real
processes (a Python that imports MLX and holds an array, with and without MLX_RANK) on a fake
Mac whose vm_stat reports the wired pages. Each run pins the attribution to the processes this
test started (MESHDOCTOR_ATTRIBUTE_PIDS), so unrelated MLX jobs on the machine do not matter.
And MD302 on the fake Mac's fixture sets: leftover wired memory, a wired limit that leaves macOS
no room, a hung vm_stat."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import run_cli

MEMSIZE = 549755813888  # healthy fixture: hw.memsize (512 GiB)
IDLE_LIMIT = int(0.20 * MEMSIZE)  # MD302's threshold for this RAM
PAGE = 16384

HOLDER = r"""
import sys
import mlx.core as mx
a = mx.ones((16 << 20,), dtype=mx.float32)   # 64 MiB resident
mx.eval(a)
print("ready", flush=True)
sys.stdin.read()
"""
PLAIN = "import sys; print('ready', flush=True); sys.stdin.read()"


def vm_stat(wired_bytes: int) -> str:
    pages = -(-wired_bytes // PAGE)
    return (
        f"Mach Virtual Memory Statistics: (page size of {PAGE} bytes)\n"
        f"Pages free:                             1000000.\n"
        f"Pages wired down:                       {pages}.\n"
    )


@pytest.fixture
def started(clean_env):
    """Start a process (``code``, extra env); wait until it says ready; kill it at the end."""
    procs = []

    def start(code: str, **env: str) -> subprocess.Popen:
        p = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(clean_env, **env),
        )
        procs.append(p)
        assert p.stdout.readline().strip() == "ready"
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait(timeout=30)


def md302(fake_mac, wired: int, pids):
    env = fake_mac("healthy", extra={"vm_stat.txt": vm_stat(wired)})
    env["MESHDOCTOR_ATTRIBUTE_PIDS"] = ",".join(str(p) for p in pids)
    r = run_cli("check", "--json", "--only", "MD302", env=env)
    (f,) = [x for x in r.results("MD302") if "wired" in x["summary"]]
    return r, f


@pytest.mark.parametrize("rank", [None, "0"], ids=["server-no-rank", "rank"])
def test_live_mlx_process_explains_the_wired_memory(fake_mac, started, rank):
    p = started(HOLDER, **({"MLX_RANK": rank} if rank else {}))
    r, f = md302(fake_mac, IDLE_LIMIT + (8 << 20), [p.pid])
    assert r.rc == 0 and f["status"] == "warn", r.out
    assert not f.get("needs_reboot") and r.doc["needs_reboot"] == []
    assert f"held by live MLX process(es): pid {p.pid} python" in f["summary"]
    assert ("rank 0" if rank else "not a rank") in f["summary"]
    assert "not a leak, no reboot needed" in f["summary"]
    (proc,) = f["evidence"]["mlx_processes"]
    assert proc["pid"] == p.pid and proc["is_rank"] is (rank is not None)
    assert proc["rss_bytes"] >= 64 << 20 and "maps MLX's library" in proc["how"]


def test_a_live_rank_its_resident_size_cannot_explain_is_stopped_and_measured_again(
    fake_mac, started
):
    # issue: a live MLX process whose resident size does not cover the wired total was called
    # a dead process and a certain reboot; resident size need not include GPU-wired buffers
    p = started(HOLDER, MLX_RANK="1")
    r, f = md302(fake_mac, 9155000 * PAGE, [p.pid])  # 139.7 GiB, as after a tbt_post_recv crash
    assert r.rc == 0 and f["status"] == "warn", r.out
    assert f["summary"].startswith("139.7 GiB wired; live MLX processes explain at most ")
    assert f"pid {p.pid} python (rank 1" in f["summary"] and "dead" not in f["summary"][:60]
    assert not f.get("needs_reboot") and r.doc["needs_reboot"] == []
    assert "run `meshdoctor check --only MD302` again" in f["remediation"]["text"]


def test_no_live_mlx_process_means_a_dead_one_holds_it(fake_mac, started):
    p = started(PLAIN)  # alive, but not using MLX
    r, f = md302(fake_mac, 9155000 * PAGE, [p.pid])
    assert r.rc == 1 and f["status"] == "fail"
    assert f["summary"] == (
        "139.7 GiB wired and no live process uses MLX (more than 102.4 "
        "GiB): a dead process holds it"
    )
    assert f["evidence"]["mlx_processes"] == [] and "reboot" in f["remediation"]["text"]


def test_leftover_wired_memory_with_no_rank_needs_reboot(fake_mac):
    env = fake_mac("healthy", "wired-leftover")
    # "no rank running" is a fact about this machine: pinned by a private PID namespace
    r = run_cli("check", "--json", "--only", "MD302", env=env, private_pids=True)
    assert r.rc == 1
    mem = r.results("MD302")[0]
    assert mem["status"] == "fail" and mem["severity"] == "critical"
    # unrelated MLX jobs on this machine explain a few GiB at most, never 139.7 GiB
    assert mem["summary"].startswith("139.7 GiB wired and ")
    assert mem["summary"].endswith("a dead process holds it")
    assert mem["evidence"]["wired_bytes"] == 9155000 * 16384
    assert r.doc["needs_reboot"] == [mem["host"]]


def test_wired_limit_leaving_macos_no_room_warns(fake_mac):
    env = fake_mac(
        "healthy",
        extra={
            "sysctl__hw.memsize_iogpu.wired_limit_mb.txt": "hw.memsize: 137438953472\niogpu.wired_limit_mb: 131072\n"
        },
    )
    r = run_cli("check", "--json", "--only", "MD302", env=env)
    assert r.rc == 0 and r.status("MD302") == "warn"
    assert "iogpu.wired_limit_mb=131072" in r.results("MD302")[0]["summary"]


def test_hung_vm_stat_is_a_finding_not_a_hang(fake_mac):
    # an overrun of a short deadline proves a slow machine, not a wedged kernel: not assessed
    env = fake_mac("healthy", "vm-stat-hang")
    r = run_cli("check", "--json", "--only", "MD302", "--timeout", "2", env=env)
    assert r.rc == 3, r.out
    mem = r.results("MD302")[0]
    assert mem["status"] == "error" and "did not finish" in mem["summary"]
    assert not mem.get("needs_reboot") and "--timeout 45" in mem["remediation"]["text"]
    assert r.elapsed < 30, (
        r.elapsed
    )  # bounded: a verdict at all, not the hang (the figure: benchmarks/check_speed.py)


def _unshare_user() -> bool:
    try:
        p = subprocess.run(
            ["unshare", "--user", "--map-root-user", "true"], capture_output=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0


@pytest.mark.skipif(not _unshare_user(), reason="needs unshare --user (a user namespace)")
def test_a_live_mlx_server_whose_map_cannot_be_read_is_no_dead_process(fake_mac, started):
    # ml-explore/mlx-lm PR #1252: sibling vllm-mlx servers (`python -m vllm_mlx.cli serve`) held
    # 464 GB wired; killing one freed 441 GB at once: a live server, not a dead process. Run in
    # a user namespace, meshdoctor cannot read the server's memory map (as on macOS without
    # privileges), only its command line.
    import json

    from tests.helpers import validate

    p = started(PLAIN)  # a live process that uses no MLX
    srv = subprocess.Popen(
        [sys.executable, "-c", PLAIN, "vllm_mlx.cli", "serve", "Qwen3.5-35B-A3B-4bit"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert srv.stdout.readline().strip() == "ready"
        env = fake_mac("healthy", extra={"vm_stat.txt": vm_stat(30_000_000 * PAGE)})
        env["MESHDOCTOR_ATTRIBUTE_PIDS"] = f"{srv.pid},{p.pid}"
        r = subprocess.run(
            ["unshare", "--user", "--map-root-user", sys.executable, "-m", "meshdoctor"]
            + ["check", "--json", "--only", "MD302"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    finally:
        srv.kill()
        srv.wait(timeout=30)
    doc = json.loads(r.stdout)
    validate(doc)
    (f,) = [x for x in doc["results"] if x["code"] == "MD302" and "wired" in x["summary"]]
    assert f["status"] == "warn" and not f.get("needs_reboot"), f
    assert doc["needs_reboot"] == []
    assert "not proven to be a dead process" in f["summary"]
    (proc,) = f["evidence"]["mlx_processes"]
    assert proc["pid"] == srv.pid and "command line names an MLX program" in proc["how"]
