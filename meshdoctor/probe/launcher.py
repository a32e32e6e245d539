"""The probe launcher: starts one worker per rank (locally or over ssh), watches the events under
deadlines, names the rank at fault, tears everything down and checks nothing is left.

Not mlx.launch, whose exit status cannot be trusted (knowledge.md §1: exit 0 when ranks fail).
Contract: design.md "Probe", issue 4. The launcher returns data (:class:`ProbeRun`);
:mod:`meshdoctor.probe.report` turns it into a verdict.

Deadlines (all seconds):

* per step: ``--timeout``, else ``DEADLINE_SLACK_S`` + the bytes one rank moves (busbw bytes)
  divided by ``BUS_FLOOR_BPS`` (20 MB/s, conservative: the loopback ring on this 2-core box
  measured ~300 MB/s busbw with mlx 0.32.4). A step "hangs" when no rank made progress for that
  long, or one rank sat inside a step that long;
* group formation: ``max(INIT_DEADLINE_S, per-step deadline)`` (the ring backend retries a
  connect for ~32 s before failing, mlx 0.32.4);
* the whole run: formation + every planned step's deadline, a backstop.

A rank that exits early is noticed within one poll (50 ms); the others get ``GRACE_S`` to report
their own errors, then teardown: SIGTERM to each rank's process group (SIGKILL at once to a
stopped one, where SIGTERM would stay pending), ``TERM_WAIT_S``, SIGKILL to the rest. Only
processes this launcher started are signalled, never pid 1, this process or its parents.
Afterwards :func:`meshdoctor.ranks.find_ranks` (locally) or ``ps`` over ssh (remote hosts) looks
for any process still carrying this run's marker.
"""

from __future__ import annotations

import errno
import glob
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import execute, remote
from ..hostfile import Host, Hostfile, is_this_machine, local_names
from ..ranks import send_signal
from . import env as envmod
from .events import RankState, Tracker
from .worker import BENCH_OPS, FILE_PREFIX, STACK_SIGNAL

WORKER_PATH = Path(__file__).with_name("worker.py")

BUS_FLOOR_BPS = 20e6
DEADLINE_SLACK_S = 10.0
INIT_DEADLINE_S = 45.0
HB_INTERVAL_S = 0.25
HB_STALE_S = 2.0
GRACE_S = 0.3
TERM_WAIT_S = 0.5
KILL_WAIT_S = 3.0
STACK_WAIT_S = 1.0
POLL_S = 0.05
MAX_SOAK_HANGS = 5
REMOTE_PORT_RANGE = (20000, 60000)

EventHook = Callable[[int, Dict[str, Any], "Launch"], None]


@dataclass
class ProbeConfig:
    """What to probe. ``hostfile``: the mesh (see :func:`local_hostfile` for ``-n``);
    ``backend``: ring, jaccl or jaccl-ring; ``ops``: subset of all_sum, all_gather, send_recv
    (and bare_all_sum for the benchmark); ``size``: bytes per message (all_gather: the gathered
    output, as nccl-tests); ``iters``/``warmup``: timed/untimed iterations per op; ``dtype``;
    ``timeout``: per-step deadline in seconds (None: from the size); ``soak``: repetitions per op
    with relaunch after a hang (0: off); ``pairs``: the N x N send/recv matrix; ``port``: first
    ring port / jaccl coordinator port (None: free ports / 32323); ``python``: interpreter for
    local ranks (``MESHDOCTOR_PYTHON``, else this one); ``remote_python``: for ssh ranks
    (``MESHDOCTOR_REMOTE_PYTHON``, default python3)."""

    hostfile: Hostfile
    backend: str = "ring"
    ops: List[str] = field(default_factory=lambda: ["all_sum", "all_gather", "send_recv"])
    size: int = 256 << 20
    iters: int = 5
    warmup: int = 1
    dtype: str = "float32"
    timeout: Optional[float] = None
    soak: int = 0
    pairs: bool = False
    port: Optional[int] = None
    python: str = field(default_factory=lambda: os.environ.get("MESHDOCTOR_PYTHON")
                        or sys.executable)
    remote_python: str = field(default_factory=lambda: os.environ.get(
        "MESHDOCTOR_REMOTE_PYTHON", "python3"))
    init_timeout: Optional[float] = None
    hb_interval: float = HB_INTERVAL_S
    hb_stale: float = HB_STALE_S

    @property
    def world_size(self) -> int:
        return self.hostfile.world_size


