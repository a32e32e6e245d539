"""The probe launcher: starts one worker per rank (locally or over ssh), watches the events under
deadlines, names the rank at fault, tears everything down and checks nothing is left.

Not mlx.launch, whose exit status cannot be trusted (mlx 0.32.4 ``_distributed_utils/launch.py`` exits 0 when ranks fail).
Contract: the probe's contract. The launcher returns data (:class:`ProbeRun`);
:mod:`meshdoctor.probe.report` turns it into a verdict.

Deadlines: :mod:`meshdoctor.probe.config`. Ports and the address pre-flight:
:mod:`meshdoctor.probe.ports`. Rank processes and signals: :mod:`meshdoctor.probe.procs`.

A rank that exits early is noticed within one poll (50 ms); the others get ``GRACE_S`` to report
their own errors, then teardown: SIGTERM to each rank's process group (SIGKILL at once to a
stopped one, where SIGTERM would stay pending), ``TERM_WAIT_S``, SIGKILL to the rest. Only
processes this launcher started are signalled, never pid 1, this process or its parents.
Afterwards :func:`meshdoctor.ranks.find_ranks` (locally) or ``ps`` over ssh (remote hosts) looks
for any process still carrying this run's marker.
"""

from __future__ import annotations

import glob
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import execute, nvml, remote
from ..hostfile import is_this_machine, local_names
# Interrupts (SIGINT, SIGTERM, SIGHUP) stop a launch only while it starts or watches the ranks;
# one that arrives during teardown, the leftover check or the report waits, so the ranks are
# always torn down and the verdict always printed.
from ..interrupts import interrupted
from ..interrupts import interruptible as _interruptible
from ..ranks import send_signal
from . import env as envmod
from .config import ProbeConfig, collective_deadline, init_deadline, plan_pairs, steps_per_rank
from .events import RankState, Tracker
from .ports import PreflightError, choose_ports, nccl_port
from .procs import RankProc, kill_pid, signal_group
from .worker import FILE_PREFIX, STACK_SIGNAL

WORKER_PATH = Path(__file__).with_name("worker.py")

GRACE_S = 0.3
TERM_WAIT_S = 0.5
KILL_WAIT_S = 3.0
STACK_WAIT_S = 1.0
POLL_S = 0.05
MAX_SOAK_HANGS = 5

EventHook = Callable[[int, Dict[str, Any], "Launch"], None]


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
    gpu_after: Optional[Dict[str, Any]] = None
    gpu_slowdown: List[Dict[str, Any]] = field(default_factory=list)
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
        self.ring_hostfile: Optional[List[List[str]]] = None

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
        # nccl: run_probe chose NCCL_PORT (ports.nccl_port) and passes it as the only port
        port = self.ports[0] if cfg.backend == "nccl" and self.ports else cfg.port
        shared, files = envmod.backend_env(hf, cfg.backend, ports=self.ports, port=port,
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
                    p = execute.spawn([cfg.python, "-u", str(WORKER_PATH), self.run_id],
                                      env=full)
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
                        + (f"Check that {cfg.python} exists (MESHDOCTOR_PYTHON names the "
                           "interpreter of local ranks)." if loc else
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
            if p.local and target and p.poll() is None:
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
                if p is not None and p.local and p.poll() is None:
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
                signal_group(p.pid, signal.SIGKILL)
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
                out = kill_pid(f["pid"])
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
        """Start, watch, gather evidence, tear down, check for leftovers.

        An interrupt (see :func:`interrupt`) during start or watch ends the launch as
        ``interrupted``; any other exception still tears every rank down before it propagates.
        """
        gpus = self.cfg.backend == "nccl" and any(self.local)
        slow_before = nvml.violation_ns() if gpus else None  # clocks held back, ns so far
        t0 = time.monotonic()
        out = LaunchOutcome("start", self.run_id, self.states, self.plan, self.deadline,
                            None, started_at=t0)
        try:
            with _interruptible():
                err = self.start()
                out.ring_hostfile = self.ring_hostfile
                if err is not None:
                    out.message, out.detected_at = err, time.monotonic()
                else:
                    out.kind, out.detected_at = self.watch()
            if out.kind in ("hang", "deadline", "init") and any(s.alive for s in self.states):
                now = time.monotonic()
                states = {p.rank: p.state() for p in self.procs if p is not None and
                          self.states[p.rank].alive}
                out.hang = self.tracker.hang_report(now, self.cfg.hb_stale,
                                                    {k: v for k, v in states.items() if v})
                out.stacks, out.native_stacks = self.capture_stacks()
        except KeyboardInterrupt as exc:  # Ctrl-C, a supervisor's SIGTERM: still tear down
            out.kind, out.detected_at = "interrupted", time.monotonic()
            how = exc.args[0] if exc.args else "SIGINT"
            out.message = f"interrupted by {how} before the probe finished"
        except BaseException:  # a bug: never leave the ranks behind, then let it be reported
            self.teardown()
            self.leftovers()
            self.remove_files(remote_too=True)
            raise
        out.failure = dict(self.tracker.first_failure) if self.tracker and \
            self.tracker.first_failure else None
        out.early_exits = {s.rank: s.returncode for s in self.states if s.returncode is not None}
        out.actions = self.teardown()
        found, unkillable, acts = self.leftovers()
        out.survivors, out.unkillable = found, unkillable
        out.actions.extend(acts)
        out.actions.extend(self.remove_files(remote_too=out.kind != "ok"))
        if gpus:  # GPU memory the local ranks held must be free again
            out.gpu_after = nvml.memory_after(p.pid for p in self.procs
                                              if p is not None and p.local)
            out.gpu_slowdown = nvml.slowdown(slow_before, nvml.violation_ns())
        out.unreachable = dict(self.hosts.unreachable)
        out.finished_at = time.monotonic()
        return out


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
    local = [is_this_machine(h, names) for h in cfg.hostfile.hosts]
    plan = base_plan(cfg)
    while True:
        try:
            if cfg.backend == "ring":
                ports = choose_ports(cfg.hostfile, local, cfg.port)
            elif cfg.backend == "nccl":
                ports = [nccl_port(cfg.hostfile, local, cfg.port)]
            else:
                ports = []
        except PreflightError as exc:
            run.preflight = {"where": exc.where, "message": str(exc)}
            return run
        marker = run_id if not run.launches else f"{run_id}.{len(run.launches)}"
        out = Launch(cfg, marker, plan, local, ports, on_event).run()
        run.launches.append(out)
        step = (out.hang or {}).get("step") or {}
        if out.kind == "interrupted" or interrupted():
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
