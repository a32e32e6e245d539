"""The probe launcher: starts one worker per rank the way mlx.launch would (without ssh only
when the entry's ssh name is ``127.0.0.1``, else over ssh to that name:
:func:`meshdoctor.hostfile.locality.launched_here`), watches the events under deadlines,
gathers evidence and has every rank stopped.

Not mlx.launch, whose exit status cannot be trusted (it can exit 0 when ranks fail). The
launcher returns data (:class:`~meshdoctor.probe.outcome.ProbeRun`, whose types live in
:mod:`meshdoctor.probe.outcome`); :mod:`meshdoctor.probe.report` turns it into a verdict (which
rank is at fault: :mod:`meshdoctor.probe.culprits`). Whether to relaunch after a hang
under ``--soak``, and with which plan: :mod:`meshdoctor.probe.soak`.

Deadlines: :mod:`meshdoctor.probe.config`. Ports and the address pre-flight:
:mod:`meshdoctor.probe.ports`. Rank processes: :mod:`meshdoctor.probe.procs`. Stopping them
(SIGTERM, grace, SIGKILL, leftovers by the run marker, temp files; every host at once under one
deadline): :mod:`meshdoctor.teardown`. Interrupts: :mod:`meshdoctor.interrupts`.

A rank that exits early is noticed within one poll (50 ms); the others get ``GRACE_S`` to report
their own errors. From the first sign of failure, evidence (process states, stacks) and teardown
share one budget, :data:`TEARDOWN_BUDGET_S`: remote hosts are asked all at once, one ssh call
each (state, stack request, SIGTERM, SIGKILL, leftover search, temp files). Slow is not
unreachable: a host whose ranks answered (their events arrived) and that does not confirm its
teardown in that budget is asked again, until :data:`TEARDOWN_CONFIRM_S` in all, and is then
reported as not confirmed (its ranks may remain); only a host that never answered is reported
unreachable. Neither is waited on beyond that. A host that went silent while the others were
still heard (:meth:`Launch.silent_hosts`: its link went down, its traffic is dropped) gets the
first budget only: asking again over a dead connection cannot confirm anything, and the
verdict then comes :data:`TEARDOWN_BUDGET_S` after the deadline, not
:data:`TEARDOWN_CONFIRM_S`.
Only processes this launcher started, or that carry this run's marker, are signalled; never
pid 1, this process or its parents.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor import execute, remote, teardown
from meshdoctor.facts import nvml
from meshdoctor.hostfile.locality import launched_here

# Interrupts (SIGINT, SIGTERM, SIGHUP) stop a launch only while it starts or watches the ranks;
# one that arrives during teardown, the leftover check or the report waits, so the ranks are
# always torn down and the verdict always printed.
from meshdoctor.ranks import send_signal
from meshdoctor.probe import env as envmod
from meshdoctor.probe import soak
from meshdoctor.probe.config import (
    ProbeConfig,
    collective_deadline,
    init_deadline,
    measured_deadline,
    plan_pairs,
    steps_per_rank,
)
from meshdoctor.probe.events import RankState, Tracker
from meshdoctor.probe.gpus import check_local_gpus
from meshdoctor.probe.outcome import LaunchOutcome, ProbeRun
from meshdoctor.interrupts import Interrupts
from meshdoctor.probe.ports import PreflightError, choose_ports, nccl_port
from meshdoctor.probe.procs import RankProc
from meshdoctor.probe.worker import FILE_PREFIX, MARKER_ENV, STACK_SIGNAL

READ_LINE_MAX = 1024 * 1024  # the longest line read of a rank at once (events are < 1 KB)

WORKER_PATH = Path(__file__).with_name("worker.py")

GRACE_S = 0.3  # after a first failure, for the other ranks to report theirs
STACK_WAIT_S = 1.0  # for the stack dumps of local ranks asked with SIGUSR1
TEARDOWN_BUDGET_S = 2.0  # evidence + teardown + leftovers, all hosts, from the first failure
MIN_STOP_S = 1.0  # a remote host always gets this long to stop its ranks
DONE_EXIT_S = 1.0  # a remote rank that said it finished gets this long to end before its stop
# a host that answered and has not confirmed its teardown is asked again until this long after the
# first failure (a loaded control machine can take seconds per ssh round trip)
TEARDOWN_CONFIRM_S = 8.0
POLL_S = 0.05
STATE_POLL_S = 0.5  # local ranks' process states during group formation
READERS_JOIN_S = 0.5  # after teardown, for every rank's output readers together
EXIT_GRACE_S = 0.5  # an exited rank's stdout still open (a child holds it): judged after this
# an exited ssh (no status from the waiter) whose stderr is still open: judged after this; ssh's
# stderr closes when it exits, so the wait ends at that EOF and only a loaded box's unscheduled
# reader thread waits long (5 s was too short at a load of 50 on two cores: its "Connection
# refused" was read after the verdict, and an unreachable host read as a rank that failed)
SSH_WORDS_GRACE_S = 30.0

# A remote rank runs under a waiter, a POSIX sh that reports the rank's waited status as its
# last stderr line: ssh itself exits 255 for a remote command killed by a signal (ssh(1)), and
# the signal would only be guessed. The waiter's own command line carries neither the marker
# nor the worker's arguments (they come from its environment), so the leftover search by the
# marker never takes it for a rank; it exits with its child. A status above 128 is 128 + the
# signal that killed the rank (sh(1), "Exit Status"; the rank itself exits 0 or 1).
RANK_EXIT_PREFIX = "meshdoctor-rank-exit "
PYTHON_ENV = "MESHDOCTOR_RANK_PYTHON"  # the waiter's child's interpreter
WAITER = (
    f'"${PYTHON_ENV}" -u - "${MARKER_ENV}"; s=$?; '
    f'printf \'\\n{RANK_EXIT_PREFIX}%s\\n\' "$s" >&2; exit "$s"'
)
WAITER_NAME = "meshdoctor-rank-waiter"  # the waiter's $0, what ps shows of it

EventHook = Callable[[int, Dict[str, Any], "Launch"], None]


def waited_status(line: str) -> Optional[int]:
    """The rank's status from the waiter's last stderr line (``meshdoctor-rank-exit 137``)
    as :mod:`subprocess` gives it (negative: killed by that signal), None for another line."""
    if not line.startswith(RANK_EXIT_PREFIX):
        return None
    word = line[len(RANK_EXIT_PREFIX) :].strip()
    if not word.isdigit():
        return None
    status = int(word)
    return -(status - 128) if 128 < status < 128 + 65 else status


class Launch:
    """Start, watch and tear down one set of ranks (see module doc). ``on_event(rank, event,
    launch)`` is called for every worker event in the launcher's thread (progress display,
    tests that inject faults). ``interrupts``: what may stop it early (see
    :mod:`meshdoctor.interrupts`); a fresh one, never triggered, when None."""

    def __init__(
        self,
        cfg: ProbeConfig,
        run_id: str,
        plan: Dict[str, Any],
        local: Sequence[bool],
        ports: Sequence[int],
        on_event: Optional[EventHook] = None,
        interrupts: Optional[Interrupts] = None,
    ) -> None:
        self.cfg, self.run_id, self.plan, self.local = cfg, run_id, plan, list(local)
        self.ports = list(ports)
        self.on_event = on_event
        self.interrupts = interrupts or Interrupts()
        self.q: "queue.Queue[Tuple[int, str, Optional[str]]]" = queue.Queue()
        self.procs: List[Optional[RankProc]] = []
        self.eof: Dict[Tuple[int, str], bool] = {}
        self.exit_seen: Dict[int, float] = {}
        self.threads: List[threading.Thread] = []
        self.reader_rank: Dict[threading.Thread, int] = {}  # each output reader's rank
        self._next_state_poll = 0.0  # _stopped_in_init's next reading
        self._stopped_since: Dict[int, float] = {}  # local rank -> first seen stopped
        self.waited: Dict[int, int] = {}  # remote rank -> its status, as its waiter reported it
        self.deadline = collective_deadline(cfg)
        self.warmup_max_s = 0.0  # the slowest warm-up call seen so far (its leave event's dt)
        self.steps = steps_per_rank(cfg)
        self.hosts = remote.Hosts()
        hf = cfg.hostfile
        self.states = [
            RankState(h.rank, h.ssh or "localhost", loc) for h, loc in zip(hf.hosts, self.local)
        ]
        self.tracker: Optional[Tracker] = None
        self.ring_hostfile: Optional[List[List[str]]] = None

    # --- start --------------------------------------------------------------------------------
    def _reader(self, rank: int, stream: str, pipe) -> None:
        """Queue ``rank``'s lines of ``stream`` (``out``/``err``), each at most
        :data:`READ_LINE_MAX` bytes and :data:`meshdoctor.execute.MAX_OUTPUT_BYTES` in all: a
        rank (or a remote host) that prints past that is stopped (its process group, SIGKILL)
        and its stderr says it was cut."""
        got = 0
        try:
            for raw in iter(lambda: pipe.readline(READ_LINE_MAX), b""):
                got += len(raw)
                if got > execute.MAX_OUTPUT_BYTES:
                    proc = next((p for p in self.procs if p is not None and p.rank == rank), None)
                    if proc is not None:
                        send_signal(proc.popen.pid, signal.SIGKILL, group=True)
                    self.q.put(
                        (
                            rank,
                            "err",
                            f"meshdoctor: rank {rank} printed more than "
                            f"{execute.MAX_OUTPUT_BYTES} bytes on std{stream} "
                            "(cut there and killed)\n",
                        )
                    )
                    break
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
        shared, files = envmod.backend_env(
            hf, cfg.backend, ports=self.ports, port=port, deadline_s=self.deadline
        )
        self.ring_hostfile = envmod.ring_entries(hf, self.ports) if cfg.backend == "ring" else None
        self.tracker = Tracker(self.states, time.monotonic())
        source = None
        for h, loc in zip(hf.hosts, self.local):
            env = envmod.rank_env(
                hf, h.rank, run_id=self.run_id, plan=self.plan, shared_env=shared, files=files
            )
            try:
                if loc:
                    full = dict(os.environ)
                    full.update(env)
                    p = execute.spawn([cfg.python, "-u", str(WORKER_PATH), self.run_id], env=full)
                else:
                    if source is None:
                        source = WORKER_PATH.read_bytes()
                    p = remote.popen(
                        h.ssh,
                        ["sh", "-c", WAITER, WAITER_NAME],
                        dict(env, **{PYTHON_ENV: cfg.remote_python, MARKER_ENV: self.run_id}),
                        stdin=subprocess.PIPE,
                    )
                    try:
                        p.stdin.write(source)
                        p.stdin.close()
                    except OSError:
                        pass
            except (OSError, remote.RemoteError) as exc:
                self.procs.append(None)
                return f"rank {h.rank} ({h.ssh or 'localhost'}) could not be started: {exc}. " + (
                    f"Check that {cfg.python} exists (MESHDOCTOR_PYTHON names the "
                    "interpreter of local ranks)."
                    if loc
                    else "Check that ssh is installed and the host name is right."
                )
            if loc:
                self.states[h.rank].pid = p.pid  # a remote rank's: from its ready event
            self.procs.append(RankProc(self.states[h.rank], p))
            for stream, pipe in (("out", p.stdout), ("err", p.stderr)):
                t = threading.Thread(
                    target=self._reader,
                    args=(h.rank, stream, pipe),
                    daemon=True,
                    name=f"probe-r{h.rank}-{stream}",
                )
                t.start()
                self.threads.append(t)
                self.reader_rank[t] = h.rank
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
                if ev is not None and ev.get("ev") == "leave" and ev.get("phase") == "warmup":
                    try:
                        self.warmup_max_s = max(self.warmup_max_s, float(ev.get("dt") or 0.0))
                    except (TypeError, ValueError):
                        pass
                if ev is not None and self.on_event is not None:
                    self.on_event(rank, ev, self)
            elif stream == "err":
                status = None if self.states[rank].local else waited_status(line)
                if status is not None:
                    self.waited.setdefault(rank, status)
                elif line.strip() or self.states[rank].local:
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
            rc = self._status(p)
            if rc is None:
                continue
            first = self.exit_seen.setdefault(p.rank, now)
            # record the exit once its stdout is drained (its last error event comes first)
            drained, grace = self.eof.get((p.rank, "out")), EXIT_GRACE_S
            if not self.states[p.rank].local and p.rank not in self.waited:
                # ssh itself ended, with no status from the waiter: its own words ("ssh: connect
                # to host ... refused") are the last of its stderr, which closes as ssh exits;
                # judged without them, an unreachable host would read as a rank that failed
                drained = drained and self.eof.get((p.rank, "err"))
                grace = SSH_WORDS_GRACE_S
            if drained or now - first > grace:
                self.tracker.exited(p.rank, rc, now)

    def _status(self, p: RankProc) -> Optional[int]:
        """The rank's exit status, None while it runs: a remote rank's as its waiter reported
        it (the real signal; its ssh session may still be ending), else the local child's."""
        if p.rank in self.waited:
            return self.waited[p.rank]
        return p.poll()

    def current_deadline(self) -> float:
        """The per-step deadline now: :func:`~meshdoctor.probe.config.measured_deadline`,
        grown with the slowest warm-up call seen so far."""
        return measured_deadline(self.cfg, self.warmup_max_s)

    def step_deadline(self) -> float:
        """Seconds the current step may take: the init deadline during group formation, the per-step
        deadline times the iterations in the benchmark's bare loop (one step)."""
        front = self.tracker.frontier()
        if front is None or front.get("op") == "init":
            return init_deadline(self.cfg)
        if front.get("phase") == "bench":
            return self.current_deadline() * max(1, int(self.plan.get("iters", 1)))
        return self.current_deadline()

    def run_budget(self) -> float:
        """Seconds the whole launch may take: init, every step of every rank under the current
        per-step deadline, and 10 s of slack."""
        return init_deadline(self.cfg) + self.steps * self.current_deadline() + 10.0

    def watch(self) -> Tuple[str, Optional[float]]:
        """Wait until done or a failure; returns ``(kind, detected_at)``."""
        tr = self.tracker
        t_start = time.monotonic()
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
            # a rank inside a step that long while its heartbeat goes on; a silent one (stopped,
            # or between the steps of a timed batch, which write no events) is caught by the
            # lack of progress
            stuck = any(
                s.current is not None
                and now - s.current["since"] > limit
                and (s.last_hb is None or now - s.last_hb <= self.cfg.hb_stale)
                for s in self.states
            )
            if now - tr.last_progress > limit or stuck or self._stopped_in_init(now):
                return ("init" if self._in_init() else "hang"), now
            if now > t_start + self.run_budget():
                return "deadline", now

    def _stopped_in_init(self, now: float) -> bool:
        """During start-up and group formation (whose deadline is long, and during which a
        rank holds the GIL inside MLX's init, so no rank heartbeats): whether a local rank's
        process has been stopped (SIGSTOP, a debugger) for ``cfg.hb_stale`` seconds, its state
        read every :data:`STATE_POLL_S`. Its peers would otherwise wait out their connect
        retries (the ring's, about 31 s) and blame the neighbour they could not reach."""
        if not self._in_init() or now < self._next_state_poll:
            return False
        self._next_state_poll = now + STATE_POLL_S
        for p in self.procs:
            if p is None or not p.local or not self.states[p.rank].alive:
                continue
            if p.local_state() == "stopped":
                since = self._stopped_since.setdefault(p.rank, now)
                if now - since >= self.cfg.hb_stale:
                    return True
            else:
                self._stopped_since.pop(p.rank, None)
        return False

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
    def local_evidence(
        self, t_end: float
    ) -> Tuple[Dict[int, str], Dict[int, int], List[int], Dict[int, str]]:
        """Evidence from the live local ranks, before teardown: ``(states, marks, asked,
        native_stacks)``: process states (psutil names), every live rank's stderr line count
        (where its stack dump will start), the local ranks asked for a Python stack
        (faulthandler on SIGUSR1; a stopped rank is not asked), waited for up to
        :data:`STACK_WAIT_S`, and native stacks via py-spy when installed. Remote ranks are
        asked in the teardown call itself (:meth:`stop_ranks`), one ssh call per host."""
        states: Dict[int, str] = {}
        marks: Dict[int, int] = {}
        asked: List[int] = []
        for p in self.procs:
            if p is None or not self.states[p.rank].alive:
                continue
            marks[p.rank] = self.states[p.rank].stderr_lines
            if p.local:
                st = p.local_state()
                if st:
                    states[p.rank] = st
                if st and st != "stopped" and send_signal(p.pid, STACK_SIGNAL) == "sent":
                    asked.append(p.rank)
        t_stack = min(time.monotonic() + STACK_WAIT_S, t_end)
        while asked and time.monotonic() < t_stack:
            self._drain(0.05)
            if all(self.states[r].stderr_lines > marks[r] for r in asked):
                self._drain(0.15)  # let the rest of the dump arrive
                break
        native = {}
        spy = execute.which("py-spy")
        if spy:
            for p in self.procs:
                left = t_end - time.monotonic()
                if p is not None and p.local and p.poll() is None and left > 0.5:
                    res = execute.run([spy, "dump", "--pid", str(p.pid)], timeout=min(5, left))
                    native[p.rank] = (res.stdout or res.describe())[-4000:]
        return states, marks, asked, native

    def stacks(self, marks: Dict[int, int], asked: List[int]) -> Dict[int, str]:
        """The stderr lines each asked rank wrote since ``marks``: its stack dump."""
        out = {}
        for r in asked:
            st = self.states[r]
            new = st.stderr_lines - marks[r]
            if new > 0:
                out[r] = "\n".join(list(st.stderr)[-new:])
        return out

    # --- teardown -----------------------------------------------------------------------------
    def stop_ranks(self, t_end: float, ask: Optional[str] = None) -> teardown.Report:
        """Stop every rank, on every host at once (:func:`meshdoctor.teardown.stop`: SIGTERM,
        grace, SIGKILL; leftovers by this run's marker; this run's temp files removed), with
        every remote host answering by ``t_end`` (at least :data:`MIN_STOP_S` from now); with
        ``ask`` (a signal name), remote ranks get it first in the same call (a stack dump). A
        host whose ranks answered (their events arrived) and that does not confirm in time is
        asked again until ``t_end`` minus :data:`TEARDOWN_BUDGET_S` plus
        :data:`TEARDOWN_CONFIRM_S` (``Report.unconfirmed``); one that never answered is
        unreachable (``self.hosts``); neither is waited on beyond that. Their output is read to
        the end; the exits are recorded by :meth:`record_exits`."""
        hf = self.cfg.hostfile
        for st in self.states:  # a rank that spoke: its host answered, slow is not unreachable
            if not st.local and (st.pid is not None or st.last_event is not None):
                self.hosts.mark_answered(st.host)
        # a remote rank that said it finished is ending on its own: its ssh session closes
        # with it, so give it a moment (DONE_EXIT_S) rather than a signal it no longer needs
        ending = [
            p
            for p in self.procs
            if p is not None and not p.local and self.states[p.rank].done and p.poll() is None
        ]
        if ending and ask is None:
            until = time.monotonic() + min(DONE_EXIT_S, max(0.0, t_end - time.monotonic()) / 4)
            while any(p.poll() is None for p in ending) and time.monotonic() < until:
                time.sleep(0.02)
        budget = max(MIN_STOP_S, t_end - time.monotonic())
        silent = self.silent_hosts()
        rep = teardown.stop(
            [p.target() for p in self.procs if p is not None],
            hosts=self.hosts,
            budget_s=budget,
            confirm_s=budget - TEARDOWN_BUDGET_S + TEARDOWN_CONFIRM_S,
            marker=self.run_id,
            tmp_prefix=f"{FILE_PREFIX}{self.run_id}-",
            remote_hosts=sorted({h.ssh for h, loc in zip(hf.hosts, self.local) if not loc}),
            ask=ask,
            silent=silent,
        )
        # one shared deadline for every reader, and none for the readers of a host that did
        # not confirm: its session's pipes may stay open (the ssh master holds them, its
        # connection dead), and half a second per reader added up
        lost = set(rep.unconfirmed) | set(self.hosts.unreachable)
        t_join = time.monotonic() + READERS_JOIN_S
        for t in self.threads:
            st = self.states[self.reader_rank[t]]
            if st.local or st.host not in lost:
                t.join(timeout=max(0.0, t_join - time.monotonic()))
        if self.tracker is not None:
            self._drain(0.0)
        return rep

    def silent_hosts(self) -> Dict[str, float]:
        """Remote hosts gone silent, host -> seconds since anything last arrived from its
        ranks: every rank there spoke and still runs (its ssh session has not ended), yet its
        last event
        (a heartbeat comes every ``cfg.hb_interval``) is more than ``cfg.hb_stale`` older than
        the latest line or exit of any rank elsewhere. A link down or traffic dropped silences
        one host; a loaded control machine reads every host late alike and singles none out,
        and an all-silent mesh (every rank blocked) names none."""
        if self.tracker is None:
            return {}
        heard: Dict[str, float] = {}
        running: Dict[str, bool] = {}
        spoke: Dict[str, bool] = {}
        for p in self.procs:
            if p is None:
                continue
            st = self.states[p.rank]
            seen = st.last_event if st.last_event is not None else st.started_at
            if st.exited_at is not None:
                seen = max(seen, st.exited_at)
            key = st.host if not st.local else "\0local"
            heard[key] = max(heard.get(key, seen), seen)
            running[key] = running.get(key, True) and st.alive and p.poll() is None
            spoke[key] = spoke.get(key, True) and st.last_event is not None
        out = {}
        for host, seen in heard.items():
            # silence means something only after a rank there spoke (a slow start is not it)
            if host == "\0local" or not running.get(host) or not spoke.get(host):
                continue
            others = [t for h, t in heard.items() if h != host]
            if others and max(others) - seen > self.cfg.hb_stale:
                out[host] = time.monotonic() - seen
        return out

    def starting_states(self, rep: teardown.Report) -> Dict[int, str]:
        """rank -> process state for the remote ranks that never said their pid (stopped as
        they started), from what the teardown's marker search found on their host
        (``rep.starting``), where the host has one such rank: the one state of the processes
        found there, or ``stopped`` when one of them was (the rank, or the shell starting it,
        cannot go on)."""
        found: Dict[str, Dict[int, str]] = {}
        for (host, pid), st in rep.starting.items():
            found.setdefault(host, {})[pid] = st
        out = {}
        for host, by_pid in found.items():
            unknown = [
                p.rank
                for p in self.procs
                if p is not None and not p.local and p.host == host and p.rank_pid is None
            ]
            seen = set(by_pid.values())
            if len(unknown) == 1 and (len(seen) == 1 or "stopped" in seen):
                out[unknown[0]] = "stopped" if "stopped" in seen else seen.pop()
        return out

    def record_exits(self) -> None:
        """Record the exits that only teardown caused."""
        if self.tracker is None:
            return
        self._poll_exits()
        for p in self.procs:
            if p is not None and self.states[p.rank].returncode is None:
                rc = self._status(p)
                if rc is not None:
                    self.tracker.exited(p.rank, rc, time.monotonic())

    # --- all together -------------------------------------------------------------------------
    def run(self) -> LaunchOutcome:
        """Start, watch, gather evidence, tear down, check for leftovers.

        An interrupt (``self.interrupts``) during start or watch ends the launch as
        ``interrupted``; any other exception still tears every rank down before it propagates.
        Everything after the first sign of failure (evidence, teardown, leftovers) shares one
        budget of :data:`TEARDOWN_BUDGET_S` seconds across all hosts.
        """
        gpus = self.cfg.backend == "nccl" and any(self.local)
        slow_before = nvml.violation_ns() if gpus else None  # clocks held back, ns so far
        t0 = time.monotonic()
        out = LaunchOutcome(
            "start", self.run_id, self.states, self.plan, self.deadline, None, started_at=t0
        )
        t_end: Optional[float] = None
        hung = None
        try:
            with self.interrupts.armed():
                err = self.start()
                out.ring_hostfile = self.ring_hostfile
                if err is not None:
                    out.message, out.detected_at = err, time.monotonic()
                else:
                    out.kind, out.detected_at = self.watch()
                    out.deadline_s = self.current_deadline()  # as grown by the warm-up
                    out.warmup_max_s = self.warmup_max_s
            t_end = (out.detected_at or time.monotonic()) + TEARDOWN_BUDGET_S
            if out.kind in ("hang", "deadline", "init") and any(s.alive for s in self.states):
                now = time.monotonic()
                hung = (now,) + self.local_evidence(t_end)
        except KeyboardInterrupt as exc:  # Ctrl-C, a supervisor's SIGTERM: still tear down
            out.kind, out.detected_at = "interrupted", time.monotonic()
            t_end, hung = out.detected_at + TEARDOWN_BUDGET_S, None
            how = exc.args[0] if exc.args else "SIGINT"
            out.message = f"interrupted by {how} before the probe finished"
        except BaseException:  # a bug: never leave the ranks behind, then let it be reported
            self.stop_ranks(time.monotonic() + TEARDOWN_BUDGET_S)
            raise
        out.failure = (
            dict(self.tracker.first_failure)
            if self.tracker and self.tracker.first_failure
            else None
        )
        out.early_exits = {s.rank: s.returncode for s in self.states if s.returncode is not None}
        rep = self.stop_ranks(t_end, ask=STACK_SIGNAL.name[3:] if hung else None)
        if hung:  # who waited where, as it was when the deadline passed
            now, states, marks, asked, out.native_stacks = hung
            rank_of = {
                (p.host, p.rank_pid): p.rank for p in self.procs if p is not None and not p.local
            }
            for key, st in rep.states.items():
                if key in rank_of:
                    states[rank_of[key]] = st
            for rank, st in self.starting_states(rep).items():
                states.setdefault(rank, st)
            asked = asked + [rank_of[k] for k in rep.asked if k in rank_of]
            out.hang = self.tracker.hang_report(now, self.cfg.hb_stale, states)
            out.stacks = self.stacks(marks, asked)
        self.record_exits()
        out.actions, out.survivors, out.unkillable = rep.actions, rep.found, rep.unkillable
        if gpus:  # GPU memory the local ranks held must be free again
            out.gpu_after = nvml.memory_after(
                p.pid for p in self.procs if p is not None and p.local
            )
            out.gpu_slowdown = nvml.slowdown(slow_before, nvml.violation_ns())
        out.unreachable = dict(self.hosts.unreachable)
        out.unconfirmed = dict(rep.unconfirmed)
        out.finished_at = time.monotonic()
        if out.kind == "start":  # the report tells a missing interpreter apart (MD102's words)
            out.python_missing = interpreter_missing(self.cfg.python)
        return out


