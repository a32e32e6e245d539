"""The launcher's view of the ranks: parsing worker events and telling "alive but blocked in
all_sum #3" from "stopped" from "dead". Pure state, no processes: the
launcher feeds it lines and clock readings, the tests feed it events directly.

Times here are ``time.monotonic()`` seconds of the launcher at the moment a line was read.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, List, Optional

from meshdoctor.parsers import json_text
from meshdoctor.signatures import ANCHORS
from meshdoctor.probe.worker import (
    EV_DONE,
    EV_ENTER,
    EV_ERROR,
    EV_HB,
    EV_LEAVE,
    EV_READY,
    EV_RESULT,
)

STDERR_KEEP_LINES = 400  # lines of stderr kept per rank (stack dumps included)
STDERR_TAIL_LINES = 20  # lines reported as the tail
STDERR_LINE_CHARS = 1000  # a longer stderr line keeps its first and last 500 characters
NOISE_LINE_CHARS = 300  # the same for a stdout line that is not an event
STEP_KEYS = ("ev", "rank", "op", "phase", "iter", "seq", "peer", "before")  # a step's fields


def parse_line(line: str) -> Optional[Dict[str, Any]]:
    """One worker event from a stdout line, or None for anything that is not an event (MLX or
    a library printing to stdout)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        ev = json_text.loads(line)
    except ValueError:
        return None
    return ev if isinstance(ev, dict) and isinstance(ev.get("ev"), str) else None


@dataclass
class RankState:
    """What the launcher knows about one rank.

    ``current``: the step it entered and has not left (the enter event plus ``since``, launcher
    monotonic seconds), ``last_seq``: highest step number entered, ``last_hb``/``last_event``:
    monotonic seconds of the last heartbeat / any line, ``returncode`` as :mod:`subprocess`
    reports it (negative = signal), ``exited_at`` monotonic seconds."""

    rank: int
    host: str
    local: bool = True
    pid: Optional[int] = None
    ready: Optional[Dict[str, Any]] = None
    current: Optional[Dict[str, Any]] = None
    last_step: Optional[Dict[str, Any]] = None
    last_seq: int = 0
    started_at: float = 0.0
    last_hb: Optional[float] = None
    last_event: Optional[float] = None
    results: List[Dict[str, Any]] = field(default_factory=list)
    errors: List[Dict[str, Any]] = field(default_factory=list)
    done: bool = False
    returncode: Optional[int] = None
    exited_at: Optional[float] = None
    stderr: Deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_KEEP_LINES))
    stderr_lines: int = 0
    completed: Dict[str, int] = field(default_factory=dict)
    noise: Deque[str] = field(default_factory=lambda: deque(maxlen=20))

    @property
    def alive(self) -> bool:
        """True while the rank's process has not exited."""
        return self.returncode is None

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> List[str]:
        """The last ``lines`` lines of the rank's stderr (each cut to 1000 characters)."""
        return list(self.stderr)[-lines:]


def screen_lines(line: str, limit: int) -> List[str]:
    """One line read from a rank as a terminal shows it: a lone ``\\r`` ends a line (a progress
    bar redrawn with ``\\r``, then the error on the same line; of the parts a terminal
    overwrote, those holding a signature anchor are kept, with the last part); a part longer
    than ``limit`` characters keeps its head and its tail, where an error usually is."""
    parts = line.rstrip("\r\n").split("\r")
    if len(parts) > 2:
        parts = [p for p in parts[:-1] if any(a in p for a in ANCHORS)] + parts[-1:]
    out = []
    for part in parts:
        if len(part) > limit:
            half = limit // 2
            part = part[:half] + " ... " + part[-half:]
        if part or len(parts) == 1:
            out.append(part)
    return out


