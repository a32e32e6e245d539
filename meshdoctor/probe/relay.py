"""The probe under another launcher (``probe --launcher srun|env``): this process is one rank's
task; rank 0's task gives the verdict.

Every task starts its rank's worker (:mod:`meshdoctor.probe.worker`) as its own child, on this
host, with the environment MLX's ring backend reads (``MLX_RANK``, ``MLX_HOSTFILE``:
:mod:`meshdoctor.probe.launched`), so a hung collective can still be stopped at its deadline and
its stack read, which a collective inside this process could not.

* Rank 0 (:func:`run_rank0`) runs :class:`RelayLaunch`, the probe launcher
  (:class:`meshdoctor.probe.launcher.Launch`) with the other ranks' lines arriving over TCP
  instead of ssh pipes: it listens at :attr:`Launched.control`, and every other task connects,
  says which rank it is and forwards its worker's stdout and stderr lines and its exit. The
  watch, the deadlines, the hang report and the verdict are the launcher's own: a rank that
  dies is noticed by its exit (or its task's connection closing), a stopped one by its
  heartbeats stopping, and is named within the deadline as with ssh. Teardown asks every task
  to stop its own worker (a stack dump first after a hang), waits for their reports as the
  launcher waits for a remote host, and never signals a process of another host itself.
* Every other rank (:func:`follow`) relays and prints its part: one line saying how its own
  rank ended, on ``stream``.

Lines from a task are capped as the launcher caps a rank's pipe
(:data:`meshdoctor.probe.launcher.READ_LINE_MAX`, :data:`meshdoctor.execute.MAX_OUTPUT_BYTES`);
a task that says a rank outside the world, or a rank already taken, is refused. Protocol: one
JSON object per line; task -> rank 0: ``{"hello": rank, "world": n}``, ``{"s": "out"|"err",
"l": line}``, ``{"s": "exit", "rc": status}``, ``{"s": "stopped", "report": {...}}``; rank 0 ->
task: ``{"stop": true, "ask": "USR1"|null}``.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from typing import Any, Dict, Optional, TextIO, Tuple

from meshdoctor import execute, remote, teardown
from meshdoctor.interrupts import Interrupts
from meshdoctor.probe import env as envmod
from meshdoctor.probe.config import (
    ProbeConfig,
    collective_deadline,
    init_deadline,
    steps_per_rank,
)
from meshdoctor.probe.events import RankState, Tracker, describe_step
from meshdoctor.probe.launched import Launched, ring_text
from meshdoctor.probe.launcher import (
    MIN_STOP_S,
    POLL_S,
    READ_LINE_MAX,
    STACK_WAIT_S,
    TEARDOWN_BUDGET_S,
    TEARDOWN_CONFIRM_S,
    WORKER_PATH,
    EventHook,
    Launch,
    base_plan,
)
from meshdoctor.probe.outcome import ProbeRun
from meshdoctor.probe.procs import RankProc
from meshdoctor.probe.worker import FILE_PREFIX

__all__ = ["RelayLaunch", "follow", "run_rank0", "worker_env"]

CONNECT_RETRY_S = 0.2
HELLO_S = 10.0  # a connection that does not say its rank within this long is dropped
LOST_RC = -signal.SIGKILL  # a task whose connection closed without its rank's exit


def _send(sock: socket.socket, lock: threading.Lock, obj: Dict[str, Any]) -> bool:
    data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    with lock:
        try:
            sock.sendall(data)
            return True
        except OSError:
            return False


def _lines(sock: socket.socket):
    """The JSON objects a peer sends, one per line, each line at most READ_LINE_MAX bytes and
    execute.MAX_OUTPUT_BYTES in all; stops at EOF, an error or a line that is not JSON."""
    got = 0
    with sock.makefile("rb") as fh:
        while True:
            try:
                raw = fh.readline(READ_LINE_MAX + 64)
            except (OSError, ValueError):
                return
            got += len(raw)
            if not raw or got > execute.MAX_OUTPUT_BYTES * 2:
                return
            try:
                obj = json.loads(raw)
            except ValueError:
                return
            if isinstance(obj, dict):
                yield obj


def worker_env(cfg: ProbeConfig, launched: Launched, run_id: str, plan: Dict[str, Any]):
    """This rank's worker environment: ours plus mlx.launch's per-rank variables
    (:func:`meshdoctor.probe.env.rank_env`), the ring's ``MLX_HOSTFILE`` written by the worker
    (srun) or the launcher's own file inherited (env)."""
    files = {} if launched.ring_file else {"MLX_HOSTFILE": ring_text(launched)}
    env = dict(os.environ)
    env.update(
        envmod.rank_env(
            cfg.hostfile, launched.rank, run_id=run_id, plan=plan, shared_env={}, files=files
        )
    )
    return env


