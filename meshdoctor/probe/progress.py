"""The rich progress display of ``meshdoctor probe`` (human output only; the CLI imports this
module only without ``--json`` and when stderr is a terminal; :mod:`.log` writes plain lines
otherwise). It draws on stderr, so stdout carries nothing but the verdict."""

from __future__ import annotations

from typing import Any, Dict

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from meshdoctor.render import verdict as render
from meshdoctor.probe.events import describe_step


class ProbeProgress:
    """A context manager whose :meth:`on_event` (the launcher's event hook) advances one bar
    over ``total`` steps (init + collectives of the slowest rank)."""

    def __init__(self, total: int, world_size: int) -> None:
        self.total, self.n = total, world_size
        self.step = "starting ranks"  # the label never goes blank between steps
        self.ready: set = set()
        self.done_steps: Dict[int, int] = {}
        self.progress = Progress(
            TextColumn("[bold]probe[/]"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=render.console(stderr=True),
            transient=True,
        )
        self.task = None

    def __enter__(self) -> "ProbeProgress":
        self.progress.start()
        self.task = self.progress.add_task("starting ranks", total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def on_event(self, rank: int, ev: Dict[str, Any], launch: Any) -> None:
        """Launcher hook: follow ``rank``'s event ``ev`` for the live progress display."""
        kind = ev.get("ev")
        if kind == "ready":
            self.ready.add(rank)
        elif kind == "leave":  # the last step of a timed batch closes the batch's steps
            self.done_steps[rank] = self.done_steps.get(rank, 0) + int(ev.get("steps", 1) or 1)
        elif kind == "hb" and isinstance(ev.get("step"), dict):  # inside a timed batch
            ev = ev["step"]
            kind = "enter"
        elif kind != "enter":
            return
        if kind == "enter":
            self.step = render.clean_line(describe_step(ev))
        slowest = min(self.done_steps.get(r, 0) for r in range(self.n))
        desc = f"{self.step}  ranks ready {len(self.ready)}/{self.n}"
        self.progress.update(self.task, completed=min(slowest, self.total), description=desc)
