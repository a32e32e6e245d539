"""Fleet check speed: `meshdoctor check --hostfile` over 4 and 8 hosts against 1 host.

Run as root: python benchmarks/fleet_speed.py [--runs 3]. Builds the network-namespace test bed
(tests/netns/) with 8 hosts, each its own fake Mac (tests/netns/fleet_bed.py), and times the fleet
check of a 1-host, a 4-host and an 8-host hostfile over the same ssh path (one interpreter start
and one node check per host, all hosts in parallel), interleaved so that load affects all alike.
The fake Macs' tools are shell stubs that print their fixture (``MacMesh(fast_stubs=True)``): on
a real mesh each Mac runs its own tools on its own cores, so eight Python-started stubs per host
sharing this machine's cores would measure the simulation, not the fan-out.
Prints the median wall time of each and its ratio to the 1-host check. Targets: 4 hosts <= 1.5 x,
8 hosts <= 2.0 x the 1-host time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import netns  # noqa: E402
from meshdoctor.fanout import run_meshdoctor  # noqa: E402
from tests.netns.fleet_bed import MacMesh  # noqa: E402

TARGETS = {4: 1.5, 8: 2.0}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", default="30", help="per-check deadline on each host (s)")
    args = ap.parse_args()
    why = netns.unavailable()
    if why:
        print(f"skipped: {why}")
        return 0
    with netns.TestBed(8) as bed:
        mesh = MacMesh(bed, fast_stubs=True)
        mesh.write(cables=[])  # no Thunderbolt cabling needed: a ring hostfile
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLX_", "JACCL_"))}
        env["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
        files = {}
        for n in (1, 4, 8):
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
        times = {n: [] for n in files}
        fan = {n: [] for n in files}
        cpu = os.cpu_count()
        os.environ["MESHDOCTOR_SSH_CONFIG"] = str(bed.ssh_config)
        for _ in range(args.runs):
            for n in files:  # the fan-out alone: `meshdoctor --version` on every host
                t0 = time.monotonic()
                run_meshdoctor(bed.hosts[:n], ["--version"], timeout=30, python=mesh.python)
                fan[n].append(time.monotonic() - t0)
            for n, f in files.items():
                t0 = time.monotonic()
                p = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "meshdoctor",
                        "check",
                        "--hostfile",
                        str(f),
                        "--python",
                        mesh.python,
                        "--timeout",
                        args.timeout,
                        "--json",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                times[n].append(time.monotonic() - t0)
                if p.returncode not in (0, 1):
                    print(f"{n} host(s): exit {p.returncode}: {p.stdout[-800:]}{p.stderr[-800:]}")
    load = os.getloadavg()[0]
    fbase = statistics.median(fan[1])
    print(f"fan-out only (meshdoctor --version per host), median of {args.runs} run(s)")
    for n, ts in fan.items():
        print(f"{n:>5}  {statistics.median(ts):8.2f}  {statistics.median(ts) / fbase:5.2f}")
    base = statistics.median(times[1])
    print(
        f"fleet check over ssh, median of {args.runs} run(s), {cpu} CPU core(s), "
        f"load average {load:.1f}"
    )
    print(f"{'hosts':>5}  {'median s':>8}  {'ratio':>5}  {'target':>6}  runs (s)")
    ok = True
    for n, ts in times.items():
        med = statistics.median(ts)
        ratio = med / base
        target = TARGETS.get(n)
        ok &= target is None or ratio <= target
        print(
            f"{n:>5}  {med:8.2f}  {ratio:5.2f}  {('<= %.1f' % target) if target else '':>6}  "
            + " ".join(f"{t:.2f}" for t in ts)
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