def spawn_worker(cfg: ProbeConfig, launched: Launched, run_id: str, plan: Dict[str, Any]):
    """Start this rank's worker (its own session; stdout and stderr piped)."""
    return execute.spawn(
        [cfg.python, "-u", str(WORKER_PATH), run_id],
        env=worker_env(cfg, launched, run_id, plan),
    )


# --- rank 0 -----------------------------------------------------------------------------------
class RelayedRank:
    """Another task's rank as rank 0 sees it: what its task said (exit status, stop report).
    Stands where :class:`meshdoctor.probe.procs.RankProc` stands for a started rank."""

    def __init__(self, state: RankState) -> None:
        self.state = state
        self.rank, self.host, self.local = state.rank, state.host, False
        self.pid = None
        self.popen = None
        self.rc: Optional[int] = None
        self.report: Optional[Dict[str, Any]] = None
        self.sock: Optional[socket.socket] = None
        self.lock = threading.Lock()
        self.closed = threading.Event()

    @property
    def rank_pid(self) -> Optional[int]:
        """The rank's pid on its host, from its ready event."""
        return self.state.pid

    def poll(self) -> Optional[int]:
        """The rank's exit status as its task said it, None while it runs."""
        return self.rc

    def local_state(self) -> None:
        """Not on this host: its task reads it."""
        return None

    def send(self, obj: Dict[str, Any]) -> bool:
        """Send one message to its task; False when it is not connected."""
        return self.sock is not None and _send(self.sock, self.lock, obj)


