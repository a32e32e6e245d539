"""Turns a :class:`~meshdoctor.probe.launcher.ProbeRun` into the verdict: MD5xx results and the
``probe`` section (figures in nccl-tests convention, nccl-tests doc/PERFORMANCE.md; per-rank exit status,
signal, stderr tail and failure signatures).

Figures: for each timed iteration the slowest rank's time counts (as nccl-tests takes the
maximum over ranks); time min/median/max are over iterations, in seconds; algbw = size / 1e9 /
median time (GB/s), busbw = algbw x :func:`launcher.bus_factor`.
"""

from __future__ import annotations

import dataclasses
import signal
import statistics
from typing import Any, Dict, List, Optional

from .. import signatures
from ..model import FAIL, OK, SKIP, WARN, ERROR, HostInfo, Remediation, Result, Verdict
from . import codes as C
from .events import RankState, describe_step
from .config import bus_factor, collective_deadline, init_deadline, plan_pairs
from .launcher import LaunchOutcome, ProbeRun
from .sizes import format_rate, format_size, format_size_exact

# Signatures that mean "another rank failed first": never the cause by themselves.
MESH = "mesh"  # the host label of results about the whole group (figures, correctness)


def _mesh(*args: Any, **kw: Any) -> Result:
    """A result about the whole group rather than one host."""
    return Result(*args, host=MESH, **kw)


CONSEQUENCES = {"MD606", "MD613", "MD614", "MD615", "MD683"}


def signal_name(returncode: Optional[int]) -> Optional[str]:
    """``SIGKILL`` for returncode -9 (subprocess convention), None for a normal exit."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def rank_signatures(st: RankState) -> List[signatures.Match]:
    """Signatures in the rank's stderr tail, its stdout lines that were not events (NCCL
    writes its ``NCCL WARN`` lines to stdout) and error events, plus exit-status signatures."""
    text = "\n".join(
        list(st.stderr)[-80:] + list(st.noise) + [e.get("message", "") for e in st.errors]
    )
    return signatures.classify(text) + signatures.classify_exit(st.returncode, text)


def rank_dict(st: RankState, out: LaunchOutcome) -> Dict[str, Any]:
    rc = st.returncode
    early = out.early_exits.get(st.rank)
    d: Dict[str, Any] = {
        "rank": st.rank,
        "host": st.host,
        "local": st.local,
        "pid": st.pid,
        "ready": st.ready is not None,
        "mlx": (st.ready or {}).get("mlx"),
        "python": (st.ready or {}).get("python"),
        "exit_code": rc if rc is not None and rc >= 0 else None,
        "signal": signal_name(rc),
        "exited_before_teardown": early is not None,
        "done": st.done,
        "last_step": {k: (st.last_step or {}).get(k) for k in ("op", "phase", "iter", "seq")}
        if st.last_step
        else None,
        "errors": [{k: e.get(k) for k in ("where", "type", "message")} for e in st.errors],
        "stderr_tail": st.stderr_tail(),
        "signatures": [m.to_dict() for m in rank_signatures(st)],
    }
    if st.noise:
        d["stdout_noise"] = list(st.noise)
    return d


def _sig(x: float) -> float:
    """``x`` to 5 significant digits (small bandwidths keep their digits: 2.75e-05 GB/s)."""
    return float(f"{x:.5g}")


def _stats(times: List[float]) -> Dict[str, float]:
    return {
        "min": round(min(times), 6),
        "median": round(statistics.median(times), 6),
        "max": round(max(times), 6),
    }


def op_figures(out: LaunchOutcome) -> List[Dict[str, Any]]:
    """Per-op figures over all ranks' result events (pairs excluded)."""
    by_op: Dict[str, Dict[int, Dict[str, Any]]] = {}
    for st in out.ranks:
        for r in st.results:
            if r.get("op") != "pair":
                by_op.setdefault(r["op"], {})[st.rank] = r
    n = len(out.ranks)
    figs = []
    for op, per_rank in by_op.items():
        any_r = next(iter(per_rank.values()))
        if any_r.get("skipped"):
            figs.append(
                {
                    "op": op,
                    "skipped": any_r["skipped"],
                    "unsupported": bool(any_r.get("unsupported")),
                }
            )
            continue
        iters = min(len(r.get("times", [])) for r in per_rank.values())
        slowest = [max(r["times"][i] for r in per_rank.values()) for i in range(iters)]
        size = int(any_r.get("size", 0))
        f: Dict[str, Any] = {
            "op": op,
            "size_bytes": size,
            "dtype": any_r.get("dtype"),
            "ranks_reporting": sorted(per_rank),
            "iters": iters,
            "wrong": sum(int(r.get("wrong", 0)) for r in per_rank.values()),
            "checked": sum(int(r.get("checked", 0)) for r in per_rank.values()),
        }
        if slowest:
            med = statistics.median(slowest)
            algbw = size / 1e9 / med if med > 0 else 0.0
            f.update(
                {
                    "time_s": _stats(slowest),
                    "algbw_gbs": _sig(algbw),
                    "busbw_gbs": _sig(algbw * bus_factor(op, n)),
                    "bus_factor": round(bus_factor(op, n), 4),
                }
            )
        if op == "all_gather":
            f.update(_digest_check(per_rank))
        figs.append(f)
    return figs


