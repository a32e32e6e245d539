"""The probe worker: runs inside every rank, drives the real MLX collectives, reports JSON lines.

Self-contained on purpose (the probe's contract): it imports only the standard library and
``mlx`` (inside :func:`main`), never the rest of meshdoctor, so the launcher can start it as a
file locally or feed its source to ``python3 -`` over ssh on a host where meshdoctor is not
installed. The launcher side (:mod:`meshdoctor.probe.events`) imports the protocol constants from
here; importing this module does not import mlx.

Protocol: one JSON object per line on stdout, each with ``ev``, ``rank`` and ``t`` (wall clock,
seconds since the epoch):

* ``ready``: pid, host, python, mlx version, backend, platform;
* ``enter`` / ``leave``: one step (``init``, a collective, or the ``barrier`` before one, with
  ``before`` naming that op): ``op``, ``phase`` (init, warmup, timed, soak, pair, bench),
  ``iter``, ``seq`` (the same step number on every rank), ``peer`` (send/recv), and on leave
  ``dt`` (seconds);
* ``result``: per op: ``size`` (bytes), ``count``, ``dtype``, ``times`` (seconds per timed
  iteration, each a lap of its batch), ``batch_s`` and ``batches`` (seconds of all timed batches
  together, and how many: see :func:`batch_plan`; absent under soak), ``wrong`` (elements that differ from the exact expected value, nccl-tests
  ``#wrong``), ``checked`` (elements compared), all_gather ``digests`` (blake2b-128 of each
  rank's slice as received here) and ``own_digest`` (of the slice this rank sent);
* ``hb``: heartbeat from a side thread every ``hb_interval`` seconds with the current ``seq``
  and ``step`` (the step the rank is in, as its enter event plus ``t0``, the wall clock when it
  began, or null): inside a timed batch
  only the first iteration writes ``enter`` and the last ``leave`` (with ``steps``, the
  batch's count), the others are known from the heartbeat;
* ``error``: ``where`` (op or init), ``type``, ``message``; the traceback goes to stderr;
* ``done``.

Exactness (nccl-tests doc/PERFORMANCE.md: #wrong counts elements off the exact value): element i of rank r's data is
``((i mod m)(r+1) + r) mod m + 1`` with ``m <= 61`` chosen so the sum over all ranks stays below
the dtype's exact-integer limit (float32 2^24, float16 2^11, bfloat16 2^8), so an all_sum result
is exact and compared element for element.

Backends: ring and JACCL run every collective on the CPU stream; nccl (MLX's CUDA build) on the
GPU stream with the arrays in GPU memory, and each step waits for the device (``mx.synchronize``)
before its time is taken. The data, the expected values and the #wrong count are all computed
where the arrays live; only the count (and all_gather's digests) reach the host.

Python stacks: ``faulthandler`` is registered on SIGUSR1 (all threads, to stderr), so the launcher
can dump a hung rank's stacks before killing it. Test-only fault injection:
``MESHDOCTOR_PROBE_FAULT=kind:rank[:step],...`` with kind ``kill`` (SIGKILL itself on entering
the step: a number ``seq``, or a name ``phase.op.iter`` such as ``soak.all_sum.3``), ``stop``
(SIGSTOP itself there), ``kill-in`` / ``stop-in`` (the same signal :data:`FAULT_IN_DELAY_S`
after the step started: inside the collective) or ``corrupt`` (add 1 to element 0 of its data).
"""

from __future__ import annotations

import faulthandler
import hashlib
import json
import os
import platform
import signal
import sys
import tempfile
import threading
import time
import traceback

PROTOCOL = 1
EV_READY, EV_ENTER, EV_LEAVE, EV_RESULT = "ready", "enter", "leave", "result"
EV_HB, EV_ERROR, EV_DONE = "hb", "error", "done"