class RelayLaunch(Launch):
    """The launcher of rank 0 under another launcher (see module doc)."""

    def __init__(
        self,
        cfg: ProbeConfig,
        launched: Launched,
        run_id: str,
        plan: Dict[str, Any],
        on_event: Optional[EventHook] = None,
        interrupts: Optional[Interrupts] = None,
    ) -> None:
        local = [r == launched.rank for r in range(launched.world_size)]
        super().__init__(cfg, run_id, plan, local, [], on_event, interrupts)
        self.launched = launched
        self.peers: Dict[int, RelayedRank] = {}
        self.server: Optional[socket.socket] = None

    def start(self) -> Optional[str]:
        """Listen for the other tasks, then start rank 0's worker."""
        self.tracker = Tracker(self.states, time.monotonic())
        self.ring_hostfile = [list(r) for r in self.launched.ring]
        ip, port = self.launched.control
        try:
            self.server = socket.create_server(
                (ip, port), family=socket.AF_INET6 if ":" in ip else socket.AF_INET
            )
        except OSError as exc:
            self.procs.append(None)
            return (
                f"rank 0 could not listen on {ip}:{port} for the other ranks' reports: {exc}; "
                "pass another --port (the ring uses the ports from it, this one follows them)"
            )
        self.server.settimeout(POLL_S * 4)
        for st in self.states:
            if not st.local:
                self.peers[st.rank] = RelayedRank(st)
                self.procs.append(self.peers[st.rank])
        t = threading.Thread(target=self._accept, daemon=True, name="probe-relay-accept")
        t.start()
        self.threads.append(t)
        try:
            p = spawn_worker(self.cfg, self.launched, self.run_id, self.plan)
        except OSError as exc:
            self.procs.append(None)
            return f"rank 0 could not be started: {exc}"
        me = self.states[self.launched.rank]
        me.pid = p.pid
        self.procs.append(RankProc(me, p))
        for stream, pipe in (("out", p.stdout), ("err", p.stderr)):
            t = threading.Thread(
                target=self._reader, args=(me.rank, stream, pipe), daemon=True, name="probe-r0"
            )
            t.start()
            self.threads.append(t)
        return None

    def _accept(self) -> None:
        server = self.server
        while server is not None and server.fileno() >= 0:
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        """One task's connection: its hello, then its rank's lines until its exit or EOF."""
        conn.settimeout(HELLO_S)
        peer: Optional[RelayedRank] = None
        try:
            for obj in _lines(conn):
                if peer is None:
                    rank, world = obj.get("hello"), obj.get("world")
                    peer = self.peers.get(rank) if isinstance(rank, int) else None
                    if peer is None or world != self.launched.world_size or peer.sock:
                        return  # not a rank of this run, or one that already spoke
                    conn.settimeout(None)
                    peer.sock = conn
                    continue
                kind = obj.get("s")
                if kind in ("out", "err") and isinstance(obj.get("l"), str):
                    self.q.put((peer.rank, kind, obj["l"]))
                elif kind == "exit" and peer.rc is None:
                    peer.rc = int(obj.get("rc", LOST_RC))
                    # one connection carries both streams in order: both end with the exit
                    self.q.put((peer.rank, "eof-out", None))
                    self.q.put((peer.rank, "eof-err", None))
                elif kind == "stopped":
                    peer.report = obj.get("report") or {}
        except (OSError, ValueError, TypeError):
            pass
        finally:
            if peer is not None and peer.sock is conn:
                if peer.rc is None:
                    self.q.put(
                        (
                            peer.rank,
                            "err",
                            f"meshdoctor: the task of rank {peer.rank} ({peer.host}) went away "
                            "without its rank's exit (its connection to rank 0 closed)\n",
                        )
                    )
                    peer.rc = LOST_RC
                    self.q.put((peer.rank, "eof-out", None))
                    self.q.put((peer.rank, "eof-err", None))
                peer.closed.set()
            try:
                conn.close()
            except OSError:
                pass

    def stop_ranks(self, t_end: float, ask: Optional[str] = None) -> teardown.Report:
        """Ask every task to stop its worker (``ask`` first: a stack dump), stop rank 0's, and
        wait for the tasks' reports until the launcher's confirm deadline (see
        :meth:`Launch.stop_ranks`)."""
        budget = max(MIN_STOP_S, t_end - time.monotonic())
        confirm_by = time.monotonic() + budget - TEARDOWN_BUDGET_S + TEARDOWN_CONFIRM_S
        for peer in self.peers.values():
            peer.send({"stop": True, "ask": ask})
        own = [p.target() for p in self.procs if isinstance(p, RankProc)]
        rep = teardown.stop(
            own,
            hosts=self.hosts,
            budget_s=budget,
            marker=self.run_id,
            tmp_prefix=f"{FILE_PREFIX}{self.run_id}-",
        )
        while time.monotonic() < confirm_by and any(
            p.sock is not None and p.report is None and not p.closed.is_set()
            for p in self.peers.values()
        ):
            self._drain(POLL_S)
        for peer in self.peers.values():
            self._merge(rep, peer, within=budget)
        if self.server is not None:
            self.server.close()
            self.server = None
        for t in self.threads:
            t.join(timeout=0.5)
        self._drain(0.0)
        return rep

    def _merge(self, rep: teardown.Report, peer: RelayedRank, within: float) -> None:
        """A task's stop report into rank 0's (its actions, leftovers, state, stack request)."""
        got = peer.report
        if got is None:
            if peer.sock is not None and not peer.closed.is_set():
                rep.unconfirmed[peer.host] = {
                    "within_s": round(within, 1),
                    "why": f"the task of rank {peer.rank} did not confirm its teardown",
                }
            return
        for a in got.get("actions") or []:
            if isinstance(a, dict):
                rep.actions.append({k: str(v) for k, v in a.items()})
        for key in ("found", "unkillable"):
            for item in got.get(key) or []:
                if isinstance(item, dict):
                    getattr(rep, key).append(dict(item, host=peer.host, local=False))
        pid = peer.rank_pid
        if pid is not None and isinstance(got.get("state"), str):
            rep.states[(peer.host, pid)] = got["state"]
        if pid is not None and got.get("asked"):
            rep.asked.append((peer.host, pid))


def run_rank0(
    cfg: ProbeConfig,
    launched: Launched,
    *,
    on_event: Optional[EventHook] = None,
    interrupts: Optional[Interrupts] = None,
    run_id: Optional[str] = None,
) -> ProbeRun:
    """Rank 0's probe under the launcher: one launch (a hang under ``--soak`` ends the run:
    the other tasks cannot be started again from here); the data for
    :func:`meshdoctor.probe.report.build`."""
    run_id = run_id or f"md-probe-{os.urandom(6).hex()}"
    run = ProbeRun(cfg, run_id)
    out = RelayLaunch(cfg, launched, run_id, base_plan(cfg), on_event, interrupts).run()
    run.launches.append(out)
    return run


