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
    from meshdoctor.probe.launched import Launched
    from meshdoctor.probe.launcher import EventHook

__all__ = [
    "BAR",
    "LOG",
    "ProbeRequest",
    "ProbeSetupError",
    "config",
    "follow",
    "launched",
    "probe",
    "progress_for",
]

BAR = "bar"  # a rich progress bar on stderr (a terminal)
LOG = "log"  # plain progress lines on stderr at a bounded rate (a log, a CI job)
# The gate of a probe whose ranks all run on this machine (-n): the stale-rank check (MD301) and
# the running job it finds (MD411), the rule ``probe --hostfile`` and ``check`` apply to a host
LOCAL_GATE = ("MD301", "MD411")


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
    per-collective deadline in seconds (None: sized for the message, the world size and this
    host's oversubscription, grown with the warm-up: :mod:`meshdoctor.probe.config`). ``soak``: N
    repetitions per op with relaunch after a hang (0: off). ``pairs``: the N x N send/recv
    matrix. ``port``: ring first port, jaccl coordinator port, nccl NCCL_PORT (None: free
    ports / :data:`meshdoctor.mlx.ports.STARTING_PORT`). ``strict``: warnings count as failures (no-go).
    ``launcher``: ``srun`` or ``env``: this process is one rank of a job another launcher
    started, the mesh comes from its environment (:mod:`meshdoctor.probe.launched`); rank 0
    gives the verdict (:func:`probe`), every other rank relays to it (:func:`follow`).
    ``beside_running_job``: launch even when the gate finds a running job's ranks on a host
    (MD411; without it the probe refuses), on the hosts named or, for ranks on this machine
    (``-n``), here (:data:`LOCAL_GATE`); ``beside_hint``: how the refusal's remedy says to
    override it (the caller's own option).

    The judgement (MD513): ``min_busbw`` (a rate, ``"10GB/s"``, ``"800Mb/s"``, or GB/s as a
    number: below it fails), ``link`` (a class of :data:`meshdoctor.probe.expected.LINK_CLASSES`:
    below its stated fraction warns), ``baseline`` (a file written by ``save_baseline``: below
    80 % of it warns); ``save_baseline``: write this run's figures there when the run is
    healthy (go)."""

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
    launcher: Optional[str] = None
    beside_running_job: bool = False
    beside_hint: str = "pass --beside-running-job to probe anyway"
    min_busbw: Union[str, float, None] = None
    link: Optional[str] = None
    baseline: Optional[str] = None
    save_baseline: Optional[str] = None

    @property
    def given(self) -> List[str]:
        """The options that name the mesh and were set (``--hostfile``, ``--hosts``, ``-n``)."""
        named = (("--hostfile", self.hostfile), ("--hosts", self.hosts), ("-n", self.nranks))
        return [x for x, v in named if v is not None]


def launched(request: ProbeRequest) -> Optional["Launched"]:
    """This process as a rank of ``request.launcher`` (None without one); raises
    :class:`ProbeSetupError` (``--launcher``) when its environment does not say."""
    if request.launcher is None:
        return None
    from meshdoctor.probe.launched import LauncherError, read

    if request.backend not in (None, "ring"):
        raise ProbeSetupError(
            f"--launcher {request.launcher} runs the ring backend; leave --backend out",
            "--backend",
        )
    try:
        return read(request.launcher, port=request.port)
    except LauncherError as exc:
        raise ProbeSetupError(str(exc), "--launcher") from None


def config(request: ProbeRequest, ranks: Optional["Launched"] = None) -> "ProbeConfig":
    """The checked :class:`~meshdoctor.probe.config.ProbeConfig` of ``request`` (a hostfile
    path is read here; with a launcher, ``ranks`` is :func:`launched`'s answer, read when not
    given); raises :class:`ProbeSetupError` naming the option and the fix (a hostfile that
    cannot be read or parsed: ``--hostfile``)."""
    from meshdoctor.hostfile.load import HostfileError, load
    from meshdoctor.probe.setup import make_config

    hf = request.hostfile
    if request.launcher is not None:
        hf = (ranks or launched(request)).hostfile
    if isinstance(hf, str):
        try:
            hf = load(hf)  # "-" is standard input; read up to hostfile.MAX_BYTES
        except HostfileError as exc:
            raise ProbeSetupError(str(exc), "--hostfile") from None
    return judged(make_config(request, hf), request)


def judged(cfg: "ProbeConfig", request: ProbeRequest) -> "ProbeConfig":
    """``cfg`` with the judgement ``request`` asks for (its floor parsed, its link class and
    baseline checked and read); raises :class:`ProbeSetupError` naming the option."""
    from meshdoctor.probe import baseline as bl
    from meshdoctor.probe.expected import LINK_CLASSES
    from meshdoctor.probe.sizes import SizeError, parse_rate

    if request.min_busbw is not None:
        try:
            cfg.min_busbw_gbs = (
                float(request.min_busbw)
                if isinstance(request.min_busbw, (int, float))
                else parse_rate(request.min_busbw)
            )
        except SizeError as exc:
            raise ProbeSetupError(str(exc), "--min-busbw") from None
    if request.link is not None:
        if request.link not in LINK_CLASSES:
            raise ProbeSetupError(
                f"{request.link!r} is not a link class; one of {', '.join(LINK_CLASSES)}",
                "--link",
            )
        cfg.link = request.link
    if request.baseline is not None:
        try:
            cfg.baseline = bl.read(request.baseline)
        except bl.BaselineError as exc:
            raise ProbeSetupError(str(exc), "--baseline") from None
    return cfg


def follow(
    request: ProbeRequest,
    *,
    stream: TextIO,
    quiet: bool = False,
    interrupts: Union["Interrupts", Callable[[], "Interrupts"], None] = None,
) -> Optional[int]:
    """Under a launcher, run this process's rank when it is not rank 0 and relay it to rank 0
    (:func:`meshdoctor.probe.relay.follow`, its part printed on ``stream``; with ``quiet``
    only when it did not finish), returning the
    exit status; None when there is no launcher or this is rank 0 (:func:`probe` then gives the
    verdict). Raises :class:`ProbeSetupError` as :func:`probe` does."""
    ranks = launched(request)
    if ranks is None or ranks.rank == 0:
        return None
    cfg = config(request, ranks)
    from meshdoctor.probe.relay import follow as relay_follow

    return relay_follow(
        cfg,
        ranks,
        stream=stream,
        quiet=quiet,
        interrupts=interrupts() if callable(interrupts) else interrupts,
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

    ranks = launched(request)
    if ranks is not None and ranks.rank != 0:
        raise ProbeSetupError(
            f"this process is rank {ranks.rank}: rank 0 gives the verdict, this one relays "
            "to it (probe.api.follow)",
            "--launcher",
        )
    try:
        cfg = config(request, ranks)
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
        if not gate_probe(
            cfg.hostfile,
            verdict,
            FleetOptions(python=cfg.remote_python),
            beside_running_job=request.beside_running_job,
            override=request.beside_hint,
        ):
            return verdict
    elif gate and ranks is None:  # ranks on this machine (-n): the same rule for a running job
        from meshdoctor.checker.fleet import FleetOptions, gate_probe

        if not gate_probe(
            cfg.hostfile,
            verdict,
            FleetOptions(only=list(LOCAL_GATE)),
            beside_running_job=request.beside_running_job,
            override=request.beside_hint,
        ):
            return verdict
        verdict.fleet = None  # one machine: no fleet to show, as before the gate
    if callable(interrupts):
        interrupts = interrupts()
    from meshdoctor.probe.report import build

    if ranks is not None:  # rank 0 of another launcher's job: the others relay to it
        from meshdoctor.probe.relay import run_rank0

        def run_probe(cfg, **kw):
            return run_rank0(cfg, ranks, **kw)
    else:
        from meshdoctor.probe.launcher import run_probe

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
    build(run, verdict)
    if request.save_baseline:
        save_baseline(cfg, verdict, request.save_baseline)
    return verdict


def save_baseline(cfg: "ProbeConfig", verdict: "Verdict", path: str) -> None:
    """Write this run's figures to ``path`` (:mod:`meshdoctor.probe.baseline`) when the run is
    healthy (go) and measured something; the outcome is an MD513 result in ``verdict``."""
    from meshdoctor.model import ERROR, OK, WARN, Remediation
    from meshdoctor.probe import baseline as bl
    from meshdoctor.probe import codes as C
    from meshdoctor.probe.codes import result

    doc = bl.snapshot(cfg, verdict.probe or {})
    n = len(doc["ops"]) + len(doc["pairs"])
    if verdict.exit_code != 0 or not n:
        why = "the run is not healthy" if verdict.exit_code != 0 else "nothing was measured"
        verdict.results.append(
            result(
                C.JUDGEMENT,
                "probe.baseline",
                WARN,
                f"baseline not saved to {path}: {why}",
                remediation=Remediation(
                    "Save a baseline from a run that is go (exit 0): fix what the other "
                    "results name, then probe again with --save-baseline."
                ),
                host="mesh",
            )
        )
        return
    problem = bl.write(path, doc)
    verdict.results.append(
        result(
            C.JUDGEMENT,
            "probe.baseline",
            ERROR if problem else OK,
            problem or f"baseline saved to {path}: {n} figure(s) (ops and pairs)",
            evidence={"path": path, "figures": n},
            host="mesh",
        )
    )


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
