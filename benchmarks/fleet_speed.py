"""Fleet speed: `meshdoctor check --hostfile` and `probe --hostfile` over 1, 4 and 8 hosts, one
shared ssh connection per host against one connection per call, with the bare ssh fan-out
beside them; then a 32-host fleet.

Run as root: python benchmarks/fleet_speed.py [--runs 3] [--probe-runs 1] [--big 32]
[--save DIR]. Builds the network-namespace test bed (tests/netns/: a real sshd per host) with 8
hosts, each its own fake Mac (tests/netns/fleet_bed.py, shell stubs: ``fast_stubs=True``, so
the simulation costs little next to what is measured), and times, interleaved so that load
affects all alike:

* ssh fan-out: ``ssh HOST true`` on every host at once, one call per host (the floor of
  reaching the hosts), and three calls per host in a row (what check, probe and teardown do),
  each with its own connection and through one shared master per host;
* the fleet check (one node check per host over ssh, all hosts at once), shared connections
  (this tree's default) and ``MESHDOCTOR_SSH_MULTIPLEX=0`` (one connection per call, as before);
* the ring probe with its fleet check first (real MLX ranks over the bed: gate, launch and
  teardown reach every host), shared and not (``--probe-runs 0`` skips it).

Prints the median wall time of each and its ratio to 1 host, and the fastest run and its ratio
(this 2-core machine is shared: the least disturbed run says the most). Targets: the fleet check on
4 hosts <= 1.5 x and on 8 hosts <= 2.0 x its 1-host time, and that growth <= 1.15 x the
growth of the bare ``ssh HOST true`` fan-out (printed as "x the floor"). Then a fresh bed of --big hosts
(0 skips it): the fleet check with the default cap (32 hosts at once) and with
``--max-parallel 8``, against 1 host of that bed. On this test bed every host's sshd and node
check run on this machine's cores: a figure that grows with the hosts is this machine's CPU
shared N ways, which a real fleet (each host its own cores) does not have; the load average is
printed. The hosts' ssh sessions start in an empty home folder, so root's shell start-up on this
machine (~/.bashrc) is not measured with them. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import netns  # noqa: E402
from tests.netns.fleet_bed import MacMesh  # noqa: E402

TARGETS = {4: 1.5, 8: 2.0}
SIZES = (1, 4, 8)
PROBE_SIZES = (2, 4, 8)  # a probe needs two ranks


FLOOR_TARGET = 1.15  # the fleet check's growth with the hosts over the bare ssh fan-out's


def bed_of(n: int, home: Path) -> "netns.TestBed":
    """A bed of ``n`` hosts whose ssh sessions start in an empty home: this machine's own
    shell start-up (root's ~/.bashrc: pyenv init and its rehash lock) is not what is measured."""
    return netns.TestBed(n, host_env={f"h{i}": {"HOME": str(home)} for i in range(n)})


def hostfiles(bed, sizes):
    files = {}
    for n in sizes:
        f = bed.dir / f"hosts{n}.json"
        f.write_text(
            json.dumps(
                {
                    "backend": "ring",
                    "hosts": [{"ssh": h, "ips": [bed.ips[h]]} for h in bed.hosts[:n]],
                }
            )
        )
        files[n] = f
    return files


def timed(argv, env) -> float:
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    dt = time.monotonic() - t0
    if p.returncode not in (0, 1):
        print(f"  ({' '.join(argv[3:5])}: exit {p.returncode}: {p.stderr[-400:]})", flush=True)
    return dt


def fan_out(bed, hosts, calls: int, shared: bool) -> float:
    """``calls`` rounds of ``ssh HOST true`` on every host at once, through meshdoctor.remote
    (one master per host when ``shared``); the masters are ended before the next run."""
    from meshdoctor import deadline, remote

    if shared:
        os.environ.pop(remote.MULTIPLEX_ENV, None)
    else:
        os.environ[remote.MULTIPLEX_ENV] = "0"
    remote.SHARED = remote.Shared()
    t0 = time.monotonic()

    def one(h):
        for _ in range(calls):
            r = remote.run(h, ["true"], 30)
            if r.returncode != 0:
                print(f"  (ssh {h}: {r.describe()})", flush=True)

    deadline.outcomes({h: (lambda h=h: one(h)) for h in hosts}, 120)
    dt = time.monotonic() - t0
    remote.close_shared()
    os.environ.pop(remote.MULTIPLEX_ENV, None)
    return dt


def check_argv(f, python, timeout, *extra):
    return [
        sys.executable,
        "-m",
        "meshdoctor",
        "check",
        "--hostfile",
        str(f),
        "--python",
        python,
        "--timeout",
        timeout,
        "--json",
        *extra,
    ]


def probe_argv(f):
    return [
        sys.executable,
        "-m",
        "meshdoctor",
        "probe",
        "--hostfile",
        str(f),
        "--size",
        "1MiB",
        "--iters",
        "2",
        "--op",
        "all_sum",
        "--json",
    ]


def table(say, title, rows, targets=None):
    base = statistics.median(rows[min(rows)])
    say(title)
    low = min(rows[min(rows)])
    say(
        f"{'hosts':>5}  {'median s':>8}  {'ratio':>5}  {'target':>7}  {'min s':>6}  {'ratio':>5}  runs (s)"
    )
    for n, ts in rows.items():
        med = statistics.median(ts)
        target = (targets or {}).get(n)
        say(
            f"{n:>5}  {med:8.2f}  {med / base:5.2f}  {('<= %.1f' % target) if target else '':>7}  "
            f"{min(ts):6.2f}  {min(ts) / low:5.2f}  " + " ".join(f"{t:.2f}" for t in ts)
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--probe-runs", type=int, default=1)
    ap.add_argument("--big", type=int, default=32, help="hosts of the large fleet (0: skip)")
    ap.add_argument("--timeout", default="30", help="per-check deadline on each host (s)")
    ap.add_argument("--save", metavar="DIR")
    args = ap.parse_args()
    printed = []

    def say(text=""):
        print(text, flush=True)
        printed.append(text)

    why = netns.unavailable()
    if why:
        print(f"skipped: {why}")
        return 0
    state = Path(tempfile.mkdtemp(prefix="mdfs-", dir="/tmp"))  # short: socket paths
    home = Path(tempfile.mkdtemp(prefix="mdfh-", dir="/tmp"))  # the hosts' empty home
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
    base_env["MESHDOCTOR_STATE_DIR"] = str(state)
    os.environ["MESHDOCTOR_STATE_DIR"] = str(state)
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    say(
        f"# python benchmarks/fleet_speed.py --runs {args.runs} --probe-runs {args.probe_runs} "
        f"--big {args.big} ({os.cpu_count()} CPUs, load average {load0} at the start)"
    )
    ok = True
    try:
        with bed_of(8, home) as bed:
            mesh = MacMesh(bed, fast_stubs=True)
            mesh.write(cables=[])  # no Thunderbolt cabling needed: a ring hostfile
            env = dict(base_env, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
            bare_env = dict(env, MESHDOCTOR_SSH_MULTIPLEX="0")
            probe_env = dict(env, MESHDOCTOR_REMOTE_PYTHON=sys.executable)
            probe_bare_env = dict(probe_env, MESHDOCTOR_SSH_MULTIPLEX="0")
            os.environ["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
            files = hostfiles(bed, sorted(set(SIZES) | set(PROBE_SIZES)))
            rows = {
                k: {n: [] for n in SIZES} for k in ("fan1", "fan3", "fan3s", "check", "check_bare")
            }
            rows.update({k: {n: [] for n in PROBE_SIZES} for k in ("probe", "probe_bare")})
            for _ in range(args.runs):
                for n in SIZES:
                    hosts = bed.hosts[:n]
                    rows["fan1"][n].append(fan_out(bed, hosts, 1, shared=False))
                    rows["fan3"][n].append(fan_out(bed, hosts, 3, shared=False))
                    rows["fan3s"][n].append(fan_out(bed, hosts, 3, shared=True))
                    argv = check_argv(files[n], mesh.python, args.timeout)
                    rows["check"][n].append(timed(argv, env))
                    rows["check_bare"][n].append(timed(argv, bare_env))
            for _ in range(args.probe_runs):
                for n in PROBE_SIZES:
                    rows["probe"][n].append(timed(probe_argv(files[n]), probe_env))
                    rows["probe_bare"][n].append(timed(probe_argv(files[n]), probe_bare_env))
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            say(f"medians of {args.runs} run(s); load average {load} at the end")
            table(say, "ssh fan-out: `ssh HOST true`, every host at once, 1 call", rows["fan1"])
            table(say, "ssh fan-out: 3 calls per host, a connection each", rows["fan3"])
            table(say, "ssh fan-out: 3 calls per host, one shared master", rows["fan3s"])
            table(say, "fleet check, shared ssh (this tree)", rows["check"], TARGETS)
            table(say, "fleet check, MESHDOCTOR_SSH_MULTIPLEX=0", rows["check_bare"], TARGETS)
            floor = rows["fan1"]
            for n in (4, 8):  # the growth of the check over the growth of `ssh HOST true`
                for tag, pick in (("median", statistics.median), ("min", min)):
                    grow = pick(rows["check"][n]) / pick(rows["check"][1])
                    base = pick(floor[n]) / pick(floor[1])
                    say(
                        f"fleet check {n} hosts / 1 host = {grow:.2f} x ({tag}), ssh fan-out "
                        f"{base:.2f} x: {grow / base:.2f} x the floor (target <= {FLOOR_TARGET})"
                    )
            for n in (4, 8):
                ok &= (
                    statistics.median(rows["check"][n]) / statistics.median(rows["check"][1])
                    <= TARGETS[n]
                )
            if args.probe_runs:
                table(say, "ring probe (fleet check first), shared ssh", rows["probe"])
                table(say, "ring probe, MESHDOCTOR_SSH_MULTIPLEX=0", rows["probe_bare"])
                for n in PROBE_SIZES:
                    a = statistics.median(rows["probe"][n])
                    b = statistics.median(rows["probe_bare"][n])
                    say(f"probe {n} host(s): shared / one connection per call = {a / b:.2f}")
        if args.big:
            with bed_of(args.big, home) as bed:
                mesh = MacMesh(bed, fast_stubs=True)
                mesh.write(cables=[])
                env = dict(base_env, MESHDOCTOR_SSH_CONFIG=str(bed.ssh_config))
                files = hostfiles(bed, (1, args.big))
                one = timed(check_argv(files[1], mesh.python, args.timeout), env)
                t0 = time.monotonic()
                p = subprocess.run(
                    check_argv(files[args.big], mesh.python, args.timeout),
                    env=env,
                    capture_output=True,
                    text=True,
                )
                full = time.monotonic() - t0
                doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
                reached = sum(
                    1 for h in doc.get("hosts", []) if h.get("node", {}).get("exit_code") in (0, 1)
                )
                capped = timed(
                    check_argv(files[args.big], mesh.python, args.timeout, "--max-parallel", "8"),
                    env,
                )
                say(f"{args.big}-host fleet (a fresh bed), one run each")
                say(f"  1 host                         {one:7.2f} s")
                say(
                    f"  {args.big} hosts, --max-parallel 32     {full:7.2f} s  {full / one:5.2f} x"
                    f"  exit {p.returncode}, {reached}/{args.big} hosts gave a verdict"
                )
                say(
                    f"  {args.big} hosts, --max-parallel 8      {capped:7.2f} s  {capped / one:5.2f} x"
                )
    finally:
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    if args.save:
        out = Path(args.save)
        out.mkdir(parents=True, exist_ok=True)
        (out / "fleet_speed.txt").write_text("\n".join(printed) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