# --- the other ranks ---------------------------------------------------------------------------
def _connect(addr: Tuple[str, int], until: float) -> Tuple[Optional[socket.socket], str]:
    """A connection to rank 0, tried every :data:`CONNECT_RETRY_S` until ``until`` (rank 0's
    task may start later than this one); ``(None, why)`` when it never answered."""
    while True:
        try:
            sock = socket.create_connection(addr, timeout=5)
            sock.settimeout(None)  # rank 0 may stay silent for the whole run
            return sock, ""
        except OSError as exc:
            why = str(exc)
        if time.monotonic() + CONNECT_RETRY_S > until:
            return None, why
        time.sleep(CONNECT_RETRY_S)


class _Task:
    """This task's side: its worker, the lines to relay, the connection to rank 0."""

    def __init__(self, sock: socket.socket, p: subprocess.Popen, me: RankState, tracker, run_id):
        self.sock, self.p, self.me, self.tracker, self.run_id = sock, p, me, tracker, run_id
        self.lock = threading.Lock()
        self.q: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self.eof: Dict[str, bool] = {}
        self.exit_sent = False
        self.exit_seen: Optional[float] = None

    def send(self, obj: Dict[str, Any]) -> bool:
        return _send(self.sock, self.lock, obj)

    def start_threads(self) -> None:
        def pump(name: str, pipe) -> None:
            try:
                for raw in iter(lambda: pipe.readline(READ_LINE_MAX), b""):
                    self.q.put((name, raw.decode("utf-8", "replace")))
            except (OSError, ValueError):
                pass
            self.q.put(("eof-" + name, None))

        def commands() -> None:
            for obj in _lines(self.sock):
                self.q.put(("cmd", obj))
            self.q.put(("gone", None))

        for target, args in (
            (pump, ("out", self.p.stdout)),
            (pump, ("err", self.p.stderr)),
            (commands, ()),
        ):
            threading.Thread(target=target, args=args, daemon=True, name="probe-task").start()

    def step(self, timeout: float) -> Tuple[str, Any]:
        """Relay what arrived within ``timeout``; returns it (``("", None)`` for nothing)."""
        try:
            kind, val = self.q.get(timeout=timeout)
        except queue.Empty:
            kind, val = "", None
        if kind in ("out", "err"):
            if kind == "out":
                self.tracker.stdout_line(self.me.rank, val, time.monotonic())
            else:
                self.tracker.stderr_line(self.me.rank, val)
            self.send({"s": kind, "l": val})
        elif kind.startswith("eof-"):
            self.eof[kind[4:]] = True
        self.exited()
        return kind, val

    def exited(self) -> None:
        """Tell rank 0 the worker's exit once its output is relayed (or 0.5 s after it)."""
        if self.exit_sent or self.p.poll() is None:
            return
        now = time.monotonic()
        self.exit_seen = self.exit_seen or now
        if (self.eof.get("out") and self.eof.get("err")) or now - self.exit_seen > 0.5:
            self.tracker.exited(self.me.rank, self.p.returncode, now)
            self.exit_sent = self.send({"s": "exit", "rc": self.p.returncode})

    def stop(self, ask: Optional[str]) -> None:
        """Rank 0 asked for the teardown: with ``ask`` (a signal name) a stack dump first,
        relayed as stderr lines; then stop the worker and report."""
        proc = RankProc(self.me, self.p)
        report: Dict[str, Any] = {"asked": False}
        state = proc.local_state()
        if state:
            report["state"] = state
        sig = getattr(signal, f"SIG{ask}", None) if ask else None
        if sig is not None and state not in (None, "stopped", "zombie"):
            try:
                os.kill(self.p.pid, sig)
                report["asked"] = True
            except OSError:
                pass
            mark, until = self.me.stderr_lines, time.monotonic() + STACK_WAIT_S
            while time.monotonic() < until:
                self.step(0.05)
                if self.me.stderr_lines > mark:
                    until = min(until, time.monotonic() + 0.15)  # the rest of the dump
        rep = teardown.stop(
            [proc.target()],
            hosts=remote.Hosts(),
            budget_s=MIN_STOP_S,
            marker=self.run_id,
            tmp_prefix=f"{FILE_PREFIX}{self.run_id}-",
        )
        until = time.monotonic() + 0.5
        while not (self.eof.get("out") and self.eof.get("err")) and time.monotonic() < until:
            self.step(0.05)
        self.exited()
        if not self.exit_sent and self.p.poll() is not None:
            self.exit_sent = self.send({"s": "exit", "rc": self.p.returncode})
        report.update(actions=rep.actions, found=rep.found, unkillable=rep.unkillable)
        self.send({"s": "stopped", "report": report})