def bus_factor(op: str, n: int) -> float:
    """nccl-tests busbw factor (knowledge.md §5): all-reduce 2(n-1)/n, all-gather (n-1)/n,
    send/recv 1."""
    if op in ("all_sum", "bare_all_sum"):
        return 2 * (n - 1) / n
    if op == "all_gather":
        return (n - 1) / n
    return 1.0


def collective_deadline(cfg: ProbeConfig) -> float:
    """Per-step deadline in seconds (see module doc)."""
    if cfg.timeout:
        return float(cfg.timeout)
    n = max(2, cfg.world_size)
    ops = list(cfg.ops) + (["send_recv"] if cfg.pairs else [])
    busbytes = max(cfg.size * bus_factor(op, n) for op in ops) if ops else cfg.size
    return DEADLINE_SLACK_S + busbytes / BUS_FLOOR_BPS


def init_deadline(cfg: ProbeConfig) -> float:
    """Deadline in seconds for start-up plus group formation."""
    return cfg.init_timeout or max(INIT_DEADLINE_S, collective_deadline(cfg))


def local_hostfile(n: int) -> Hostfile:
    """The embedded default: ``n`` ranks on this machine over loopback (ring)."""
    hosts = [Host(i, "localhost", ["127.0.0.1"], []) for i in range(n)]
    hf = Hostfile(hosts, "ring", [], None, None)
    hf.raw = {"backend": "ring", "hosts": [{"ssh": "localhost", "ips": ["127.0.0.1"]}] * n}
    return hf


def plan_pairs(n: int, backend: str) -> Tuple[List[List[int]], List[List[int]]]:
    """``(measured, unsupported)`` ordered pairs [src, dst] for ``--pairs``. The ring backend
    and jaccl-ring only send between ring neighbours (mlx 0.32.4: "[ring] Send only supported
    to direct neighbors"); the jaccl mesh connects every pair."""
    measured, unsupported = [], []
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            neighbours = (d - s) % n in (1, n - 1)
            (measured if backend == "jaccl" or neighbours else unsupported).append([s, d])
    return measured, unsupported


def steps_per_rank(cfg: ProbeConfig) -> int:
    """How many steps (init + collectives) each rank runs: the progress total."""
    per_op = 2 * (cfg.warmup + (cfg.soak or cfg.iters))  # a barrier before each iteration
    steps = 1 + sum(cfg.warmup + 1 if op in BENCH_OPS else per_op for op in cfg.ops)
    if cfg.pairs:
        steps += 2 * len(plan_pairs(cfg.world_size, cfg.backend)[0]) * (cfg.warmup + cfg.iters)
    return steps


def is_local(host: Host, names: Optional[set] = None) -> bool:
    """A rank runs locally (without ssh) when its host is this machine
    (:func:`meshdoctor.hostfile.is_this_machine`)."""
    return is_this_machine(host, names)


