"""NCCL speed on one GPU host: the probe's all_sum busbw against a bare MLX all_sum loop on the
same ranks, and against PyTorch's NCCL all_reduce on the same GPUs, in the same run.

Run on a host whose MLX is the CUDA build (and, for the PyTorch column, with torch installed):
    python benchmarks/nccl_speed.py [-n 2] [--sizes 1MiB,16MiB,256MiB,1GiB] [--iters 10]
For each size one launch of ``n`` local nccl ranks alternates, ``rounds`` times, the probe's own
all_sum (barrier, enter/leave events, heartbeat, exact check on the device) with the worker's
``bare_all_sum`` (the same collective in a tight loop, no events, no checks); then ``n`` PyTorch
processes run ``torch.distributed.all_reduce`` (NCCL) on float32 tensors of the same sizes. The
MLX figures are the probe's (a timed batch per rank, the per-call average, the slowest rank; the
median over rounds), PyTorch's the median over iterations of the slowest rank's time; busbw =
bytes / time x 2(n-1)/n (nccl-tests). Prints one line per size with ``probe/bare <ratio>`` and ``mlx/torch <ratio>``
(mlx = the bare MLX loop) and, with --json, writes every figure to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Dict, List

from meshdoctor.probe.config import ProbeConfig, local_hostfile
from meshdoctor.probe.figures import algbw_gbs, batch_time, bus_factor, slowest_per_iteration
from meshdoctor.probe.launcher import run_probe
from meshdoctor.probe.sizes import format_size, parse_size

TARGET_PROBE_BARE = 0.97  # at 256 MiB and above

_TORCH = r"""
import json, os, sys, time, torch, torch.distributed as dist
rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl", init_method=os.environ["INIT"], rank=rank, world_size=n)
iters, warmup = int(os.environ["ITERS"]), int(os.environ["WARMUP"])
for size in json.loads(os.environ["SIZES"]):
    x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    for _ in range(warmup):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"rank": rank, "size": size, "times": times}), flush=True)
dist.destroy_process_group()
"""


def slowest_busbw(per_rank: List[dict], n: int) -> List[float]:
    """busbw (GB/s) per iteration, taking the slowest rank's time."""
    size = int(per_rank[0]["size"])
    return [
        algbw_gbs(size, t) * bus_factor("all_sum", n)
        for t in slowest_per_iteration([r["times"] for r in per_rank])
    ]


def mlx_figures(n: int, size: int, iters: int, rounds: int) -> Dict[str, float]:
    cfg = ProbeConfig(
        hostfile=local_hostfile(n, "nccl"),
        backend="nccl",
        size=size,
        iters=iters,
        warmup=2,
        ops=["all_sum", "bare_all_sum"] * rounds,
    )
    out = run_probe(cfg).launches[-1]
    if out.kind != "ok":
        raise RuntimeError(
            f"probe did not finish: {out.kind} {out.failure} "
            f"{[list(s.stderr)[-5:] for s in out.ranks]}"
        )
    bw: Dict[str, List[float]] = {"all_sum": [], "bare_all_sum": []}
    wrong = 0
    for k in range(len(cfg.ops)):
        per_rank = [st.results[k] for st in out.ranks]
        op = per_rank[0]["op"]
        # both timed as the probe reports them (nccl-tests: a batch per rank, the slowest rank)
        t = batch_time(per_rank)
        bw[op].append(algbw_gbs(int(per_rank[0]["size"]), t or 0.0) * bus_factor(op, n))
        wrong += sum(int(r.get("wrong", 0)) for r in per_rank)
    return {
        "probe": statistics.median(bw["all_sum"]),
        "bare": statistics.median(bw["bare_all_sum"]),
        "wrong": wrong,
        "samples": len(bw["all_sum"]),
    }


def _torch_once(n: int, sizes: List[int], iters: int, timeout: float) -> Dict[int, float]:
    port = random.randrange(20000, 60000)
    procs = []
    for r in range(n):
        env = dict(
            os.environ,
            RANK=str(r),
            WORLD_SIZE=str(n),
            ITERS=str(iters),
            WARMUP="3",
            INIT=f"tcp://127.0.0.1:{port}",
            SIZES=json.dumps(sizes),
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _TORCH], env=env, stdout=subprocess.PIPE, text=True
            )
        )
    res: Dict[int, List[dict]] = {}
    t_end = time.monotonic() + timeout
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1.0, t_end - time.monotonic()))
            if p.returncode != 0:
                raise RuntimeError(f"a torch rank exited {p.returncode}")
            for line in out.splitlines():
                if line.startswith("{"):
                    d = json.loads(line)
                    res.setdefault(d["size"], []).append(d)
    finally:
        for p in procs:  # a rank whose peer failed would wait for it forever
            if p.poll() is None:
                p.kill()
                p.wait()
    return {
        size: statistics.median(slowest_busbw(per, n)) for size, per in res.items() if len(per) == n
    }


def torch_figures(
    n: int, sizes: List[int], iters: int, attempts: int = 3, timeout: float = 60.0
) -> Dict[int, float]:
    """PyTorch NCCL all_reduce busbw (GB/s) per size; a rendezvous port that turns out to be
    taken is retried with another."""
    for k in range(attempts):
        try:
            return _torch_once(n, sizes, iters, timeout)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"torch attempt {k + 1}: {exc}", file=sys.stderr)
    return {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--sizes", default="1MiB,16MiB,256MiB,1GiB")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", dest="json_path", default=None)
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    rows = []
    for size in sizes:
        t0 = time.monotonic()
        f = mlx_figures(args.n, size, args.iters, args.rounds)
        rows.append(dict(f, size=size, mlx_launch_s=round(time.monotonic() - t0, 2)))
        print(
            f"mlx {format_size(size)}: probe {f['probe']:.2f} bare {f['bare']:.2f} GB/s", flush=True
        )
    torch_bw: Dict[int, float] = {}
    if not args.no_torch:
        try:
            torch_bw = torch_figures(args.n, sizes, args.iters)
        except Exception as exc:  # report, keep the MLX figures
            print(f"torch: {type(exc).__name__}: {exc}", file=sys.stderr)
    ok = True
    print(
        f"{args.n} ranks, float32 all_sum, median of >= {args.iters} iterations "
        f"(x {args.rounds} rounds for MLX), busbw GB/s"
    )
    for r in rows:
        r["probe_over_bare"] = r["probe"] / r["bare"] if r["bare"] else None
        r["torch"] = torch_bw.get(r["size"])
        r["mlx_over_torch"] = r["bare"] / r["torch"] if r["torch"] else None
        line = (
            f"{format_size(r['size']):>8}: probe {r['probe']:8.2f}  bare {r['bare']:8.2f}  "
            f"torch {r['torch'] or float('nan'):8.2f}  probe/bare "
            f"{r['probe_over_bare']:.3f}  mlx/torch "
            + (f"{r['mlx_over_torch']:.3f}" if r["mlx_over_torch"] else "n/a")
            + f"  #wrong {r['wrong']}"
        )
        print(line)
        if r["size"] >= 256 << 20 and r["probe_over_bare"] < TARGET_PROBE_BARE:
            ok = False
    print(
        f"target: probe/bare >= {TARGET_PROBE_BARE} at 256 MiB and above: "
        f"{'met' if ok else 'NOT met'}"
    )
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(
                {"n": args.n, "iters": args.iters, "rounds": args.rounds, "rows": rows},
                fh,
                indent=2,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
