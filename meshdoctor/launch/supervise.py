"""Run the user's job through the real mlx.launch and watch it to the end.

mlx.launch runs in a session of its own (:func:`meshdoctor.execute.spawn`), so a Ctrl-C at the
terminal reaches meshdoctor alone, which forwards it to mlx.launch's whole process group (what
the terminal would have done without meshdoctor), waits :data:`INTERRUPT_GRACE_S`, then stops
what is left. Its environment carries this run's marker (``MESHDOCTOR_PROBE_ID``,
:data:`meshdoctor.ranks.PROBE_MARKER_ENV`), which every rank and anything a rank starts
inherits: the ranks are identified as mlx.launch's children carrying it
(:func:`meshdoctor.ranks.identify`), and leftovers are found by it after a teardown. Nothing
else is ever signalled.

When a rank has failed (mlx.launch printed its status line) and mlx.launch has not ended
:data:`SURVIVOR_GRACE_S` later (survivors spinning in native code ignore mlx.launch's SIGTERM
and it waits for them forever: MLX #3910, #4278), the survivors and mlx.launch are stopped
(:func:`meshdoctor.teardown.stop`: SIGTERM, grace, SIGKILL) and named. With ``hang_after``:
when no output came and no rank ended for that long, every local rank's stacks are captured
(:mod:`meshdoctor.triage.stacks`) before the same teardown. A remote rank is stopped through its
ssh client (``ssh -tt``: the remote session ends with it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from meshdoctor import execute
from meshdoctor.launch.outcome import (
    FINISHED,
    HANG,
    INTERRUPTED,
    NOT_STARTED,
    SURVIVORS,
    JobOutcome,
    RankStatus,
)
from meshdoctor.launch.tee import Tee
from meshdoctor.mlx import status_lines
from meshdoctor.mlx.launch_rules import runs_without_ssh
from meshdoctor.ranks import PROBE_MARKER_ENV, identify, launcher_rank, send_signal
from meshdoctor.receipts import open_stream
from meshdoctor.ranks import children as ranks_children
from meshdoctor.text import one_line

SURVIVOR_GRACE_S = 1.0  # a rank failed -> mlx.launch still running this long -> stop the rest
INTERRUPT_GRACE_S = 1.0  # SIGINT forwarded -> mlx.launch still running this long -> stop it
TEARDOWN_BUDGET_S = 5.0  # the teardown of every process of the job (teardown.stop)
POLL_S = 0.05
DISCOVER_S = 0.2  # how often the ranks not yet seen are looked for
DRAIN_S = 2.0  # after mlx.launch ended: its output read to the end for at most this long
MARKER_PREFIX = "launch-"


@dataclass
class JobSpec:
    """What to run: ``argv`` (mlx.launch's command line, :func:`meshdoctor.launch.locate.argv`),
    ``hosts`` (each rank's hostfile ssh name, in rank order), ``env`` (mlx.launch's environment;
    None: this process's), ``hang_after`` (seconds, None: off), ``log_path`` (``--log``: the
    whole output; None: none), ``grace_s`` (:data:`SURVIVOR_GRACE_S`), ``command`` (the user's
    command as each rank runs it: a remote rank's stack is the one of a process running it)."""

    argv: List[str]
    hosts: List[str]
    env: Optional[Dict[str, str]] = None
    hang_after: Optional[float] = None
    log_path: Optional[str] = None
    grace_s: float = SURVIVOR_GRACE_S
    command: Optional[List[str]] = None


Say = Callable[[str], None]


def say_stderr(message: str) -> None:
    """One line of meshdoctor's own on stderr, ``meshdoctor: `` first (the job's output stays
    the job's), text from outside in it made visible and kept on the line
    (:func:`meshdoctor.text.one_line`)."""
    try:
        os.write(2, f"meshdoctor: {one_line(message)}\n".encode("utf-8", "replace"))
    except OSError:
        pass


class Job:
    """One supervised run of mlx.launch (module doc); :meth:`run` does all of it."""

    def __init__(self, spec: JobSpec, *, interrupts=None, say: Say = say_stderr) -> None:
        self.spec, self.interrupts, self.say = spec, interrupts, say
        self.marker = MARKER_PREFIX + uuid.uuid4().hex[:12]
        self.ranks = [RankStatus(r, h) for r, h in enumerate(spec.hosts)]
        self.pids: Dict[int, int] = {}  # rank -> local pid (the rank itself, or its ssh client)
        self.popen: Optional[subprocess.Popen] = None
        self.tee: Optional[Tee] = None
        self.t0 = time.monotonic()
        self.t_teardown: Optional[float] = None
        # when meshdoctor began ending the job: the forwarded interrupt, else the teardown; a
        # rank's status line from then on is a consequence of it, never the first failure
        self.t_stopping: Optional[float] = None

    # --- start ---------------------------------------------------------------------------------
    def _env(self) -> Dict[str, str]:
        env = dict(os.environ if self.spec.env is None else self.spec.env)
        env[PROBE_MARKER_ENV] = self.marker
        if os.isatty(1) and "COLUMNS" not in env:  # as mlx.launch does on a terminal
            import shutil

            cols, lines = shutil.get_terminal_size((0, 0))
            if cols > 0:
                env["COLUMNS"], env["LINES"] = str(cols), str(lines)
        return env

    def _start(self, log) -> Optional[str]:
        try:
            self.popen = execute.spawn(self.spec.argv, env=self._env(), stdin=None)
        except OSError as exc:
            return f"could not start mlx.launch ({self.spec.argv[0]}): {exc.strerror or exc}"
        self.tee = Tee(log)
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self.tee.start(self.popen.stdout, 1, status=False)
        self.tee.start(self.popen.stderr, 2, status=True)
        return None

    # --- watch ---------------------------------------------------------------------------------
    def _discover(self) -> None:
        """Record the pid of every rank not seen yet: mlx.launch's children carrying the
        marker, the rank from ``MLX_RANK`` or from mlx.launch's own wrapper script."""
        if self.popen is None or len(self.pids) == len(self.ranks):
            return
        try:
            children = ranks_children(self.popen.pid)
        except Exception:
            return
        known = set(self.pids.values())
        for child in children:
            if child.pid in known:
                continue
            rp = identify(child)
            if rp is None or rp.marker != self.marker:
                continue
            rank = rp.rank if rp.rank is not None else launcher_rank(rp.cmdline)
            if rank is None or not rank.isdigit() or int(rank) >= len(self.ranks):
                continue
            self.pids.setdefault(int(rank), child.pid)
            self.ranks[int(rank)].pid = self.pids[int(rank)]

    def _first_failure(self) -> Optional[float]:
        """When the first rank failed (monotonic), from mlx.launch's status lines before
        meshdoctor began ending the job (:attr:`t_stopping`); None: none did."""
        assert self.tee is not None
        for t, st in list(self.tee.statuses):
            if self.t_stopping is not None and t >= self.t_stopping:
                break
            if st.kind == status_lines.KILLED or (st.kind == status_lines.EXITED and st.code):
                return t
        return None

    def _last_activity(self) -> float:
        assert self.tee is not None
        ended = [t for t, _ in list(self.tee.statuses)]
        return max([self.t0, self.tee.last_output] + ended)

    def _watch(self) -> str:
        """Until mlx.launch ends, or survivors, a hang: the kind of end (outcome kinds)."""
        assert self.popen is not None
        next_look = 0.0
        while True:
            now = time.monotonic()
            if now >= next_look:
                self._discover()
                next_look = now + DISCOVER_S
            if self.popen.poll() is not None:
                return FINISHED
            t_fail = self._first_failure()
            if t_fail is not None and now >= t_fail + self.spec.grace_s:
                return SURVIVORS
            hang = self.spec.hang_after
            if hang is not None and t_fail is None and now - self._last_activity() >= hang:
                return HANG
            time.sleep(POLL_S)

    # --- stop ----------------------------------------------------------------------------------
    def _alive(self) -> List[int]:
        """The ranks whose local process (the rank, or its ssh client) still runs."""
        from meshdoctor.proctable import psutil

        out = []
        for r, pid in sorted(self.pids.items()):
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    out.append(r)
            except psutil.Error:
                pass
        return out

    def _stop(self, out: JobOutcome) -> None:
        """Stop every process of the job that still runs (module doc) and record it."""
        from meshdoctor import remote, teardown

        assert self.popen is not None
        self.t_teardown = time.monotonic()
        if self.t_stopping is None:
            self.t_stopping = self.t_teardown
        out.times["teardown"] = self.t_teardown - self.t0
        out.survivors = self._alive()
        targets = [
            teardown.Target("localhost", self.pids[r], f"rank {r}", True) for r in out.survivors
        ]
        targets.append(teardown.Target("localhost", self.popen.pid, "mlx.launch", True, self.popen))
        rep = teardown.stop(
            targets, hosts=remote.Hosts(), budget_s=TEARDOWN_BUDGET_S, marker=self.marker
        )
        out.teardown = list(rep.actions)
        out.leftovers = list(rep.found)

    def _forward_interrupt(self, signame: str) -> None:
        """Ctrl-C (or the signal meshdoctor got) to mlx.launch's process group, as a terminal
        would send it; wait up to :data:`INTERRUPT_GRACE_S` for it to end."""
        assert self.popen is not None
        sig = getattr(signal, signame, signal.SIGINT)
        send_signal(self.popen.pid, sig, group=True)
        t_end = time.monotonic() + INTERRUPT_GRACE_S
        while self.popen.poll() is None and time.monotonic() < t_end:
            time.sleep(POLL_S)

    # --- all together --------------------------------------------------------------------------
    def run(self) -> JobOutcome:
        """Start mlx.launch, pass its output through, watch it, stop what must be stopped,
        and say how the job ended (:class:`~meshdoctor.launch.outcome.JobOutcome`). An
        interrupt (``self.interrupts``) is forwarded; any other exception still stops the job
        before it propagates."""
        out = JobOutcome(NOT_STARTED, self.ranks, argv=list(self.spec.argv))
        out.log = self.spec.log_path
        log = None
        if self.spec.log_path:
            try:
                log = os.fdopen(open_stream(self.spec.log_path), "wb")
            except OSError as exc:
                out.log_error = exc.strerror or str(exc)
                self.say(f"cannot write --log {self.spec.log_path}: {out.log_error}")
        try:
            err = self._start(log)
            if err is not None:
                out.message = err
                return out
            try:
                if self.interrupts is not None:
                    with self.interrupts.armed():
                        out.kind = self._watch()
                else:
                    out.kind = self._watch()
            except KeyboardInterrupt as exc:
                out.kind, out.signal = INTERRUPTED, (exc.args[0] if exc.args else "SIGINT")
                self.t_stopping = time.monotonic()
                out.times["interrupted"] = self.t_stopping - self.t0
                self.say(f"{out.signal}: forwarded to mlx.launch; stopping the job")
                self._forward_interrupt(out.signal)
            self._end(out)
            return out
        except BaseException:
            if self.popen is not None and self.popen.poll() is None:
                self._stop(out)
            raise
        finally:
            if self.tee is not None:
                self.tee.join(DRAIN_S)
                out.output_bytes = self.tee.total
                out.log_error = out.log_error or self.tee.log_error
                if self.tee.pass_error:
                    self.say(f"{self.tee.pass_error}; the job was still read to its end")
            if log is not None:
                log.close()

    def _end(self, out: JobOutcome) -> None:
        assert self.popen is not None and self.tee is not None
        t_fail = self._first_failure()
        if t_fail is not None:
            out.times["first_failure"] = t_fail - self.t0
        if out.kind == HANG:
            self._hang(out)
        if out.kind == SURVIVORS:
            self._discover()
            alive = self._alive()
            if alive:
                names = ", ".join(f"rank {r}" for r in alive)
                self.say(
                    f"{names} still running {self.spec.grace_s:g} s after a rank failed: "
                    "stopping them (SIGTERM, then SIGKILL)"
                )
        if self.popen.poll() is None:
            self._stop(out)
        else:
            out.launcher_rc = self.popen.returncode if self.t_teardown is None else None
            if out.kind != FINISHED:  # interrupted, and it ended on its own: look for leftovers
                self._stop(out)
        self.tee.join(DRAIN_S)
        out.times["ended"] = time.monotonic() - self.t0
        self._statuses(out)

    def _hang(self, out: JobOutcome) -> None:
        from meshdoctor.triage import stacks

        hang = self.spec.hang_after or 0.0
        self._discover()
        local = {r: p for r, p in self.pids.items() if runs_without_ssh(self.ranks[r].host)}
        got = stacks.capture(local)
        out.stacks = [dict(s.to_dict(), host=self.ranks[s.rank].host) for s in got]
        stopped = []
        for s in got:
            if s.state == "stopped":
                self.ranks[s.rank].stopped = True
                stopped.append(s.rank)
        out.message = f"no output and no rank ended for {hang:g} s"
        if stopped:
            out.message += ": " + ", ".join(f"rank {r}" for r in stopped) + " stopped (SIGSTOP)"
        self.say(out.message + "; each rank's stack:")
        for s in got:
            self.say(f"  rank {s.rank} (pid {s.pid}): {one_line(s.summary)}")
        for s in self._remote_stacks(set(local)):
            out.stacks.append(s)
            self.say(
                f"  rank {s['rank']} ({one_line(s['host'])}, pid {s['pid']}): "
                f"{one_line(s.get('summary') or '')}"
            )
            if s.get("state") == "stopped" and s["rank"] not in stopped:
                self.ranks[s["rank"]].stopped = True
                stopped.append(s["rank"])
                out.message += f"; rank {s['rank']} stopped (SIGSTOP)"
        reading = stacks.order_reading(out.stacks)
        if reading is not None:
            out.order = reading.to_dict()
            self.say(f"  {one_line(reading.summary)}")
            if reading.mismatch:
                out.message += "; " + reading.summary
        missing = sorted(set(range(len(self.ranks))) - {s["rank"] for s in out.stacks})
        if missing:
            self.say(
                "  no stack for "
                + ", ".join(f"rank {r}" for r in missing)
                + " (not seen, or its host did not answer before the ranks were stopped)"
            )

    def _remote_stacks(self, local: set) -> List[Dict[str, Any]]:
        """The stacks of the ranks on hosts mlx.launch reaches with ssh: ``meshdoctor triage
        --running --json`` on each of them at once (:func:`meshdoctor.fanout.run_meshdoctor`),
        keeping the ranks this job put there; each with its ``host``."""
        on: Dict[str, List[int]] = {}
        for r in self.ranks:
            if r.rank not in local and not runs_without_ssh(r.host):
                on.setdefault(r.host, []).append(r.rank)
        if not on:
            return []
        from meshdoctor.fanout import run_meshdoctor
        from meshdoctor.triage import stacks

        replies = run_meshdoctor(
            list(on), ["triage", "--running", "--json"], timeout=2 * stacks.TOOL_S + 20.0
        )
        got: List[Dict[str, Any]] = []
        for host, rep in replies.items():
            running = ((rep.doc or {}).get("triage") or {}).get("running") or {}
            for found in running.values():
                for s in found:
                    if self.spec.command and s.get("cmdline") != list(self.spec.command):
                        continue  # another job's rank on that host
                    if s.get("rank") in on[host] and s["rank"] not in {g["rank"] for g in got}:
                        got.append(dict(s, host=host))
        return sorted(got, key=lambda s: s["rank"])

    def _statuses(self, out: JobOutcome) -> None:
        """Each rank's status from mlx.launch's lines (first line per rank wins), the first
        failing rank, and the ranks that never reported."""
        assert self.tee is not None
        seen = set()
        for t, st in list(self.tee.statuses):
            if st.rank >= len(self.ranks) or st.rank in seen:
                continue
            seen.add(st.rank)
            r = self.ranks[st.rank]
            r.status, r.code = st.kind, st.code
            r.after_teardown = self.t_stopping is not None and t >= self.t_stopping
            if (
                out.first_failed is None
                and st.kind == status_lines.EXITED
                and st.code
                and not r.after_teardown
            ):
                out.first_failed = st.rank
        for r in self.ranks:
            if r.rank in seen:
                continue
            if out.kind == FINISHED and out.launcher_rc == 0:
                r.status, r.code = "completed", 0
            elif r.rank in out.survivors:
                r.status = "torn-down"


def run_job(spec: JobSpec, *, interrupts=None, say: Say = say_stderr) -> Tuple[JobOutcome, bytes]:
    """Run ``spec`` (:class:`Job`); returns its outcome and the bounded copy of its output
    (:data:`meshdoctor.launch.tee.COPY_BYTES`) for triage."""
    job = Job(spec, interrupts=interrupts, say=say)
    out = job.run()
    return out, (job.tee.copy() if job.tee is not None else b"")