class Tracker:
    """Every rank's :class:`RankState`, fed by :meth:`line`, :meth:`event`, :meth:`exited`.

    ``last_progress`` is the monotonic time of the last enter/leave/result/ready from any rank:
    the launcher's hang deadline counts from it."""

    def __init__(self, ranks: List[RankState], now: float) -> None:
        self.ranks = ranks
        self.last_progress = now
        self.first_failure: Optional[Dict[str, Any]] = None
        for r in ranks:
            r.started_at = now

    def stdout_line(self, rank: int, line: str, now: float) -> Optional[Dict[str, Any]]:
        """Feed one stdout line of ``rank`` read at ``now`` (monotonic seconds); returns the event
        it held, or None for other output (kept as noise)."""
        ev = parse_line(line)
        if ev is None:
            if line.strip():
                for part in screen_lines(line, NOISE_LINE_CHARS):
                    if part.strip():
                        self.ranks[rank].noise.append(part.rstrip())
            return None
        self.event(rank, ev, now)
        return ev

    def stderr_line(self, rank: int, line: str) -> None:
        """Keep one line of a rank's stderr, as :func:`screen_lines` cuts it."""
        st = self.ranks[rank]
        for part in screen_lines(line, STDERR_LINE_CHARS):
            st.stderr.append(part)
            st.stderr_lines += 1  # counts what the deque got (stacks() reads it back)

    def event(self, rank: int, ev: Dict[str, Any], now: float) -> None:
        """Apply one worker event (ready, enter, leave, result, heartbeat, error) of ``rank`` at
        ``now``."""
        st = self.ranks[rank]
        st.last_event = now
        kind = ev.get("ev")
        if kind == EV_HB:
            st.last_hb = now
            step = ev.get("step")
            if isinstance(step, dict) and int(step.get("seq", 0) or 0) > st.last_seq:
                # a step inside a timed batch, known only from the heartbeat (worker.timed_batch)
                try:  # how long ago it began, by the rank's own clock (both stamps are its)
                    ago = max(0.0, float(ev["t"]) - float(step["t0"]))
                except (KeyError, TypeError, ValueError):
                    ago = 0.0
                st.current = dict(step, ev=EV_ENTER, rank=rank, since=now - ago)
                st.last_step = st.current
                st.last_seq = int(step["seq"])
                self.last_progress = max(self.last_progress, now - ago)
            return
        if kind == EV_READY:
            st.ready = ev
            st.last_hb = now
            if isinstance(ev.get("pid"), int) and not st.local:
                st.pid = ev["pid"]
        elif kind == EV_ENTER:
            st.current = dict(ev, since=now)
            st.last_step = st.current
            seq = int(ev.get("seq", 0) or 0)
            if seq > int((st.last_step or {}).get("seq", 0) or 0):  # a batch's last step
                st.last_step = {k: ev[k] for k in STEP_KEYS if k in ev}
            st.last_seq = max(st.last_seq, seq)
        elif kind == EV_LEAVE:
            st.current = None
            key = f"{ev.get('op')}/{ev.get('phase')}"
            st.completed[key] = st.completed.get(key, 0) + int(ev.get("steps", 1) or 1)
            seq = int(ev.get("seq", 0) or 0)
            if seq > int((st.last_step or {}).get("seq", 0) or 0):  # a batch's last step
                st.last_step = {k: ev[k] for k in STEP_KEYS if k in ev}
            st.last_seq = max(st.last_seq, seq)
        elif kind == EV_RESULT:
            st.results.append(ev)
        elif kind == EV_ERROR:
            st.errors.append(ev)
            self._failure(rank, "error", now)
        elif kind == EV_DONE:
            st.done = True
        self.last_progress = now

    def exited(self, rank: int, returncode: int, now: float) -> None:
        """Record that ``rank`` exited with ``returncode`` at ``now``; an exit before ``done`` or
        non-zero is a failure."""
        st = self.ranks[rank]
        if st.returncode is None:
            st.returncode, st.exited_at = returncode, now
            if not st.done or returncode != 0:
                self._failure(rank, "exit", now)

    def _failure(self, rank: int, kind: str, now: float) -> None:
        if self.first_failure is None:
            self.first_failure = {"rank": rank, "kind": kind, "at": now}

    # --- questions --------------------------------------------------------------------------
    def all_done(self) -> bool:
        """True when every rank finished its plan and exited 0."""
        return all(r.done and r.returncode == 0 for r in self.ranks)

    def failed(self) -> bool:
        """True once any rank failed (the first failure is kept)."""
        return self.first_failure is not None

    def frontier(self) -> Optional[Dict[str, Any]]:
        """The furthest step any rank entered (its enter event), or None before any step."""
        best = None
        for r in self.ranks:
            s = r.last_step
            if s is not None and (best is None or s.get("seq", 0) > best.get("seq", 0)):
                best = s
        return best

    def hang_report(
        self, now: float, hb_stale_s: float, states: Optional[Dict[int, str]] = None
    ) -> Dict[str, Any]:
        """Who waits where: ``step`` (op, phase, iter, seq of the frontier), ``waiting`` (ranks
        inside a step, with ``waited_s``), ``not_arrived`` (ranks that never entered the frontier
        step, with their last step), ``no_heartbeat`` (ranks silent for more than
        ``hb_stale_s`` seconds or whose process is stopped: they count as not arrived even
        if they entered the step, since they are not taking part), ``states`` (process state
        per rank where known, e.g. stopped)."""
        front = self.frontier() or {}
        fseq = int(front.get("seq", 0))
        waiting, not_arrived, silent = [], [], []
        states = states or {}
        for r in self.ranks:
            if not r.alive:
                continue
            ref = r.last_hb if r.last_hb is not None else r.started_at
            stalled = now - ref > hb_stale_s or states.get(r.rank) == "stopped"
            if stalled:
                silent.append(
                    {
                        "rank": r.rank,
                        "host": r.host,
                        "silent_s": round(now - ref, 3),
                        "state": states.get(r.rank),
                    }
                )
            if r.current is not None and not stalled:
                waiting.append(
                    {
                        "rank": r.rank,
                        "host": r.host,
                        "op": r.current.get("op"),
                        "phase": r.current.get("phase"),
                        "iter": r.current.get("iter"),
                        "seq": r.current.get("seq"),
                        "waited_s": round(now - r.current["since"], 3),
                    }
                )
            if stalled or r.current is None or int(r.current.get("seq", 0)) < fseq:
                last = r.last_step or {}
                not_arrived.append(
                    {
                        "rank": r.rank,
                        "host": r.host,
                        "last_op": last.get("op"),
                        "last_iter": last.get("iter"),
                        "last_seq": last.get("seq"),
                        "in_step": r.current is not None,
                        "stalled": stalled,
                    }
                )
        rep: Dict[str, Any] = {
            "step": {
                k: front.get(k) for k in ("op", "phase", "iter", "seq", "before") if k in front
            }
            if front
            else None,
            "waiting": waiting,
            "not_arrived": not_arrived,
            "no_heartbeat": silent,
            "no_progress_s": round(now - self.last_progress, 3),
        }
        if states:
            rep["states"] = {str(k): v for k, v in states.items()}
        return rep


def describe_step(step: Optional[Dict[str, Any]]) -> str:
    """``all_sum #3 (timed)`` for a step dict; ``start-up`` for None."""
    if not step:
        return "start-up"
    if step.get("op") == "init":
        return "group formation (init)"
    if step.get("op") == "barrier":
        return (
            f"the barrier before {step.get('before')} #{step.get('iter')} "
            f"({step.get('phase')}, step {step.get('seq')})"
        )
    return f"{step.get('op')} #{step.get('iter')} ({step.get('phase')}, step {step.get('seq')})"