PLAN_ENV = "MESHDOCTOR_PROBE_PLAN"  # JSON plan, see Plan keys below
FILES_ENV = "MESHDOCTOR_PROBE_FILES"  # JSON {ENV_NAME: file content} written to temp files
FAULT_ENV = "MESHDOCTOR_PROBE_FAULT"  # test-only fault injection
MARKER_ENV = "MESHDOCTOR_PROBE_ID"  # == meshdoctor.ranks.PROBE_MARKER_ENV
STACK_SIGNAL = signal.SIGUSR1
FILE_PREFIX = "meshdoctor-probe-"  # temp files: FILE_PREFIX + run id + "-..." (launcher cleans)

OPS = ("all_sum", "all_gather", "send_recv")
# More collectives (MLX 0.30.1+: all_max/all_min in every backend; sum_scatter: see OP_SUPPORT).
OPS = OPS + ("all_max", "all_min", "sum_scatter")
# Which backend lacks which op, by MLX version (MLX sources, v0.30.1-v0.32.x). An op not listed
# for a backend is there in every version. A value is the first MLX version that has it, or None
# when no version up to the installed one has it. An unsupported op is skipped with the reason,
# never called: the ring's sum_scatter raises "sum_scatter not supported." and was also reported
# to hang silently (MLX #4285).
OP_SUPPORT = {
    "sum_scatter": {
        "ring": None,
        "mpi": None,
        "jaccl": (0, 32, 1),
        "jaccl-ring": (0, 32, 1),
        "nccl": (0, 0, 0),
    },
    "send_recv": {"nccl": None},
}
OP_SUPPORT_NOTE = {
    "sum_scatter": "jaccl has it from MLX 0.32.1, nccl has it; ring and mpi do not",
    "send_recv": "ring, jaccl and mpi have it; nccl does not",
}


def version_tuple(text: str) -> tuple:
    """``"0.32.1.dev0"`` -> ``(0, 32, 1)``; stops at the first non-numeric part."""
    out = []
    for part in str(text).split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def unsupported(op: str, backend: str, mlx_version: str):
    """Why ``backend`` in MLX ``mlx_version`` cannot run ``op`` (a sentence naming the MLX
    version that adds it), or None when it can."""
    table = OP_SUPPORT.get(op, {})
    if backend not in table:
        return None
    first = table[backend]
    have = version_tuple(mlx_version)
    if first is not None and (not have or have >= first):
        return None
    note = OP_SUPPORT_NOTE.get(op, "")
    if first is None:
        return f"the {backend} backend has no {op} (MLX {mlx_version}); {note}"
    return (
        f"the {backend} backend adds {op} in MLX {'.'.join(map(str, first))}; this is "
        f"MLX {mlx_version} ({note})"
    )


BENCH_OPS = ("bare_all_sum",)
# Largest integer N such that every integer 0..N is exact in the dtype (significand bits).
EXACT_LIMIT = {"float32": 1 << 24, "float16": 1 << 11, "bfloat16": 1 << 8, "int32": (1 << 31) - 1}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4}
DTYPES = tuple(EXACT_LIMIT)  # the --dtype choices
VALUE_MOD_MAX = 61