class PreflightError(Exception):
    """The run cannot start as configured; ``where`` is a hostfile path like ``hosts[1].ips[0]``,
    the message says what is wrong and what to do."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


def choose_ports(hf: Hostfile, local: Sequence[bool], port: Optional[int]) -> List[int]:
    """Ring ports, one per IP of every host (in rank order). ``port`` given: consecutive from it,
    as mlx.launch ``--starting-port``. Otherwise, when every rank is local, ports the kernel
    hands out (bind to port 0, then close); with remote ranks, a random consecutive block.

    Also checks that each local rank's IP is assigned on this machine (bind to it), so the
    probe never sends a connect to an address that is not ours; raises :class:`PreflightError`.
    """
    held: List[socket.socket] = []
    ports: List[int] = []
    try:
        for h, loc in zip(hf.hosts, local):
            for j, ip in enumerate(h.ips):
                if not loc:
                    continue
                fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
                s = socket.socket(fam, socket.SOCK_STREAM)
                held.append(s)
                try:
                    s.bind((ip, 0))
                except OSError as exc:
                    why = "is not assigned on this machine" \
                        if exc.errno == errno.EADDRNOTAVAIL else f"cannot be bound ({exc})"
                    raise PreflightError(
                        f"hosts[{h.rank}].ips[{j}]",
                        f"rank {h.rank} runs on this machine ({h.ssh or 'localhost'}) but its "
                        f"address {ip} {why}: the ring backend would fail to listen there. Put "
                        "this machine's own IP in the hostfile, or the right ssh name for the "
                        "host that owns it.") from None
                if port is None and all(local):
                    ports.append(s.getsockname()[1])
    finally:
        for s in held:
            s.close()
    count = envmod.port_count(hf)
    if port is not None:
        return list(range(port, port + count))
    if all(local):
        return ports
    base = random.randrange(REMOTE_PORT_RANGE[0], REMOTE_PORT_RANGE[1] - count)
    return list(range(base, base + count))


# --- processes --------------------------------------------------------------------------------
class RankProc:
    """One started rank: a local worker process, or the local ssh client of a remote one.

    ``pid``: the local child's pid (the worker itself locally; ssh's for a remote rank);
    ``remote_pid``: the worker's pid on its host (from its ready event)."""

    def __init__(self, rank: int, host: str, local: bool, popen: subprocess.Popen,
                 hosts: "remote.Hosts") -> None:
        self.rank, self.host, self.local, self.popen = rank, host, local, popen
        self.hosts = hosts
        self.pid = popen.pid
        self.remote_pid: Optional[int] = None

    def poll(self) -> Optional[int]:
        return self.popen.poll()

    def signal(self, sig: int) -> str:
        """Send ``sig`` to this rank (its whole process group locally; the worker pid over ssh
        for a remote rank). Returns an outcome string; never raises."""
        if self.local:
            return _signal_group(self.pid, sig)
        if self.remote_pid is None:
            return "remote pid unknown"
        r = self.hosts.run(self.host, ["kill", f"-{signal.Signals(sig).name[3:]}",
                                   str(self.remote_pid)], timeout=5)
        return "sent" if r.ok else f"failed: {r.describe()}"

    def state(self) -> Optional[str]:
        """Process state (psutil names: running, sleeping, stopped, zombie...) or None."""
        if self.local:
            try:
                import psutil

                return psutil.Process(self.pid).status()
            except Exception:
                return None
        if self.remote_pid is None:
            return None
        r = self.hosts.run(self.host, ["ps", "-o", "stat=", "-p", str(self.remote_pid)],
                           timeout=5)
        code = r.stdout.strip()[:1] if r.ok else ""
        return {"T": "stopped", "R": "running", "S": "sleeping", "D": "disk-sleep",
                "Z": "zombie", "U": "disk-sleep"}.get(code)


def _signal_group(pid: int, sig: int) -> str:
    """Signal the process group ``pid`` leads (we started it with a new session); see
    :func:`meshdoctor.ranks.send_signal` for what is refused."""
    return send_signal(pid, sig, group=True)