def interpreter_missing(python: str) -> bool:
    """Whether ``python`` (a path, or a name looked up on ``PATH``) is not an executable file on
    this host: the local ranks' interpreter (``MESHDOCTOR_PYTHON``) cannot run."""
    if os.sep in python:
        return not os.access(python, os.X_OK)
    return shutil.which(python) is None


def base_plan(cfg: ProbeConfig) -> Dict[str, Any]:
    """The worker plan for ``cfg`` (keys documented in :class:`worker.Worker`)."""
    pairs, _ = plan_pairs(cfg.world_size, cfg.backend) if cfg.pairs else ([], [])
    return {
        "backend": cfg.backend,
        "world_size": cfg.world_size,
        "ops": list(cfg.ops),
        "size": cfg.size,
        "iters": cfg.iters,
        "warmup": cfg.warmup,
        "dtype": cfg.dtype,
        "pairs": pairs,
        "soak": cfg.soak,
        "start": {},
        "hb_interval": cfg.hb_interval,
    }


def run_probe(
    cfg: ProbeConfig,
    *,
    on_event: Optional[EventHook] = None,
    run_id: Optional[str] = None,
    interrupts: Optional[Interrupts] = None,
) -> ProbeRun:
    """Run the probe described by ``cfg`` and return its data; never leaves a rank behind.

    ``interrupts``: the caller's :class:`~meshdoctor.interrupts.Interrupts` (the CLI
    routes SIGINT, SIGTERM and SIGHUP to it); an interrupted launch ends the probe. With
    ``cfg.soak``, :mod:`meshdoctor.probe.soak` decides after each launch whether to relaunch
    and with which plan (a hang in a soak repetition is counted and the ranks start again from
    the next repetition)."""
    run_id = run_id or f"md-probe-{uuid.uuid4().hex[:12]}"
    run = ProbeRun(cfg, run_id)
    local = [launched_here(h) for h in cfg.hostfile.hosts]  # as mlx.launch: ssh unless 127.0.0.1
    plan = base_plan(cfg)
    interrupts = interrupts or Interrupts()
    while True:
        try:
            if cfg.backend == "ring":
                ports = choose_ports(cfg.hostfile, local, cfg.port)
            elif cfg.backend == "nccl":
                check_local_gpus(cfg.hostfile, local)
                ports = [nccl_port(cfg.hostfile, local, cfg.port)]
            else:
                ports = []
        except PreflightError as exc:
            run.preflight = {"where": exc.where, "message": str(exc)}
            if exc.remedy:
                run.preflight["remedy"] = exc.remedy
            return run
        marker = run_id if not run.launches else f"{run_id}.{len(run.launches)}"
        out = Launch(cfg, marker, plan, local, ports, on_event, interrupts).run()
        run.launches.append(out)
        if out.kind == "interrupted" or interrupts.pending:
            return run
        step = soak.soak_hang(cfg, out)
        if step is None:
            return run
        run.soak_hangs.append(dict(step, launch=len(run.launches) - 1))
        plan = soak.next_plan(cfg, plan, step, len(run.soak_hangs))
        if plan is None:
            return run