def value_modulus(dtype: str, world_size: int) -> int:
    """The modulus m of the data pattern: at most 61, and ``m * world_size`` within the exact
    range of ``dtype`` so that all_sum stays exact. Raises KeyError for an unknown dtype."""
    return max(1, min(VALUE_MOD_MAX, EXACT_LIMIT[dtype] // max(1, world_size)))


def parse_faults(text: str):
    """``"kill:1:5,corrupt:2,stop:1:soak.all_sum.3"`` -> ``[("kill", 1, 5), ("corrupt", 2,
    None), ("stop", 1, "soak.all_sum.3")]``; bad items are ignored (test-only switch). The third
    field is a step number (``seq``) or a step name ``phase.op.iter``, which matches the first
    step of that iteration (the barrier before the op, else the op itself) in whatever launch
    reaches it: a relaunch that starts after it never matches."""
    out = []
    for item in (text or "").split(","):
        parts = item.strip().split(":")
        if len(parts) < 2 or parts[0] not in ("kill", "stop", "corrupt", "kill-in", "stop-in"):
            continue
        try:
            at = None
            if len(parts) > 2:
                at = int(parts[2]) if parts[2].isdigit() else parts[2]
                if isinstance(at, str) and at.count(".") != 2:
                    continue
            out.append((parts[0], int(parts[1]), at))
        except ValueError:
            continue
    return out


# Timed iterations run in batches (nccl-tests: a barrier, then the iterations back to back, one
# clock reading before and after; per-iteration barriers would add every rank's start skew to
# every call). The outputs of a batch are kept for the exact check after it, up to this many
# bytes and iterations per rank: a longer run is split into balanced batches, each after its
# own barrier (the skew of one barrier is then spread over up to BATCH_MAX_ITERS calls).
RETAIN_BYTES = 512 << 20
BATCH_MAX_ITERS = 32


def batch_plan(iters: int, nbytes: int) -> list:
    """``[(first_iteration, count), ...]``: the timed iterations in batches of at most
    :data:`BATCH_MAX_ITERS` and ``max(1, RETAIN_BYTES // nbytes)`` (so the outputs kept for
    checking stay within :data:`RETAIN_BYTES`, or one output at a larger size), balanced: 5
    iterations of 128 MiB -> ``[(0, 3), (3, 2)]``."""
    iters = max(0, int(iters))
    if not iters:
        return []
    per = max(1, min(BATCH_MAX_ITERS, RETAIN_BYTES // max(1, int(nbytes))))
    n_batches = -(-iters // per)
    base, extra = divmod(iters, n_batches)
    out, start = [], 0
    for k in range(n_batches):
        count = base + (1 if k < extra else 0)
        out.append((start, count))
        start += count
    return out


# kill-in / stop-in: the signal comes this long after the step starts, while the main thread is
# inside the collective (a 1 GiB NCCL all_sum on 2 H200s takes about 4 ms; a 64 MiB ring all_sum
# over loopback about 400 ms).
FAULT_IN_DELAY_S = 0.002

# Exit status of a worker whose launcher went away (its stdout pipe closed): the heartbeat's next
# write fails within hb_interval and the rank exits instead of staying blocked in a collective.
LAUNCHER_GONE_EXIT = 69


class Emitter:
    """Writes one JSON event per line to fd 1 with a single ``os.write`` under a lock, so the
    heartbeat thread and the main thread never interleave."""

    def __init__(self, rank: int, fd: int = 1) -> None:
        self.rank, self.fd, self.lock = rank, fd, threading.Lock()

    def __call__(self, ev: str, **fields) -> None:
        rec = {"ev": ev, "rank": self.rank, "t": round(time.time(), 6)}
        rec.update(fields)
        data = (json.dumps(rec, separators=(",", ":")) + "\n").encode()
        with self.lock:
            try:
                while data:
                    data = data[os.write(self.fd, data) :]
            except OSError:  # launcher gone (EPIPE): a rank must not outlive its launcher
                os._exit(LAUNCHER_GONE_EXIT)


class Worker:
    """One rank's run of a plan. ``plan`` keys: backend, world_size, ops, size (bytes), iters,
    warmup, dtype, pairs (list of [src, dst]), soak (repetitions), start ({op: first soak
    repetition}), hb_interval (seconds)."""

    def __init__(self, mx, plan: dict, rank: int, emit: Emitter, faults) -> None:
        self.mx, self.plan, self.rank, self.emit = mx, plan, rank, emit
        self.faults = [f for f in faults if f[1] == rank]
        self.fired: set = set()  # faults that already happened (a named one matches once)
        self.seq = 0
        self.current = None
        self.group = None
        self.n = int(plan.get("world_size", 1))
        self.dtype = getattr(mx, plan.get("dtype", "float32"))
        self.dtype_name = plan.get("dtype", "float32")
        self.itemsize = self.dtype.size
        self.m = value_modulus(self.dtype_name, self.n)
        self.files: list = []
        # The backend's stream: ring and JACCL run on the CPU stream; nccl on the GPU (its
        # collectives are GPU kernels, mlx 0.32.x), with arrays in GPU memory.
        self.gpu = plan.get("backend") == "nccl"
        self.stream = mx.gpu if self.gpu else mx.cpu

    # --- data -------------------------------------------------------------------------------
    def period(self, rank: int):
        """One period (``m`` elements) of rank ``rank``'s pattern, in the probe's dtype."""
        mx = self.mx
        i = mx.arange(self.m, dtype=mx.uint32)
        return ((i * (rank + 1) + rank) % self.m + 1).astype(self.dtype)

    def tiled(self, period, count: int):
        """``count`` elements repeating ``period``: one full-size array, no full-size
        temporaries (the data only depends on the index modulo ``m``)."""
        mx = self.mx
        reps = -(-count // self.m)
        return mx.tile(period, (reps,))[:count]

    def values(self, rank: int, count: int):
        """Rank ``rank``'s exact data pattern of ``count`` elements (see module docstring)."""
        return self.tiled(self.period(rank), count)

    def mine(self, count: int):
        """This rank's data, with element 0 off by one when the corrupt fault is set."""
        x = self.values(self.rank, count)
        if any(f[0] == "corrupt" for f in self.faults):
            mx = self.mx
            x = x + (mx.arange(count) == 0).astype(self.dtype)
        self.mx.eval(x)
        return x

    def wrong(self, y, expected) -> int:
        """Number of elements of ``y`` that differ from ``expected`` (exact comparison)."""
        return int(self.mx.sum(y != expected).item())

    def digest(self, a) -> str:
        """A 128-bit BLAKE2b digest of the array's bytes, to compare all_gather results across
        ranks."""
        raw = a.view(self.mx.uint8) if self.itemsize > 1 else a
        return hashlib.blake2b(bytes(memoryview(raw)), digest_size=16).hexdigest()

    # --- steps ------------------------------------------------------------------------------
    def step(
        self,
        op: str,
        phase: str,
        it: int,
        fn,
        peer=None,
        involved: bool = True,
        before=None,
        sync: bool = True,
        enter: bool = True,
        leave=True,
    ):
        """Run one step on every rank: the step number advances everywhere; ``fn`` runs and is
        reported (enter/leave with ``dt`` seconds) only where ``involved``. Inside a timed batch
        (:meth:`timed_batch`): ``sync=False`` leaves the device wait to the end of the batch,
        ``enter=False`` / ``leave=False`` write no event (the heartbeat carries the step), and a
        ``leave`` dict adds its fields to the leave event."""
        self.seq += 1
        if not involved:
            return None, 0.0
        name = f"{phase}.{before or op}.{it}"
        for kind, _, at in self.faults:  # test-only: die or stop before arriving
            if at in (self.seq, name) and kind in ("kill", "stop") and (kind, at) not in self.fired:
                self.fired.add((kind, at))
                os.kill(os.getpid(), signal.SIGKILL if kind == "kill" else signal.SIGSTOP)
            if at == self.seq and kind in ("kill-in", "stop-in"):  # ... or inside the step
                threading.Timer(
                    FAULT_IN_DELAY_S,
                    os.kill,
                    (os.getpid(), signal.SIGKILL if kind == "kill-in" else signal.SIGSTOP),
                ).start()
        ev = {"op": op, "phase": phase, "iter": it, "seq": self.seq}
        if peer is not None:
            ev["peer"] = peer
        if before is not None:
            ev["before"] = before
        self.current = dict(ev, t0=round(time.time(), 6))  # the heartbeat's view of the step
        if enter:
            self.emit(EV_ENTER, **ev)
        t0 = time.perf_counter()
        out = fn()
        if sync:
            self.sync()
        dt = time.perf_counter() - t0
        if leave:
            self.emit(EV_LEAVE, dt=round(dt, 6), **ev, **(leave if isinstance(leave, dict) else {}))
        self.current = None
        return out, dt

    def sync(self) -> None:
        """On the GPU, wait for the device (``mx.synchronize``) so a step's time is the
        collective's, not its launch's."""
        if self.gpu:
            self.mx.synchronize()

    def heartbeat(self, stop: threading.Event, interval: float) -> None:
        """Emit a heartbeat every ``interval`` seconds until ``stop`` is set (runs in its own
        thread, so a rank stuck inside a collective still beats)."""
        while not stop.wait(interval):
            cur = self.current
            self.emit(EV_HB, seq=self.seq, op=cur["op"] if cur else None, step=cur)

    # --- ops --------------------------------------------------------------------------------
    def _count(self) -> int:
        return max(1, int(self.plan["size"]) // self.itemsize)

    def case(self, op: str):
        """(call, check, nbytes, extra) for ``op``: ``call()`` runs one evaluated collective,
        ``check(y)`` returns the #wrong of its output."""
        mx, n, r = self.mx, self.n, self.rank
        cpu = self.stream  # the backend's stream (the GPU for nccl), see __init__
        if op in ("all_sum", "bare_all_sum", "all_max", "all_min"):
            count = self._count()
            x = self.mine(count)
            fold = {"all_max": mx.maximum, "all_min": mx.minimum}.get(op, mx.add)
            total = self.period(0)  # every rank's pattern reduced, one period long
            for k in range(1, n):
                total = fold(total, self.period(k))
            expected = self.tiled(total, count)
            mx.eval(expected)
            coll = getattr(mx.distributed, "all_sum" if op == "bare_all_sum" else op)

            def call():
                y = coll(x, group=self.group, stream=cpu)
                mx.eval(y)
                return y

            return call, (lambda y: self.wrong(y, expected)), count * self.itemsize, {}
        if op == "sum_scatter":
            c = max(1, self._count() // n)  # this rank's share of the summed input
            x = self.mine(c * n)
            total = self.period(0)
            for k in range(1, n):
                total = total + self.period(k)
            expected = self.tiled(total, c * n)[r * c : (r + 1) * c]
            mx.eval(expected)

            def call():
                y = mx.distributed.sum_scatter(x, group=self.group, stream=cpu)
                mx.eval(y)
                return y

            # size as nccl-tests' reduce_scatter: the whole input (n shares)
            return call, (lambda y: self.wrong(y, expected)), n * c * self.itemsize, {}
        if op == "all_gather":
            c = max(1, self._count() // n)
            x = self.mine(c)
            expected = mx.concatenate([self.values(k, c) for k in range(n)])
            mx.eval(expected)

            def call():
                y = mx.distributed.all_gather(x, group=self.group, stream=cpu)
                mx.eval(y)
                return y

            return (
                call,
                (lambda y: self.wrong(y, expected)),
                n * c * self.itemsize,
                {"x": x, "slice": c},
            )
        if op == "send_recv":
            count = self._count()
            x = self.mine(count)
            nxt, prv = (r + 1) % n, (r - 1) % n
            expected = self.values(prv, count)
            mx.eval(expected)

            def call():
                s = mx.distributed.send(x, nxt, group=self.group, stream=cpu)
                if r % 2 == 0:  # odd/even order: deadlock-free for any n >= 2
                    mx.eval(s)
                    y = mx.distributed.recv_like(x, prv, group=self.group, stream=cpu)
                    mx.eval(y)
                else:
                    y = mx.distributed.recv_like(x, prv, group=self.group, stream=cpu)
                    mx.eval(y)
                    mx.eval(s)
                return y

            return call, (lambda y: self.wrong(y, expected)), count * self.itemsize, {"peer": nxt}
        raise ValueError(f"unknown op {op!r}; expected one of {OPS + BENCH_OPS}")

    def run_op(self, op: str) -> None:
        """Run one op of the plan: warm-up and timed iterations, each value checked; an op the
        backend lacks is reported skipped."""
        if op == "send_recv" and self.n < 2:
            self.emit(EV_RESULT, op=op, skipped="send/recv needs at least 2 ranks")
            return
        why = unsupported(op, self.plan.get("backend", "ring"), getattr(self.mx, "__version__", ""))
        if why:
            self.emit(EV_RESULT, op=op, skipped=why, unsupported=True)
            return
        call, check, nbytes, extra = self.case(op)
        peer = extra.get("peer")
        warmup, iters = int(self.plan.get("warmup", 1)), int(self.plan.get("iters", 5))
        if op == "bare_all_sum":  # benchmark baseline: a bare loop, no events, no checks

            def loop():
                ts = []
                t_start = time.perf_counter()
                for _ in range(iters):
                    t0 = time.perf_counter()
                    call()
                    ts.append(time.perf_counter() - t0)
                self.sync()
                return ts, time.perf_counter() - t_start

            for i in range(warmup):
                self.step(op, "warmup", i, call)
            self.barrier("bench", 0, op)  # start together, as the probe's timed batch
            (times, batch), _ = self.step(op, "bench", 0, loop)
            self.emit(
                EV_RESULT,
                op=op,
                size=nbytes,
                dtype=self.dtype_name,
                times=times,
                batch_s=round(batch, 6),
                batches=1,
                wrong=0,
                checked=0,
                world_size=self.n,
            )
            return
        wrong = checked = 0
        times, digests = [], None
        for i in range(warmup):
            self.barrier("warmup", i, op)
            y, _ = self.step(op, "warmup", i, call, peer)
            wrong += check(y)
            checked += y.size
        soak = int(self.plan.get("soak", 0))
        first = int((self.plan.get("start") or {}).get(op, 0))
        batch_s = batches = None
        if soak:  # every call under its own deadline, each checked before the next
            for i in range(first, soak):
                self.barrier("soak", i, op)
                y, dt = self.step(op, "soak", i, call, peer)
                times.append(dt)
                wrong += check(y)
                checked += y.size
                if op == "all_gather" and digests is None:
                    digests = self.gathered_digests(y, extra["slice"])
                del y
        else:
            batch_s, batches = 0.0, 0
            plan = batch_plan(iters, nbytes)
            out_bytes = nbytes // self.n if op == "sum_scatter" else nbytes
            for start, count in plan:
                kept, secs = self.timed_batch(
                    op, start, count, call, peer, times, prime=(out_bytes, plan, start == 0)
                )
                batch_s += secs
                batches += 1
                for y in kept:  # every value checked, after the clock stopped
                    wrong += check(y)
                    checked += y.size
                    if op == "all_gather" and digests is None:
                        digests = self.gathered_digests(y, extra["slice"])
                del kept
        res = {
            "op": op,
            "size": nbytes,
            "dtype": self.dtype_name,
            "times": times,
            "wrong": wrong,
            "checked": checked,
            "world_size": self.n,
        }
        if batch_s is not None:
            res["batch_s"], res["batches"] = round(batch_s, 6), batches
        if op == "all_gather":
            res["digests"] = digests or []
            res["own_digest"] = self.digest(extra["x"])
        if peer is not None:
            res["peer"] = peer
        self.emit(EV_RESULT, **res)

    def prime(self, out_bytes: int, plan: list) -> None:
        """Have MLX's buffer cache hold, before the clock starts, the output buffers a timed
        batch of ``plan`` keeps alive (``out_bytes`` each): the cache limit is raised to fit
        them (MLX's default on the CPU is 32 MiB, mlx 0.32.4) and as many buffers are allocated
        and freed, so the batch reuses them instead of faulting fresh pages in while timed (a
        bare loop frees and reuses one buffer)."""
        mx = self.mx
        per = max((count for _, count in plan), default=0)
        elems = max(1, int(out_bytes) // self.itemsize)
        set_limit = getattr(mx, "set_cache_limit", None)
        if per < 2 or set_limit is None:
            return
        prev = set_limit(0)
        set_limit(max(prev, (per + 4) * elems * self.itemsize))
        zero = mx.array(0, dtype=self.dtype)
        bufs = [mx.zeros((elems,), dtype=self.dtype) + zero for _ in range(per)]
        mx.eval(bufs)
        del bufs

    def gathered_digests(self, y, c: int) -> list:
        """The digest of each rank's slice (``c`` elements) of a gathered output ``y``."""
        return [self.digest(y[k * c : (k + 1) * c]) for k in range(self.n)]

    def timed_batch(
        self, op: str, start: int, count: int, call, peer, laps: list, prime=None, **kw
    ):
        """One timed batch (nccl-tests' timing: a barrier, then ``count`` iterations back to
        back, the clock read once before and once after, the device waited for once at the
        end): returns ``(outputs, seconds)``, the outputs kept for the exact check that follows
        outside the clock. Each iteration is still a step (its own number, fault point and lap
        time appended to ``laps``), but only the first writes ``enter`` and only the last
        ``leave`` (with ``steps``, the batch's count): the others are seen through the
        heartbeat, which carries the current step, so deadlines and hang reports still see
        every call while the launcher is not woken per call. ``prime``: ``(out_bytes, plan,
        first)``, and when ``first`` the barrier step first fills MLX's buffer cache
        (:meth:`prime`), under the barrier's deadline. ``kw`` goes to :meth:`step` (the pairs'
        ``involved``)."""
        phase = "pair" if op == "pair" else "timed"
        name = "send_recv" if op == "pair" else op
        ready = None
        if prime and prime[2]:
            ready = lambda: self.prime(prime[0], prime[1])  # noqa: E731
        self.barrier(phase, start, name, prepare=ready)
        kept = []
        last = start + count - 1
        t0 = time.perf_counter()
        for i in range(start, start + count):
            y, dt = self.step(
                name,
                phase,
                i,
                call,
                peer,
                sync=False,
                enter=i == start,
                leave={"steps": count} if i == last else False,
                **kw,
            )
            laps.append(dt)
            kept.append(y)
        self.sync()
        return kept, time.perf_counter() - t0

    def barrier(self, phase: str, it: int, before: str, prepare=None) -> None:
        """A 1-element all_sum step (MLX has no barrier in mlx.core.distributed, mlx 0.32.4):
        every rank starts the next iteration or timed batch together, so the verification done
        before it does not show up as skew in its time. ``prepare`` (a callable) runs first,
        inside the step: work before a timed batch that must not be timed."""
        mx = self.mx
        one = mx.ones((1,), dtype=mx.float32)

        def fn():
            if prepare is not None:
                prepare()
            mx.eval(mx.distributed.all_sum(one, group=self.group, stream=self.stream))

        self.step("barrier", phase, it, fn, before=before)

    def run_pairs(self) -> None:
        """send/recv between every listed ordered pair, one at a time: warm-up iterations, then
        the timed ones in batches (:meth:`timed_batch`, each after a 1-element all_sum barrier so
        the pair's timing starts together); the receiver checks every value and reports."""
        mx, cpu, r = self.mx, self.mx.cpu, self.rank
        count = self._count()
        x = self.mine(count)
        warmup, iters = int(self.plan.get("warmup", 1)), int(self.plan.get("iters", 5))
        for src, dst in self.plan.get("pairs") or []:
            expected = self.values(src, count) if r == dst else None
            times, wrong = [], 0

            def xfer(src=src, dst=dst):  # bound now: called within this iteration
                if r == src:
                    mx.eval(mx.distributed.send(x, dst, group=self.group, stream=cpu))
                    return None
                y = mx.distributed.recv_like(x, src, group=self.group, stream=cpu)
                mx.eval(y)
                return y

            involved = r in (src, dst)
            peer = dst if r == src else src
            for i in range(warmup):
                self.barrier("pair", i, "send_recv")
                y, _ = self.step("send_recv", "pair", i, xfer, peer=peer, involved=involved)
                if r == dst:
                    wrong += self.wrong(y, expected)
            batch_s = 0.0
            plan = batch_plan(iters, count * self.itemsize)
            for start, n_it in plan:
                first = start == 0 and r == dst
                kept, secs = self.timed_batch(
                    "pair",
                    warmup + start,
                    n_it,
                    xfer,
                    peer,
                    times,
                    prime=(count * self.itemsize, plan, first),
                    involved=involved,
                )
                batch_s += secs
                if r == dst:
                    wrong += sum(self.wrong(y, expected) for y in kept)
                del kept
            if r == dst:
                self.emit(
                    EV_RESULT,
                    op="pair",
                    src=src,
                    dst=dst,
                    size=count * self.itemsize,
                    dtype=self.dtype_name,
                    times=times,
                    batch_s=round(batch_s, 6),
                    wrong=wrong,
                    checked=count * (warmup + iters),
                    world_size=self.n,
                )

    def run(self) -> None:
        """The rank's whole plan: form the group (under the init deadline), run every op, report,
        exit."""
        mx = self.mx
        backend = self.plan.get("backend", "ring")
        mlx_backend = "jaccl" if backend == "jaccl-ring" else backend

        def init():
            try:
                return mx.distributed.init(strict=True, backend=mlx_backend)
            finally:  # the backend has read its files (MLX_HOSTFILE, MLX_IBV_DEVICES)
                _remove(self.files)

        # Every array of the run (data, expected values, the exact check, the primed buffers)
        # lives where the collective runs: on MLX's CUDA build the default device is the GPU,
        # whose arrays are CUDA managed memory, so a ring or JACCL collective on the CPU stream
        # would move every page between GPU and CPU at each call and check (on one H200 host,
        # ring at 2 ranks and 256 MiB: probe/bare 0.62 before, benchmarks/results). nccl's
        # arrays stay on the default device, the GPU (and a build without one still fails in
        # init, with MLX's own message).
        if not self.gpu:
            mx.set_default_device(mx.cpu)
        self.group, _ = self.step("init", "init", 0, init)
        if self.group.size() != self.n or self.group.rank() != self.rank:
            raise RuntimeError(
                f"group formed with rank {self.group.rank()} of "
                f"{self.group.size()}, expected rank {self.rank} of {self.n}"
            )
        for op in self.plan.get("ops", []):
            self.run_op(op)
        if self.plan.get("pairs"):
            self.run_pairs()


def _remove(paths: list) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


def _materialise_files(spec: str) -> list:
    """Write each ``{ENV_NAME: content}`` of ``spec`` to a temp file and export its path (as
    mlx.launch does for MLX_HOSTFILE and MLX_IBV_DEVICES); returns the paths."""
    paths = []
    for name, content in (json.loads(spec) if spec else {}).items():
        fd, path = tempfile.mkstemp(
            prefix=f"{FILE_PREFIX}{os.environ.get(MARKER_ENV, 'x')}-", suffix=".json"
        )
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.environ[name] = path
        paths.append(path)
    return paths


def main() -> int:
    """Entry point inside a rank; returns the exit status (0 done, 1 error)."""
    rank = int(os.environ.get("MLX_RANK", "0"))
    emit = Emitter(rank)
    faulthandler.register(STACK_SIGNAL, file=sys.stderr, all_threads=True)
    paths = []
    stop = threading.Event()
    where = "start"
    try:
        plan = json.loads(os.environ.get(PLAN_ENV) or "{}")
        paths = _materialise_files(os.environ.get(FILES_ENV, ""))
        where = "import"
        import mlx.core as mx

        emit(
            EV_READY,
            pid=os.getpid(),
            host=platform.node(),
            python=platform.python_version(),
            mlx=getattr(mx, "__version__", "?"),
            backend=plan.get("backend", "ring"),
            platform=sys.platform,
            protocol=PROTOCOL,
        )
        w = Worker(mx, plan, rank, emit, parse_faults(os.environ.get(FAULT_ENV, "")))
        w.files = paths
        threading.Thread(
            target=w.heartbeat,
            args=(stop, float(plan.get("hb_interval", 0.25))),
            daemon=True,
            name="meshdoctor-heartbeat",
        ).start()
        where = "run"
        w.run()
        stop.set()
        emit(EV_DONE)
        return 0
    except BaseException as exc:  # report everything, including KeyboardInterrupt
        stop.set()
        cur = locals().get("w")
        op = cur.current["op"] if cur is not None and cur.current else where
        emit(EV_ERROR, where=op, type=type(exc).__name__, message=str(exc)[:2000])
        traceback.print_exc(file=sys.stderr)
        return 1
    finally:
        _remove(paths)
        try:
            sys.stderr.flush()
        except Exception:
            pass


if __name__ == "__main__":
    os._exit(main())  # skip interpreter teardown: MLX group destructors must not hang an exit