@dataclass
class LaunchOutcome:
    """One launch of all ranks. ``kind``: ok, dead (a rank exited early), init (group formation
    failed), start (a rank could not start), hang (a step passed its deadline), deadline (the
    whole-run deadline). Times are launcher monotonic seconds; ``detect_s`` is from the first
    sign of failure (exit seen, or deadline passed) to the end of teardown and the leftover
    check."""

    kind: str
    run_id: str
    ranks: List[RankState]
    plan: Dict[str, Any]
    deadline_s: float
    ring_hostfile: Optional[List[List[str]]] = None
    failure: Optional[Dict[str, Any]] = None
    hang: Optional[Dict[str, Any]] = None
    stacks: Dict[int, str] = field(default_factory=dict)
    native_stacks: Dict[int, str] = field(default_factory=dict)
    actions: List[Dict[str, Any]] = field(default_factory=list)
    survivors: List[Dict[str, Any]] = field(default_factory=list)
    unkillable: List[Dict[str, Any]] = field(default_factory=list)
    unreachable: Dict[str, str] = field(default_factory=dict)
    message: str = ""
    early_exits: Dict[int, int] = field(default_factory=dict)
    started_at: float = 0.0
    detected_at: Optional[float] = None
    finished_at: float = 0.0


class Launch:
    """Start, watch and tear down one set of ranks (see module doc). ``on_event(rank, event,
    launch)`` is called for every worker event in the launcher's thread (progress display,
    tests that inject faults)."""

    def __init__(self, cfg: ProbeConfig, run_id: str, plan: Dict[str, Any],
                 local: Sequence[bool], ports: Sequence[int],
                 on_event: Optional[EventHook] = None) -> None:
        self.cfg, self.run_id, self.plan, self.local = cfg, run_id, plan, list(local)
        self.ports = list(ports)
        self.on_event = on_event
        self.q: "queue.Queue[Tuple[int, str, Optional[str]]]" = queue.Queue()
        self.procs: List[Optional[RankProc]] = []
        self.eof: Dict[Tuple[int, str], bool] = {}
        self.exit_seen: Dict[int, float] = {}
        self.threads: List[threading.Thread] = []
        self.deadline = collective_deadline(cfg)
        self.hosts = remote.Hosts()
        hf = cfg.hostfile
        self.states = [RankState(h.rank, h.ssh or "localhost", loc)
                       for h, loc in zip(hf.hosts, self.local)]
        self.tracker: Optional[Tracker] = None

    # --- start --------------------------------------------------------------------------------
    def _reader(self, rank: int, stream: str, pipe) -> None:
        try:
            for raw in iter(pipe.readline, b""):
                self.q.put((rank, stream, raw.decode("utf-8", "replace")))
        except (OSError, ValueError):
            pass
        finally:
            self.q.put((rank, "eof-" + stream, None))

    def start(self) -> Optional[str]:
        """Start every rank; returns an error message if one could not be started (the ones
        already started are then torn down by :meth:`run`)."""
        cfg, hf = self.cfg, self.cfg.hostfile
        shared, files = envmod.backend_env(hf, cfg.backend, ports=self.ports, port=cfg.port,
                                           deadline_s=self.deadline)
        self.ring_hostfile = envmod.ring_entries(hf, self.ports) if cfg.backend == "ring" \
            else None
        self.tracker = Tracker(self.states, time.monotonic())
        source = None
        for h, loc in zip(hf.hosts, self.local):
            env = envmod.rank_env(hf, h.rank, run_id=self.run_id, plan=self.plan,
                                  shared_env=shared, files=files)
            try:
                if loc:
                    full = dict(os.environ)
                    full.update(env)
                    p = subprocess.Popen([cfg.python, "-u", str(WORKER_PATH), self.run_id],
                                         env=full, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True)
                else:
                    if source is None:
                        source = WORKER_PATH.read_bytes()
                    p = remote.popen(h.ssh, [cfg.remote_python, "-u", "-", self.run_id], env,
                                     stdin=subprocess.PIPE)
                    try:
                        p.stdin.write(source)
                        p.stdin.close()
                    except OSError:
                        pass
            except (OSError, remote.RemoteError) as exc:
                self.procs.append(None)
                return (f"rank {h.rank} ({h.ssh or 'localhost'}) could not be started: {exc}. "
                        + ("Check --python / that this interpreter exists." if loc else
                           "Check that ssh is installed and the host name is right."))
            rp = RankProc(h.rank, h.ssh or "localhost", loc, p, self.hosts)
            self.procs.append(rp)
            if loc:
                self.states[h.rank].pid = p.pid
            for stream, pipe in (("out", p.stdout), ("err", p.stderr)):
                t = threading.Thread(target=self._reader, args=(h.rank, stream, pipe),
                                     daemon=True, name=f"probe-r{h.rank}-{stream}")
                t.start()
                self.threads.append(t)
        return None

    # --- watch --------------------------------------------------------------------------------
    def _drain(self, timeout: float) -> None:
        tr = self.tracker
        try:
            item = self.q.get(timeout=timeout)
        except queue.Empty:
            return
        while True:
            rank, stream, line = item
            now = time.monotonic()
            if stream == "out":
                ev = tr.stdout_line(rank, line, now)
                if ev is not None:
                    if ev.get("ev") == "ready" and self.procs[rank] is not None and \
                            not self.local[rank] and isinstance(ev.get("pid"), int):
                        self.procs[rank].remote_pid = ev["pid"]
                    if self.on_event is not None:
                        self.on_event(rank, ev, self)
            elif stream == "err":
                tr.stderr_line(rank, line)
            else:
                self.eof[(rank, stream[4:])] = True
            try:
                item = self.q.get_nowait()
            except queue.Empty:
                return

    def _poll_exits(self) -> None:
        now = time.monotonic()
        for p in self.procs:
            if p is None or self.states[p.rank].returncode is not None:
                continue
            rc = p.poll()
            if rc is None:
                continue
            first = self.exit_seen.setdefault(p.rank, now)
            # record the exit once its stdout is drained (its last error event comes first)
            if self.eof.get((p.rank, "out")) or now - first > 0.5:
                self.tracker.exited(p.rank, rc, now)

    def step_deadline(self) -> float:
        front = self.tracker.frontier()
        if front is None or front.get("op") == "init":
            return init_deadline(self.cfg)
        if front.get("phase") == "bench":
            return self.deadline * max(1, int(self.plan.get("iters", 1)))
        return self.deadline

    def run_budget(self) -> float:
        return init_deadline(self.cfg) + steps_per_rank(self.cfg) * self.deadline + 10.0

    def watch(self) -> Tuple[str, Optional[float]]:
        """Wait until done or a failure; returns ``(kind, detected_at)``."""
        tr = self.tracker
        t_end = time.monotonic() + self.run_budget()
        failing_since: Optional[float] = None
        while True:
            self._drain(POLL_S)
            self._poll_exits()
            now = time.monotonic()
            if tr.all_done():
                return "ok", None
            if tr.failed():
                failing_since = failing_since or now
                if all(not s.alive for s in self.states) or now - failing_since >= GRACE_S:
                    return self._failure_kind(), failing_since
                continue
            limit = self.step_deadline()
            stuck = any(s.current is not None and now - s.current["since"] > limit
                        for s in self.states)
            if now - tr.last_progress > limit or stuck:
                return ("init" if self._in_init() else "hang"), now
            if now > t_end:
                return "deadline", now

    def _in_init(self) -> bool:
        front = self.tracker.frontier()
        return front is None or front.get("op") == "init"

    def _failure_kind(self) -> str:
        ff = self.tracker.first_failure or {}
        st = self.states[ff.get("rank", 0)]
        if st.ready is None:
            return "start"
        step = st.last_step or {}
        if step.get("op") == "init" or any(e.get("where") == "init" for e in st.errors):
            return "init"
        return "dead"

    # --- evidence -----------------------------------------------------------------------------
    def capture_stacks(self) -> Tuple[Dict[int, str], Dict[int, str]]:
        """Python stacks of every live, not stopped rank (faulthandler on SIGUSR1, dumped to its
        stderr), and native stacks via py-spy when it is installed (local ranks only)."""
        marks, asked = {}, []
        for p in self.procs:
            if p is None or not self.states[p.rank].alive:
                continue
            if p.state() == "stopped":
                continue
            marks[p.rank] = self.states[p.rank].stderr_lines
            target = p.pid if p.local else p.remote_pid
            if p.local and target:
                if send_signal(target, STACK_SIGNAL) == "sent":
                    asked.append(p.rank)
            elif not p.local and target:
                if self.hosts.run(p.host, ["kill", "-USR1", str(target)], timeout=5).ok:
                    asked.append(p.rank)
        t_end = time.monotonic() + STACK_WAIT_S
        while asked and time.monotonic() < t_end:
            self._drain(0.05)
            got = [r for r in asked if self.states[r].stderr_lines > marks[r]]
            if len(got) == len(asked):
                self._drain(0.15)  # let the rest of the dump arrive
                break
        stacks = {}
        for r in asked:
            st = self.states[r]
            new = st.stderr_lines - marks[r]
            if new > 0:
                stacks[r] = "\n".join(list(st.stderr)[-new:])
        native = {}
        spy = execute.which("py-spy")
        if spy:
            for p in self.procs:
                if p is not None and p.local and self.states[p.rank].alive:
                    res = execute.run([spy, "dump", "--pid", str(p.pid)], timeout=5)
                    native[p.rank] = (res.stdout or res.describe())[-4000:]
        return stacks, native

    # --- teardown -----------------------------------------------------------------------------
    def teardown(self) -> List[Dict[str, Any]]:
        """SIGTERM every live rank, wait, SIGKILL the rest, reap; returns the actions taken."""
        actions: List[Dict[str, Any]] = []
        live = [p for p in self.procs if p is not None and p.poll() is None]
        for p in live:
            # a stopped process keeps SIGTERM pending until SIGCONT: go straight to SIGKILL
            sig = signal.SIGKILL if p.local and p.state() == "stopped" else signal.SIGTERM
            actions.append({"action": f"{sig.name} rank {p.rank} ({p.host}, pid "
                            f"{p.pid if p.local else p.remote_pid})"
                            + (" (stopped)" if sig == signal.SIGKILL else ""),
                            "outcome": p.signal(sig)})
        self._wait_dead(live, TERM_WAIT_S)
        live = [p for p in live if p.poll() is None]
        for p in live:
            actions.append({"action": f"SIGKILL rank {p.rank} ({p.host}, pid "
                            f"{p.pid if p.local else p.remote_pid})", "outcome": p.signal(
                                signal.SIGKILL)})
            if not p.local:  # and the local ssh client
                _signal_group(p.pid, signal.SIGKILL)
        self._wait_dead(live, KILL_WAIT_S)
        for p in self.procs:
            if p is None:
                continue
            try:
                p.popen.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                actions.append({"action": f"reap rank {p.rank} (pid {p.pid})",
                                "outcome": "still running after SIGKILL"})
        # remote ranks killed before they reported their pid (still starting): find them on
        # their hosts by this run's marker, which positively identifies them
        starting = {p.host for p in self.procs if p is not None and not p.local
                    and p.remote_pid is None}
        for f in self._find_marked(starting) if starting else []:
            r = self.hosts.run(f["host"], ["kill", "-KILL", str(f["pid"])], timeout=5)
            actions.append({"action": f"SIGKILL starting rank on {f['host']} (pid {f['pid']}, "
                            "found by the run marker)",
                            "outcome": "sent" if r.ok else f"failed: {r.describe()}"})
        for t in self.threads:
            t.join(timeout=0.5)
        self._drain(0.0)
        self._poll_exits()
        for p in self.procs:  # record exits that only teardown caused
            if p is not None and self.states[p.rank].returncode is None and p.poll() is not None:
                self.tracker.exited(p.rank, p.poll(), time.monotonic())
        return actions

    @staticmethod
    def _wait_dead(procs: List[RankProc], limit: float) -> None:
        t_end = time.monotonic() + limit
        while time.monotonic() < t_end and any(p.poll() is None for p in procs):
            time.sleep(0.01)

    def leftovers(self) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[Dict]]:
        """Processes still carrying this run's marker after teardown: ``(found, unkillable,
        actions)``; each found one gets SIGKILL (it is positively ours: our marker), and those
        still there a second later are ``unkillable`` (reboot)."""
        found, actions = self._find_marked(), []
        if not found:
            return [], [], []
        for f in found:
            if f["local"]:
                out = _kill_pid(f["pid"])
            else:
                r = self.hosts.run(f["host"], ["kill", "-KILL", str(f["pid"])], timeout=5)
                out = "sent" if r.ok else f"failed: {r.describe()}"
            actions.append({"action": f"SIGKILL leftover pid {f['pid']} on {f['host']}",
                            "outcome": out})
        time.sleep(1.0)
        again = {(f["host"], f["pid"]) for f in self._find_marked()}
        unkillable = [f for f in found if (f["host"], f["pid"]) in again]
        return found, unkillable, actions

    def remove_files(self, remote_too: bool) -> List[Dict[str, Any]]:
        """Delete this run's temp files (MLX_HOSTFILE, MLX_IBV_DEVICES copies) that a rank
        killed before it finished init left behind: locally always, on remote hosts when
        ``remote_too``. Returns an action per remote host."""
        for path in glob.glob(os.path.join(tempfile.gettempdir(),
                                           f"{FILE_PREFIX}{self.run_id}-*")):
            try:
                os.unlink(path)
            except OSError:
                pass
        actions = []
        if remote_too:
            for host in sorted({h.ssh for h, loc in zip(self.cfg.hostfile.hosts, self.local)
                                if not loc}):
                r = self.hosts.run(host, ["sh", "-c", 'rm -f "${TMPDIR:-/tmp}"/"$1"*', "sh",
                                      f"{FILE_PREFIX}{self.run_id}-"], timeout=10)
                actions.append({"action": f"remove probe temp files on {host}",
                                "outcome": "done" if r.ok else f"failed: {r.describe()}"})
        return actions

    def _find_marked(self, only_hosts: Optional[set] = None) -> List[Dict[str, Any]]:
        """Processes carrying this run's marker: locally (psutil) and on each remote host
        (``ps`` over ssh), or only on ``only_hosts`` (remote host names) when given."""
        out: List[Dict[str, Any]] = []
        if any(self.local) and only_hosts is None:
            from ..ranks import find_ranks

            for rp in find_ranks(marker=self.run_id):
                out.append({"host": "localhost", "local": True, "pid": rp.pid,
                            "status": rp.status, "rank": rp.rank,
                            "cmdline": " ".join(rp.cmdline)[:200]})
        for host in sorted({h.ssh for h, loc in zip(self.cfg.hostfile.hosts, self.local)
                            if not loc and (only_hosts is None or h.ssh in only_hosts)}):
            r = self.hosts.run(host, ["ps", "-eo", "pid=,stat=,args="], timeout=10)
            for line in r.stdout.splitlines():
                parts = line.split(None, 2)
                if len(parts) == 3 and self.run_id in parts[2] and parts[0].isdigit():
                    out.append({"host": host, "local": False, "pid": int(parts[0]),
                                "status": parts[1], "cmdline": parts[2][:200]})
        return out

    # --- all together -------------------------------------------------------------------------
    def run(self) -> LaunchOutcome:
        """Start, watch, gather evidence, tear down, check for leftovers."""
        t0 = time.monotonic()
        out = LaunchOutcome("start", self.run_id, self.states, self.plan, self.deadline,
                            None, started_at=t0)
        out.ring_hostfile = getattr(self, "ring_hostfile", None)
        try:
            err = self.start()
            if err is not None:
                out.message, out.detected_at = err, time.monotonic()
            else:
                out.kind, out.detected_at = self.watch()
                if out.kind in ("hang", "deadline", "init") and \
                        any(s.alive for s in self.states):
                    now = time.monotonic()
                    states = {p.rank: p.state() for p in self.procs if p is not None and
                              self.states[p.rank].alive}
                    out.hang = self.tracker.hang_report(now, self.cfg.hb_stale,
                                                        {k: v for k, v in states.items() if v})
                    out.stacks, out.native_stacks = self.capture_stacks()
        except KeyboardInterrupt:  # Ctrl-C or a supervisor's SIGTERM: still tear everything down
            out.kind, out.detected_at = "interrupted", time.monotonic()
            out.message = "interrupted (SIGINT/SIGTERM) before the probe finished"
        out.failure = dict(self.tracker.first_failure) if self.tracker and \
            self.tracker.first_failure else None
        out.early_exits = {s.rank: s.returncode for s in self.states if s.returncode is not None}
        out.actions = self.teardown()
        found, unkillable, acts = self.leftovers()
        out.survivors, out.unkillable = found, unkillable
        out.actions.extend(acts)
        out.actions.extend(self.remove_files(remote_too=out.kind != "ok"))
        out.unreachable = dict(self.hosts.unreachable)
        out.finished_at = time.monotonic()
        return out