def follow(
    cfg: ProbeConfig,
    launched: Launched,
    *,
    stream: TextIO,
    quiet: bool = False,
    interrupts: Optional[Interrupts] = None,
    run_id: Optional[str] = None,
) -> int:
    """Run this task's rank (not rank 0) and relay it to rank 0; print its part on ``stream``
    (with ``quiet``, only when it did not finish).
    Returns the task's exit status: 0 its rank finished, 1 it failed or was stopped, 3 rank 0
    could not be reached or went away first."""
    run_id = run_id or f"md-probe-{os.urandom(6).hex()}"
    interrupts = interrupts or Interrupts()
    rank = launched.rank
    states = [RankState(r, h.ssh, r == rank) for r, h in enumerate(cfg.hostfile.hosts)]
    me = states[rank]
    budget = init_deadline(cfg) + steps_per_rank(cfg) * collective_deadline(cfg) + 10.0
    t_end = time.monotonic() + budget + TEARDOWN_CONFIRM_S
    sock, why = _connect(launched.control, time.monotonic() + init_deadline(cfg))
    if sock is None:
        _part(stream, launched, f"could not reach rank 0 at {_addr(launched.control)}: {why}")
        return 3
    _send(sock, threading.Lock(), {"hello": rank, "world": launched.world_size})
    try:
        p = spawn_worker(cfg, launched, run_id, base_plan(cfg))
    except OSError as exc:
        sock.close()
        _part(stream, launched, f"could not start its rank: {exc}")
        return 1
    me.pid = p.pid
    task = _Task(sock, p, me, Tracker(states, time.monotonic()), run_id)
    task.start_threads()
    how = ""
    try:
        with interrupts.armed():
            while not how:
                kind, val = task.step(POLL_S)
                if kind == "gone":
                    how = "rank 0 went away before the end"
                elif kind == "cmd" and val.get("stop"):
                    task.stop(val.get("ask") if isinstance(val.get("ask"), str) else None)
                    how = "stopped by rank 0"
                elif time.monotonic() > t_end:
                    how = "rank 0 never asked it to stop (its deadline passed)"
    except KeyboardInterrupt as exc:
        how = f"interrupted by {exc.args[0] if exc.args else 'SIGINT'}"
    finally:
        if p.poll() is None:
            task.stop(None)
        sock.close()
    ok = me.done and p.returncode == 0
    if not (quiet and ok):
        _part(stream, launched, _rank_words(me, how))
    if ok:
        return 0
    return 3 if how.startswith("rank 0") else 1


def _addr(addr: Tuple[str, int]) -> str:
    ip, port = addr
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def _rank_words(st: RankState, how: str) -> str:
    """How this task's rank ended, in a few words."""
    if st.done:
        ops = sorted({r.get("op") for r in st.results if r.get("op") and not r.get("skipped")})
        return f"done ({len(ops)} op(s) measured: {', '.join(ops)}); rank 0 gives the verdict"
    if st.errors:
        e = st.errors[-1]
        return (
            f"failed in {e.get('where')}: {e.get('type')}: {str(e.get('message'))[:200]}; "
            "rank 0 gives the verdict"
        )
    step = describe_step(st.current or st.last_step)
    if st.returncode is not None and st.returncode < 0:
        return f"ended by signal {-st.returncode} at {step} ({how}); rank 0 gives the verdict"
    return f"{how or 'ended'} at {step}; rank 0 gives the verdict"


def _part(stream: TextIO, launched: Launched, words: str) -> None:
    from meshdoctor.text import one_line

    try:
        stream.write(
            one_line(
                f"meshdoctor probe: rank {launched.rank} of {launched.world_size} "
                f"({launched.host}): {words}"
            )
            + "\n"
        )
        stream.flush()
    except (OSError, ValueError):
        pass
