"""Plain progress lines of ``meshdoctor probe`` for a stderr that is not a terminal (a log, a CI
job): at a bounded rate (at most one per :data:`LOG_INTERVAL_S`, and about that often while a step
is slow) the step, the elapsed time and the per-step deadline, so a log shows the probe is alive.
No rich here: the ``--json`` path uses it too and stays light.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional, TextIO

from meshdoctor.text import one_line
from meshdoctor.probe.events import describe_step

LOG_INTERVAL_S = 5.0


class ProbeLog:
    """Plain progress lines for a stderr that is not a terminal. ``on_event`` is the launcher's
    event hook; a daemon thread calls :meth:`tick` so a slow step still shows life. A line looks
    like ``probe: all_sum #2 (timed, step 7), ranks ready 3/3, 12.4 s elapsed, per-step deadline
    23.4 s``. ``interval`` (seconds) bounds the rate; ``clock`` and ``stream`` are for tests."""

    def __init__(
        self,
        world_size: int,
        deadline_s: float,
        stream: TextIO,
        *,
        interval: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.n, self.deadline_s, self.stream = world_size, deadline_s, stream
        self.interval, self.clock = interval, clock
        self.t0 = clock()
        self.last_line: Optional[float] = None
        self.step = "starting ranks"
        self.ready: set = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: Optional[threading.Thread] = None

    def line(self) -> str:
        """The progress line: current step, ranks ready, elapsed seconds, the step deadline."""
        return (
            f"probe: {self.step}, ranks ready {len(self.ready)}/{self.n}, "
            f"{self.clock() - self.t0:.1f} s elapsed, per-step deadline {self.deadline_s:.1f} s"
        )

    def tick(self, force: bool = False) -> None:
        """Write a line when ``interval`` has passed since the last one (or ``force``)."""
        with self.lock:
            now = self.clock()
            if not force and self.last_line is not None and now - self.last_line < self.interval:
                return
            self.last_line = now
            try:
                self.stream.write(self.line() + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a closed stderr must not stop the probe
                self.stop.set()

    def on_event(self, rank: int, ev: Dict[str, Any], launch: Any) -> None:
        """Launcher hook: follow ``rank``'s event ``ev`` (ready, entered step) for the progress
        line."""
        kind = ev.get("ev")
        if kind == "ready":
            self.ready.add(rank)
        elif kind == "enter":
            self.step = one_line(describe_step(ev))  # the ranks' words: one line
        elif kind == "hb" and isinstance(ev.get("step"), dict):  # inside a timed batch
            self.step = one_line(describe_step(ev["step"]))
        else:
            return
        self.tick()

    def __enter__(self) -> "ProbeLog":
        self.tick(force=True)

        def loop() -> None:
            while not self.stop.wait(self.interval / 4):
                self.tick()

        self.thread = threading.Thread(target=loop, name="probe-log", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