def _kill_pid(pid: int) -> str:
    return send_signal(pid, signal.SIGKILL)


@dataclass
class ProbeRun:
    """The whole probe: its config, run id, per-launch outcomes (several only for ``--soak``
    relaunches after hangs), and ``preflight`` when it never launched (PreflightError data)."""

    cfg: ProbeConfig
    run_id: str
    launches: List[LaunchOutcome] = field(default_factory=list)
    preflight: Optional[Dict[str, str]] = None
    soak_hangs: List[Dict[str, Any]] = field(default_factory=list)


def base_plan(cfg: ProbeConfig) -> Dict[str, Any]:
    """The worker plan for ``cfg`` (keys documented in :class:`worker.Worker`)."""
    pairs, _ = plan_pairs(cfg.world_size, cfg.backend) if cfg.pairs else ([], [])
    return {"backend": cfg.backend, "world_size": cfg.world_size, "ops": list(cfg.ops),
            "size": cfg.size, "iters": cfg.iters, "warmup": cfg.warmup, "dtype": cfg.dtype,
            "pairs": pairs, "soak": cfg.soak, "start": {}, "hb_interval": cfg.hb_interval}


def run_probe(cfg: ProbeConfig, *, on_event: Optional[EventHook] = None,
              run_id: Optional[str] = None) -> ProbeRun:
    """Run the probe described by ``cfg`` and return its data; never leaves a rank behind.

    With ``cfg.soak``, a hang in a soak repetition is counted, the ranks are torn down and
    relaunched from the next repetition (at most :data:`MAX_SOAK_HANGS` hangs)."""
    run_id = run_id or f"md-probe-{uuid.uuid4().hex[:12]}"
    run = ProbeRun(cfg, run_id)
    names = local_names()
    local = [is_local(h, names) for h in cfg.hostfile.hosts]
    plan = base_plan(cfg)
    while True:
        try:
            ports = choose_ports(cfg.hostfile, local, cfg.port) if cfg.backend == "ring" else []
        except PreflightError as exc:
            run.preflight = {"where": exc.where, "message": str(exc)}
            return run
        marker = run_id if not run.launches else f"{run_id}.{len(run.launches)}"
        out = Launch(cfg, marker, plan, local, ports, on_event).run()
        run.launches.append(out)
        step = (out.hang or {}).get("step") or {}
        if out.kind == "interrupted":
            return run
        if not (cfg.soak and out.kind == "hang" and step.get("phase") == "soak"
                and not out.unkillable):
            return run
        run.soak_hangs.append(dict(step, launch=len(run.launches) - 1))
        if len(run.soak_hangs) >= MAX_SOAK_HANGS:
            return run
        ops = list(plan["ops"])
        op = step.get("before") or step.get("op")
        # repetition k hung (in its barrier or in the op): go on from k + 1
        nxt = int(step.get("iter", 0)) + 1
        ops = ops[ops.index(op):] if op in ops else ops
        start = {op: nxt}
        if nxt >= cfg.soak:
            ops, start = ops[1:], {}
        if not ops:
            return run
        plan = dict(plan, ops=ops, start=start, pairs=[])