def _digest_check(per_rank: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """Each rank's all_gather slice as every rank received it must equal what it sent."""
    own = {r: res.get("own_digest") for r, res in per_rank.items()}
    mismatches = []
    for seen_at, res in per_rank.items():
        for src, dg in enumerate(res.get("digests") or []):
            if src in own and own[src] and dg != own[src]:
                mismatches.append(
                    {
                        "slice_of_rank": src,
                        "received_at_rank": seen_at,
                        "sent": own[src],
                        "received": dg,
                    }
                )
    return {
        "digests": {str(r): own[r] for r in sorted(own)},
        "digests_ok": not mismatches,
        "digest_mismatches": mismatches,
    }


def pair_figures(run: ProbeRun, out: LaunchOutcome) -> Dict[str, Any]:
    n = len(out.ranks)
    measured, unsupported = plan_pairs(n, run.cfg.backend)
    matrix: List[List[Optional[float]]] = [[None] * n for _ in range(n)]
    wrong: List[List[Optional[int]]] = [[None] * n for _ in range(n)]
    cells = []
    for st in out.ranks:
        for r in st.results:
            if r.get("op") != "pair" or not r.get("times"):
                continue
            s, d = int(r["src"]), int(r["dst"])
            med = statistics.median(r["times"])
            bw = _sig(int(r["size"]) / 1e9 / med) if med > 0 else 0.0
            matrix[s][d], wrong[s][d] = bw, int(r.get("wrong", 0))
            cells.append(
                {
                    "src": s,
                    "dst": d,
                    "busbw_gbs": bw,
                    "time_s": _stats(r["times"]),
                    "wrong": wrong[s][d],
                }
            )
    missing = [p for p in measured if matrix[p[0]][p[1]] is None]
    slowest = min(cells, key=lambda c: c["busbw_gbs"]) if cells else None
    return {
        "busbw_gbs": matrix,
        "wrong": wrong,
        "cells": cells,
        "unsupported": unsupported,
        "missing": missing,
        "slowest": slowest,
        "note": "ring backends connect ring neighbours only" if unsupported else "",
    }


def _ranks_str(ranks: List[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def culprits(out: LaunchOutcome) -> List[RankState]:
    """The ranks that failed first: died by a signal, exited without reporting an error, or
    reported an error that is not a consequence of another rank's failure (CONSEQUENCES)."""
    early = [
        st
        for st in out.ranks
        if st.rank in out.early_exits and not (st.done and out.early_exits[st.rank] == 0)
    ]
    early += [st for st in out.ranks if st.errors and st not in early]
    primary = []
    for st in early:
        rc = out.early_exits.get(st.rank)
        codes = {m.code for m in rank_signatures(st)}
        # a rank whose only complaint is a lost peer is not a cause, with or without a Python
        # error (NCCL ranks exit(1) with no exception: MLX nccl backend)
        if (rc is not None and rc < 0) or not (codes & CONSEQUENCES):
            primary.append(st)
    if not primary and out.failure:
        primary = [out.ranks[out.failure["rank"]]]
    return sorted(primary, key=lambda s: s.exited_at or float("inf"))


def _how(st: RankState, rc: Optional[int]) -> str:
    sig = signal_name(rc)
    if sig:
        return f"was killed by {sig}"
    if st.errors:
        e = st.errors[-1]
        return f"failed with {e.get('type')}: {e.get('message')}"
    if rc is not None:
        # NCCL and CUDA failures print a line and exit(1) with no Python exception (MLX nccl
        # backend): name that line
        said = next((m.line for m in rank_signatures(st)), None) or next(
            (ln.strip()[:300] for ln in reversed(st.stderr_tail()) if ln.strip()), None
        )
        return f"exited with status {rc} without reporting an error" + (
            f" (stderr: {said})" if said else ""
        )
    return "failed"


OUTSIDE_SIGKILL = (
    "It got a SIGKILL that meshdoctor did not send: most often the kernel's "
    "out-of-memory killer (Linux: `dmesg | grep -i oom`; macOS: jetsam in the "
    "system log), else an operator or a supervisor. Probe with a smaller --size, "
    "fewer ranks per host, or with less running beside it."
)


def _sig_remedy(sts: List[RankState]) -> Optional[str]:
    """The remedy of the first failure signature in these ranks' stderr that is a cause (not
    a consequence of another rank's death); else the SIGKILL-from-outside hint; else None."""
    for st in sts:
        for m in rank_signatures(st):
            if m.code not in CONSEQUENCES:
                return f"{m.code} {m.name}: {m.remedy}"
    if any(st.returncode == -signal.SIGKILL for st in sts):
        return OUTSIDE_SIGKILL
    return None


def _local_python_problem(cfg: Any, sts: List[RankState]) -> Optional[str]:
    """MD102's words when the local ranks could not start because their interpreter
    (``MESHDOCTOR_PYTHON``) is missing or has no MLX; None otherwise (or with remote ranks)."""
    import os
    import shutil

    if not sts or not all(s.local for s in sts):
        return None
    if (
        os.sep in cfg.python
        and not os.access(cfg.python, os.X_OK)
        or os.sep not in cfg.python
        and shutil.which(cfg.python) is None
    ):
        return (
            f"cannot run the Python that would run the ranks: {cfg.python}: no such executable file"
        )
    for s in sts:
        for e in s.errors:
            if e.get("type") == "ModuleNotFoundError" and "mlx" in str(e.get("message")):
                return f"MLX is not importable from {cfg.python}: {e['type']}: {e['message']}"
    return None


def build(run: ProbeRun, verdict: Verdict) -> Verdict:
    """Fill ``verdict`` (command "probe") from ``run``: results, hosts, probe section."""
    cfg = run.cfg
    n = cfg.world_size
    hosts_seen: Dict[str, int] = {}
    for h in cfg.hostfile.hosts:
        hosts_seen.setdefault(h.ssh or "localhost", h.rank)
    probe: Dict[str, Any] = {
        "run_id": run.run_id,
        "backend": cfg.backend,
        "world_size": n,
        "ops": [],
        "dtype": cfg.dtype,
        "size_bytes": cfg.size,
        "size": format_size(cfg.size),
        "iters": cfg.iters,
        "warmup": cfg.warmup,
        "deadline_s": round(collective_deadline(cfg), 3),
        "init_deadline_s": round(init_deadline(cfg), 3),
        "launches": len(run.launches),
    }
    verdict.probe = probe
    res = verdict.results
    first_host = next(iter(hosts_seen), "localhost")
    if run.preflight:
        probe["outcome"] = "preflight"
        probe["preflight"] = run.preflight
        res.append(
            Result(
                C.GROUP,
                "probe.group",
                FAIL,
                run.preflight["message"],
                host=first_host,
                evidence=dict(run.preflight),
                remediation=Remediation(
                    "Fix the hostfile entry named in the evidence, then probe again."
                ),
            )
        )
        verdict.hosts = [HostInfo(h, r) for h, r in hosts_seen.items()]
        return verdict
    out = run.launches[-1]
    unreachable = set()
    probe.update(
        {
            "outcome": out.kind,
            "ring_hostfile": out.ring_hostfile,
            "ranks": [rank_dict(st, out) for st in out.ranks],
            "teardown": out.actions,
            "leftovers": out.survivors,
            "detect_s": round(out.finished_at - out.detected_at, 4) if out.detected_at else None,
            "wall_s": round(out.finished_at - out.started_at, 4),
        }
    )
    formed = all(st.completed.get("init/init", 0) >= 1 for st in out.ranks)
    lead = culprits(out) if out.kind in ("dead", "init", "start") else []
    if out.kind == "start":
        sts = lead or out.ranks
        who = "; ".join(
            f"rank {s.rank} ({s.host}) {_how(s, out.early_exits.get(s.rank))}; "
            f"stderr: {' | '.join(s.stderr_tail(3)) or '(empty)'}"
            for s in sts[:3]
        )
        msg = out.message or f"could not start: {who}"
        for s in sts:
            if not s.local:
                unreachable.add(s.host)
        python_bad = _local_python_problem(cfg, sts)
        if python_bad:  # the same finding, and the same exit (1), as `check` (MD102)
            res.append(
                Result(
                    C.START,
                    "probe.start",
                    FAIL,
                    python_bad,
                    host=sts[0].host,
                    evidence={"ranks": [s.rank for s in sts], "python": cfg.python},
                    remediation=Remediation(
                        'pip install mlx (on Linux: pip install "mlx[cpu]") in the '
                        "environment the ranks run in, or point MESHDOCTOR_PYTHON at "
                        "it (`meshdoctor check --only MD102` says the same)."
                    ),
                )
            )
            sts = []
    if out.kind == "start" and sts:
        res.append(
            Result(
                C.START,
                "probe.start",
                ERROR,
                msg,
                host=sts[0].host if sts else first_host,
                evidence={"ranks": [s.rank for s in sts]},
                remediation=Remediation(
                    "Check that the interpreter exists and has mlx "
                    "(MESHDOCTOR_PYTHON), then probe again."
                    if sts and sts[0].local
                    else "Check ssh (BatchMode, keys), that Python and mlx are "
                    "installed on that host (MESHDOCTOR_REMOTE_PYTHON), then probe "
                    "again."
                ),
            )
        )
    elif out.kind == "init" or not formed and out.kind in ("dead", "hang", "deadline"):
        sts = lead or [s for s in out.ranks if s.errors]
        if sts:
            first = sts[0]
            msg = (
                f"group formation ({cfg.backend}, {n} ranks) failed: rank {first.rank} "
                f"({first.host}) {_how(first, out.early_exits.get(first.rank))}"
            )
        else:
            msg = (
                f"group formation ({cfg.backend}, {n} ranks) did not finish within "
                f"{init_deadline(cfg):.0f} s"
            )
        remedy = _sig_remedy(sts) or (
            "Check every rank's address in the hostfile is reachable "
            "from its left neighbour and not in use, then probe again."
        )
        res.append(
            Result(
                C.GROUP,
                "probe.group",
                FAIL,
                msg,
                host=sts[0].host if sts else first_host,
                evidence={
                    "ranks": [s.rank for s in sts],
                    "hang": out.hang,
                    "ring_hostfile": out.ring_hostfile,
                },
                remediation=Remediation(remedy),
            )
        )
    elif formed:
        res.append(
            Result(
                C.GROUP, "probe.group", OK, f"{cfg.backend} group of {n} ranks formed", host=MESH
            )
        )
    if out.kind == "interrupted":
        res.append(
            _mesh(
                C.INTERRUPTED,
                "probe.interrupted",
                ERROR,
                f"{out.message}; every rank was torn down",
                evidence={"formed": formed},
                remediation=Remediation("Probe again; the mesh was not assessed."),
            )
        )
    if out.kind == "dead" and formed:
        sts = lead
        first = sts[0]
        step = describe_step(first.last_step)
        others = [
            s.rank
            for s in out.ranks
            if s not in sts and s.rank in out.early_exits and out.early_exits[s.rank] != 0
        ]
        msg = (
            f"rank {first.rank} ({first.host}, pid {first.pid}) "
            f"{_how(first, out.early_exits.get(first.rank))} during {step}"
        )
        if len(sts) > 1:
            msg += f"; also {_ranks_str([s.rank for s in sts[1:]])}"
        if others:
            msg += f"; {_ranks_str(others)} then failed (peer lost)"
        res.append(
            Result(
                C.DEAD,
                "probe.rank",
                FAIL,
                msg,
                host=first.host,
                evidence={
                    "ranks": [s.rank for s in sts],
                    "signal": signal_name(out.early_exits.get(first.rank)),
                    "exit_status": out.early_exits.get(first.rank),
                    "step": first.last_step
                    and {k: first.last_step.get(k) for k in ("op", "phase", "iter", "seq")},
                    "stderr_tail": first.stderr_tail(),
                    "detect_s": probe["detect_s"],
                },
                remediation=Remediation(
                    _sig_remedy(sts)
                    or "Find why that rank died (its stderr tail, dmesg / crash "
                    "reports (.ips) on its host); probe again."
                ),
            )
        )
    if out.kind in ("hang", "deadline") and formed:
        res.append(_hang_result(cfg, out))
    if out.stacks:
        probe["stacks"] = {str(k): v[-6000:] for k, v in out.stacks.items()}
    if out.native_stacks:
        probe["native_stacks"] = {str(k): v for k, v in out.native_stacks.items()}
    _figures(run, out, probe, res)
    if out.survivors:
        stuck = {(f["host"], f["pid"]) for f in out.unkillable}
        for f in out.survivors:
            unk = (f["host"], f["pid"]) in stuck
            res.append(
                Result(
                    C.LEFTOVER,
                    "probe.leftovers",
                    FAIL,
                    f"pid {f['pid']} (rank {f.get('rank')}, {f.get('status')}) was "
                    f"still running after teardown"
                    + ("; it survived SIGKILL" if unk else "; killed"),
                    host=f["host"],
                    evidence=f,
                    needs_reboot=unk,
                    remediation=Remediation(
                        "Reboot this host: a rank that survives SIGKILL is stuck in the driver."
                        if unk
                        else "Killed now; if it keeps happening, report the evidence.",
                        None if unk else f"kill -9 {f['pid']}",
                    ),
                )
            )
    # a host ssh could not reach (in teardown, or when its rank could not start) was not
    # looked at: a result about it is never ok
    unreached = dict(out.unreachable)
    for s in out.ranks:
        if s.host in unreachable and s.host not in unreached:
            unreached[s.host] = "its rank could not be started over ssh"
    reached = sorted({s.host for s in out.ranks} - set(unreached))
    if not out.survivors and reached:
        where = "" if not unreached else f" on the hosts reached ({', '.join(reached)})"
        gpu = out.gpu_after
        if gpu is not None and gpu.get("held"):
            res.append(_gpu_held(out, gpu))
        else:
            res.append(
                Result(
                    C.LEFTOVER,
                    "probe.leftovers",
                    OK,
                    f"no rank process left after teardown{where}" + _gpu_note(gpu),
                    host=MESH,
                    evidence={"run_id": out.run_id, "hosts": reached, "gpu_after": gpu},
                )
            )
    for host, why in sorted(unreached.items()):
        unreachable.add(host)
        # ssh exiting 255 before the rank said ready: the connection never came up
        ranks = [
            s.rank
            for s in out.ranks
            if s.host == host
            and s.pid is not None
            and not (s.ready is None and s.returncode == 255)
        ]
        if not ranks:  # no rank of this run ran there: not looked at, never ok
            res.append(
                Result(
                    C.LEFTOVER,
                    "probe.leftovers",
                    SKIP,
                    f"{host} could not be reached over ssh ({why}): no rank of this "
                    "run ran there, and it was not checked for leftovers",
                    host=host,
                    evidence={"ssh": why},
                )
            )
            continue
        res.append(
            Result(
                C.LEFTOVER,
                "probe.leftovers",
                FAIL,
                f"could not reach {host} over ssh to stop {_ranks_str(ranks)} and "
                f"check for leftovers: {why}",
                host=host,
                evidence={
                    "ranks": ranks,
                    "ssh": why,  # what is known of them
                    "pids": {
                        str(s.rank): s.pid
                        for s in out.ranks
                        if s.host == host and s.pid is not None
                    },
                },
                remediation=Remediation(
                    f"Once {host} answers again, look for leftover ranks there "
                    "(`meshdoctor check --only MD301` on that host) and check its "
                    "link (cable, port state)."
                ),
            )
        )
    verdict.hosts = [HostInfo(h, r, reachable=h not in unreachable) for h, r in hosts_seen.items()]
    verdict.actions = out.actions or None
    return verdict


def _slowdown_result(slow: List[Dict[str, Any]]) -> Result:
    """GPU clocks held back for power or heat while the probe ran (NVML violation time)."""
    what = ", ".join(f"GPU {s['gpu']} {s['reason']} {s['ms']:.1f} ms" for s in slow)
    return _mesh(
        C.BANDWIDTH,
        "probe.gpu_clocks",
        WARN,
        f"GPU clocks were held back during the probe ({what}): the figures may be "
        "below what these GPUs and links give",
        evidence={"slowdown": slow},
        remediation=Remediation(
            "Check cooling and power limits (nvidia-smi -q -d PERFORMANCE,POWER, "
            "`meshdoctor check` MD113), then probe again."
        ),
    )


def _gpu_note(gpu: Optional[Dict[str, Any]]) -> str:
    """What NVML said about this host's GPUs after teardown (nccl runs), for the summary."""
    if gpu is None:
        return ""
    if not gpu.get("nvml"):
        return f"; GPU memory not checked ({gpu.get('reason')})"
    used = ", ".join(
        f"GPU {g['index']} {g['used_bytes'] / (1 << 20):.0f} MiB used" for g in gpu.get("gpus", [])
    )
    return f"; no GPU memory held by the ranks (NVML: {used})"


def _gpu_held(out: LaunchOutcome, gpu: Dict[str, Any]) -> Result:
    """A local rank's pid still charged with GPU memory after it was torn down."""
    h = gpu["held"][0]
    mib = "?" if h.get("used_bytes") is None else f"{h['used_bytes'] / (1 << 20):.0f}"
    return Result(
        C.LEFTOVER,
        "probe.leftovers",
        FAIL,
        f"GPU {h['gpu']} still holds {mib} MiB for pid {h['pid']} of this run "
        f"{gpu.get('waited_s', 0):.1f} s after teardown"
        + (f" (and {len(gpu['held']) - 1} more)" if len(gpu["held"]) > 1 else ""),
        host="localhost",
        evidence={"run_id": out.run_id, "gpu_after": gpu},
        remediation=Remediation(
            "The driver did not free the memory of a rank that exited: reset the GPU "
            "once nothing else uses it (a reboot if that is refused).",
            f"sudo nvidia-smi --gpu-reset -i {h['gpu']}",
        ),
    )


def _hang_result(cfg, out: LaunchOutcome) -> Result:
    hang = out.hang or {}
    step = hang.get("step")
    stalled = {s["rank"]: s for s in hang.get("no_heartbeat", [])}
    # the silent ones first: a rank that stopped heartbeating is the strongest suspect (a rank
    # merely one step behind is usually waiting on it)
    missing = sorted(
        (a["rank"] for a in hang.get("not_arrived", [])), key=lambda r: (r not in stalled, r)
    )
    waiting = [w["rank"] for w in hang.get("waiting", [])]
    parts = []
    if missing:
        desc = []
        for r in missing:
            extra = []
            if r in stalled:
                if stalled[r].get("state") == "stopped":
                    extra.append("process stopped")
                extra.append(f"no heartbeat for {stalled[r]['silent_s']:.1f} s")
            desc.append(f"rank {r}" + (f" ({', '.join(extra)})" if extra else ""))
        parts.append(f"never arrived: {', '.join(desc)}")
    if waiting:
        w = max(x["waited_s"] for x in hang["waiting"])
        parts.append(f"{_ranks_str(waiting)} waited {w:.1f} s inside it")
    what = (
        "the whole-run deadline passed"
        if out.kind == "deadline"
        else f"hung past the {out.deadline_s:.1f} s deadline"
    )
    auto = collective_deadline(dataclasses.replace(cfg, timeout=None))
    silent_inside = [r for r in waiting if r in stalled]  # stopped inside it: the suspects
    if silent_inside:
        parts.append(
            "silent inside it: "
            + ", ".join(
                f"rank {r} ("
                + ("process stopped, " if stalled[r].get("state") == "stopped" else "")
                + f"no heartbeat for {stalled[r]['silent_s']:.1f} s)"
                for r in silent_inside
            )
        )
    all_inside = not missing and not silent_inside and len(set(waiting)) == len(out.ranks)
    ring_deadlock = (
        "A ring that hangs without any rank dying matches the known ring deadlock "
        "(mlx 0.32.2, a few % of CPU-stream all_sum calls at 3+ ranks): run "
        "collectives on stream=mx.cpu, upgrade mlx, and gate long jobs on --soak."
    )
    if all_inside:  # nobody to blame: every rank was inside the collective, none came out
        msg = (
            f"all {len(waiting)} ranks entered {describe_step(step)} and none left within "
            f"the {out.deadline_s:.1f} s deadline"
        )
        if cfg.timeout and cfg.timeout < auto:
            msg += (
                f" (--timeout {cfg.timeout:g}); the deadline sized for "
                f"{format_size(cfg.size)} would be {auto:.1f} s"
            )
            remedy = (
                f"--timeout {cfg.timeout:g} s is shorter than this collective can take at "
                f"{format_size(cfg.size)}: probe again without --timeout (the deadline is "
                f"then {auto:.1f} s, sized for the message) or with a longer one. If it "
                "still hangs with every rank inside, that is a real hang. " + ring_deadlock
            )
        else:
            remedy = (
                "No rank stopped or fell behind: the collective itself made no "
                "progress. " + ring_deadlock
            )
        host = MESH
    elif cfg.backend == "nccl":  # NCCL survivors spin inside the kernel, with no message
        msg = f"{describe_step(step)} {what}" + (": " + "; ".join(parts) if parts else "")
        host = out.ranks[(missing or silent_inside or [0])[0]].host
        remedy = (
            "The rank that never arrived is the suspect: check its process and host "
            "(stopped, swapping, a dead link). NCCL has no timeout of its own here: the "
            "survivors of a stopped or dead peer keep their GPU at 100 % until killed, so "
            "gate jobs on a deadline like this one."
        )
    else:
        msg = f"{describe_step(step)} {what}" + (": " + "; ".join(parts) if parts else "")
        host = out.ranks[(missing or silent_inside or [0])[0]].host
        remedy = (
            "The rank that never arrived is the suspect: check its process and host "
            "(stopped, swapping, a dead link). " + ring_deadlock
        )
    return Result(
        C.HANG,
        "probe.hang",
        FAIL,
        msg,
        host=host,
        evidence={
            "hang": hang,
            "stacks_captured": sorted(out.stacks),
            "deadline_s": out.deadline_s,
            "auto_deadline_s": round(auto, 3),
            "all_ranks_inside": bool(all_inside),
        },
        remediation=Remediation(remedy),
    )


def _figures(run: ProbeRun, out: LaunchOutcome, probe: Dict[str, Any], res: List[Result]) -> None:
    cfg = run.cfg
    figs = op_figures(out)
    probe["ops"] = figs
    probe["skipped_ops"] = [
        {"op": f["op"], "reason": f["skipped"]} for f in figs if f.get("skipped")
    ]
    for f in figs:
        op = f["op"]
        if f.get("skipped"):
            res.append(_mesh(C.WRONG, f"probe.{op}", "skip", f"{op}: {f['skipped']}"))
            continue
        bad_digest = f.get("digests_ok") is False
        if f["wrong"] or bad_digest:
            txt = (
                f"{op}: #wrong {f['wrong']} of {f['checked']} elements checked (all ranks, "
                "all iterations)"
            )
            if bad_digest:
                mm = f["digest_mismatches"]
                txt += (
                    f"; {len(mm)} gathered slice(s) arrived with a different digest than "
                    f"sent (first: rank {mm[0]['slice_of_rank']}'s slice at rank "
                    f"{mm[0]['received_at_rank']})"
                )
            res.append(
                _mesh(
                    C.WRONG,
                    f"probe.{op}",
                    FAIL,
                    txt,
                    evidence={k: f.get(k) for k in ("wrong", "checked", "digest_mismatches")},
                    remediation=Remediation(
                        "Silent corruption: do not run jobs on this mesh. Re-seat "
                        "cables, reboot the nodes involved, probe again."
                    ),
                )
            )
        elif f.get("iters") or op == "bare_all_sum":
            res.append(
                _mesh(
                    C.WRONG,
                    f"probe.{op}",
                    OK,
                    f"{op}: #wrong 0 of {f['checked']} elements checked (all ranks, "
                    "all iterations)" + (", digests match" if op == "all_gather" else ""),
                    evidence={"checked": f["checked"]},
                )
            )
        if "busbw_gbs" in f:
            t = f["time_s"]
            res.append(
                _mesh(
                    C.BANDWIDTH,
                    f"probe.{op}",
                    OK,
                    f"{op} {format_size_exact(f['size_bytes'])}: busbw "
                    f"{format_rate(f['busbw_gbs'])}, algbw "
                    f"{format_rate(f['algbw_gbs'])}, time median "
                    f"{t['median'] * 1e3:.1f} ms (min {t['min'] * 1e3:.1f}, max "
                    f"{t['max'] * 1e3:.1f})",
                    evidence={
                        k: f[k] for k in ("size_bytes", "time_s", "algbw_gbs", "busbw_gbs", "iters")
                    },
                )
            )
    if out.gpu_slowdown:
        probe["gpu_slowdown"] = out.gpu_slowdown
        res.append(_slowdown_result(out.gpu_slowdown))
    if cfg.pairs and cfg.backend == "nccl":
        res.append(
            _mesh(
                C.PAIRS,
                "probe.pairs",
                "skip",
                "pairs: the nccl backend has no send/recv (mlx 0.32.x)",
            )
        )
    elif cfg.pairs and out.kind == "ok":
        pf = pair_figures(run, out)
        probe["pairs"] = pf
        bad = [c for c in pf["cells"] if c["wrong"]]
        if bad or pf["missing"]:
            what = [f"{c['src']}->{c['dst']} #wrong {c['wrong']}" for c in bad] + [
                f"{s}->{d} not measured" for s, d in pf["missing"]
            ]
            res.append(
                _mesh(
                    C.PAIRS,
                    "probe.pairs",
                    FAIL,
                    "pairs failing: " + ", ".join(what),
                    evidence=pf,
                    remediation=Remediation(
                        "Check the link between the ranks named (cable, port state, "
                        "hostfile order)."
                    ),
                )
            )
        elif pf["slowest"]:
            s = pf["slowest"]
            res.append(
                _mesh(
                    C.PAIRS,
                    "probe.pairs",
                    OK,
                    f"{len(pf['cells'])} pairs measured; slowest {s['src']}->"
                    f"{s['dst']} at {format_rate(s['busbw_gbs'])}",
                    evidence={"slowest": s, "unsupported": pf["unsupported"]},
                )
            )
    if cfg.soak:
        calls = 0
        for o in run.launches:
            for op in cfg.ops:
                calls += min(st.completed.get(f"{op}/soak", 0) for st in o.ranks)
        hangs = len(run.soak_hangs)
        attempted = calls + hangs
        rate = hangs / attempted if attempted else 0.0
        probe["soak"] = {
            "repetitions": cfg.soak,
            "calls": attempted,
            "completed": calls,
            "hangs": hangs,
            "hang_rate": round(rate, 6),
            "hang_steps": run.soak_hangs,
            "relaunches": len(run.launches) - 1,
        }
        complete = out.kind == "ok"
        status = FAIL if hangs else (OK if complete else WARN)
        summary = (
            f"soak: {hangs} hang(s) in {attempted} calls ({rate:.1%}), "
            f"{len(run.launches) - 1} relaunch(es)"
        )
        if status == WARN:
            summary += "; the soak did not complete (see the other findings)"
        res.append(
            _mesh(
                C.SOAK,
                "probe.soak",
                status,
                summary,
                evidence=probe["soak"],
                remediation=Remediation(
                    "Hangs without a dead rank match the known ring deadlock (mlx "
                    "0.32.2, a few % of CPU-stream all_sum calls at 3+ ranks): "
                    "upgrade mlx, keep collectives on stream=mx.cpu, and gate long "
                    "jobs on a clean soak."
                )
                if hangs
                else None,
            )
        )
