"""The probe called from code: a :class:`ProbeRequest` (what the caller chooses, with the
command line's defaults) in, a :class:`~meshdoctor.model.Verdict` out, through :func:`probe`.

One sequence for every caller (``meshdoctor probe``, the ``reset-group`` fix, anything that
launches): the hosts (a hostfile, ``--hosts`` or ``-n`` ranks on this machine) and the checked
config (:func:`meshdoctor.probe.setup.make_config`), the fleet check that gates a launch on
named hosts (:func:`meshdoctor.checker.fleet.gate_probe`), the interrupts, the progress display,
the launch (:func:`meshdoctor.probe.launcher.run_probe`) and the report
(:func:`meshdoctor.probe.report.build`). A request the probe cannot run raises
:class:`~meshdoctor.probe.errors.ProbeSetupError` naming the option at fault, before anything
runs; the command line turns it into its usage error (exit 2). One that is valid but that this
machine cannot run right now (not enough memory available) is a verdict that could not assess
(MD509 error, exit 3): a state of the machine, not a typo.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, List, Optional, TextIO, Union

from meshdoctor.probe.errors import ProbeNotNow, ProbeSetupError

if TYPE_CHECKING:
    from meshdoctor.hostfile.model import Hostfile
    from meshdoctor.interrupts import Interrupts
    from meshdoctor.model import Verdict
    from meshdoctor.probe.config import ProbeConfig
    from meshdoctor.probe.launcher import EventHook

__all__ = ["BAR", "LOG", "ProbeRequest", "ProbeSetupError", "config", "probe", "progress_for"]

BAR = "bar"  # a rich progress bar on stderr (a terminal)
LOG = "log"  # plain progress lines on stderr at a bounded rate (a log, a CI job)


@dataclass(frozen=True)
class ProbeRequest:
    """What a caller chooses of a probe; the defaults are ``meshdoctor probe``'s.

    The mesh, at most one of: ``hostfile`` (an mlx.launch hostfile: a path, ``-`` for standard
    input, or a loaded :class:`~meshdoctor.hostfile.model.Hostfile`; one rank per entry), ``hosts``
    (``"A,B,C"``, one rank each) or ``nranks`` (ranks on this machine over loopback); none:
    2 local ranks. ``backend``: ring, jaccl, jaccl-ring or nccl (None: the hostfile's, else nccl
    when MLX is the CUDA build, else ring, as mlx.launch). ``op``: one collective or ``all``.
    ``size``: bytes per rank's message (``4096``, ``"64KB"``, ``"256MiB"``). ``iters`` and
    ``warmup``: timed and untimed iterations per op. ``dtype``: element type. ``timeout``:
    per-collective deadline in seconds (None: 10 s + bus bytes / 20 MB/s). ``soak``: N
    repetitions per op with relaunch after a hang (0: off). ``pairs``: the N x N send/recv
    matrix. ``port``: ring first port, jaccl coordinator port, nccl NCCL_PORT (None: free
    ports / :data:`meshdoctor.mlx.ports.STARTING_PORT`). ``strict``: warnings count as failures (no-go)."""

    hostfile: Union[str, "Hostfile", None] = None
    hosts: Optional[str] = None
    nranks: Optional[int] = None
    backend: Optional[str] = None
    op: str = "all"
    size: Union[str, int] = "256MiB"
    iters: int = 5
    warmup: int = 1
    dtype: str = "float32"
    timeout: Optional[float] = None
    soak: int = 0
    pairs: bool = False
    port: Optional[int] = None
    strict: bool = False

    @property
    def given(self) -> List[str]:
        """The options that name the mesh and were set (``--hostfile``, ``--hosts``, ``-n``)."""
        named = (("--hostfile", self.hostfile), ("--hosts", self.hosts), ("-n", self.nranks))
        return [x for x, v in named if v is not None]


def config(request: ProbeRequest) -> "ProbeConfig":
    """The checked :class:`~meshdoctor.probe.config.ProbeConfig` of ``request`` (a hostfile
    path is read here); raises :class:`ProbeSetupError` naming the option and the fix (a
    hostfile that cannot be read or parsed: ``--hostfile``)."""
    from meshdoctor.hostfile.load import HostfileError, load
    from meshdoctor.probe.setup import make_config

    hf = request.hostfile
    if isinstance(hf, str):
        try:
            hf = load(hf)  # "-" is standard input; read up to hostfile.MAX_BYTES
        except HostfileError as exc:
            raise ProbeSetupError(str(exc), "--hostfile") from None
    return make_config(
        hostfile=hf,
        hosts=request.hosts,
        nranks=request.nranks,
        backend=request.backend,
        op=request.op,
        size=str(request.size),
        iters=request.iters,
        warmup=request.warmup,
        dtype=request.dtype,
        timeout=request.timeout,
        soak=request.soak,
        pairs=request.pairs,
        port=request.port,
        given=request.given,
    )


def progress_for(*, as_json: bool, quiet: bool, stream: Optional[TextIO] = None) -> Optional[str]:
    """The progress display for output options ``as_json``/``quiet`` on ``stream`` (default:
    stderr, where the display goes): :data:`BAR` for human output to a terminal, :data:`LOG`
    when it is not a terminal (unless quiet), else None."""
    stream = stream if stream is not None else sys.stderr
    if not as_json and stream.isatty():
        return BAR
    if not quiet and not stream.isatty():
        return LOG
    return None


def probe(
    request: ProbeRequest,
    *,
    gate: bool = True,
    on_event: Optional["EventHook"] = None,
    interrupts: Union["Interrupts", Callable[[], "Interrupts"], None] = None,
    progress: Optional[str] = None,
    on_checked: Optional[Callable[["Verdict"], Any]] = None,
) -> "Verdict":
    """Run the probe ``request`` describes and return its verdict (command ``probe``); never
    leaves a rank behind. Raises :class:`ProbeSetupError` before anything runs when the request
    cannot be probed.

    ``gate``: with a hostfile or hosts named, run the fleet check first; on its no-go the
    verdict holds the check's findings and its ``fleet`` section, and nothing is launched (no
    ``probe`` section). ``on_event(rank, event, launch)``: called for every worker event in the
    launcher's thread (:class:`meshdoctor.probe.launcher.Launch`). ``interrupts``: what may stop
    the launch (:class:`meshdoctor.interrupts.Interrupts`; None: nothing does), or a callable
    giving it, called once the gate has passed (the command line takes the signals over there).
    ``progress``: :data:`BAR`, :data:`LOG` (on stderr; :func:`progress_for`) or None.
    ``on_checked(verdict)``: called once the request passed its checks, with the verdict this
    call fills, before the fleet check or any rank starts."""
    from meshdoctor.model import Verdict

    try:
        cfg = config(request)
    except ProbeNotNow as exc:  # not now is not a usage error: a verdict that could not assess
        verdict = Verdict(command="probe", strict=request.strict)
        if on_checked is not None:
            on_checked(verdict)
        return _not_now(verdict, exc)
    verdict = Verdict(command="probe", strict=request.strict)
    if on_checked is not None:
        on_checked(verdict)
    if gate and (request.hostfile is not None or request.hosts is not None):
        from meshdoctor.checker.fleet import FleetOptions, gate_probe

        # the fleet check runs with the interpreter the remote ranks will use
        if not gate_probe(cfg.hostfile, verdict, FleetOptions(python=cfg.remote_python)):
            return verdict
    if callable(interrupts):
        interrupts = interrupts()
    from meshdoctor.probe.launcher import run_probe
    from meshdoctor.probe.report import build

    if progress == BAR:
        from meshdoctor.probe.config import steps_per_rank
        from meshdoctor.probe.progress import ProbeProgress

        with ProbeProgress(steps_per_rank(cfg), cfg.world_size) as bar:
            run = run_probe(cfg, on_event=_both(on_event, bar.on_event), interrupts=interrupts)
    elif progress == LOG:
        from meshdoctor.probe.config import collective_deadline
        from meshdoctor.probe.log import ProbeLog

        with ProbeLog(cfg.world_size, collective_deadline(cfg), sys.stderr) as log:
            run = run_probe(cfg, on_event=_both(on_event, log.on_event), interrupts=interrupts)
    else:
        run = run_probe(cfg, on_event=on_event, interrupts=interrupts)
    return build(run, verdict)


def _not_now(verdict: "Verdict", exc: ProbeNotNow) -> "Verdict":
    """``verdict`` with the MD509 error saying why no rank was started (``exc``), exit 3."""
    from meshdoctor.model import ERROR, HostInfo, Remediation
    from meshdoctor.probe import codes as C

    verdict.results.append(
        C.result(
            C.START,
            "probe.start",
            ERROR,
            str(exc),
            host="localhost",
            evidence={"need_bytes": exc.need, "available_bytes": exc.have},
            remediation=Remediation(
                f"Free memory on this host and probe again, or use a smaller {exc.param} "
                "or fewer local ranks."
            ),
        )
    )
    verdict.hosts = [HostInfo("localhost", 0)]
    return verdict


def _both(first: Optional["EventHook"], second: "EventHook") -> "EventHook":
    """One event hook calling ``first`` (when given), then ``second``."""
    if first is None:
        return second

    def hook(rank: int, ev: Any, launch: Any) -> None:
        first(rank, ev, launch)
        second(rank, ev, launch)

    return hook
