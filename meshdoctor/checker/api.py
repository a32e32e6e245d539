"""The check called from code: a :class:`CheckRequest` (what the caller chooses, with the command
line's defaults) in, a :class:`~meshdoctor.model.Verdict` out, through :func:`run` (as
:func:`meshdoctor.probe.api.probe` is the probe's).

One sequence for every caller (``meshdoctor check``, a gate before a launch): with a hostfile
and not ``local_only``, every host of it (:func:`meshdoctor.checker.fleet.check_fleet`: the node
checks on each host over ssh, then the cross-node checks); else this machine's node checks
(:func:`meshdoctor.checker.here.run_here`). A selection (``only``/``skip``) that names an unknown check or runs nothing raises
:class:`~meshdoctor.checker.selection.SelectionError` before any check runs; an interrupt raises
:class:`~meshdoctor.checker.runner.Interrupted` (the results so far on it) or
``KeyboardInterrupt``, the verdict passed in keeping what was filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from meshdoctor.checker.model import Check
    from meshdoctor.hostfile.model import Hostfile
    from meshdoctor.model import Verdict

__all__ = ["CheckRequest", "run"]


@dataclass(frozen=True)
class CheckRequest:
    """What a caller chooses of a check; the defaults are ``meshdoctor check``'s.

    ``hostfile``: an mlx.launch hostfile, loaded (None: this machine alone); ``local_only``:
    only this machine's entries of it (the hostfile says which ranks it is), no fleet.
    ``only``/``skip``: codes or names of checks. ``timeout``: each check's deadline in seconds
    (each external command gets 45 % of it). ``python``: the interpreter that runs meshdoctor
    on remote hosts (None: :func:`meshdoctor.fanout.remote_python`). ``max_parallel``: at most
    this many hosts at once. ``facts``: also this node's facts for the cross-node checks (what
    fleet mode asks of each host). ``ranks``: this machine's ranks in the hostfile (None: the
    entries that are this machine). ``strict``: warnings count as failures (no-go)."""

    hostfile: Optional["Hostfile"] = None
    local_only: bool = False
    only: Sequence[str] = ()
    skip: Sequence[str] = ()
    timeout: float = 10.0
    python: Optional[str] = None
    max_parallel: int = 32
    facts: bool = False
    ranks: Optional[Sequence[int]] = None
    strict: bool = False

    @property
    def fleet(self) -> bool:
        """Whether the request is for every host of the hostfile (fleet mode)."""
        return self.hostfile is not None and not self.local_only


def run(
    request: CheckRequest,
    verdict: Optional["Verdict"] = None,
    checks: Optional[Sequence["Check"]] = None,
) -> "Verdict":
    """Run the check ``request`` describes, filling ``verdict`` (None: a new ``check`` verdict)
    and returning it. ``checks``: the candidates of this machine's node checks (None: every
    check, :func:`meshdoctor.checker.registry.all_checks`). Raises
    :class:`~meshdoctor.checker.selection.SelectionError` for a selection that cannot be run,
    and on an interrupt as the module says."""
    from meshdoctor.model import Verdict

    if verdict is None:
        verdict = Verdict(command="check", strict=request.strict)
    if request.fleet:
        _fleet(request, verdict)
    else:
        _here(request, verdict, checks)
    return verdict


def _fleet(request: CheckRequest, verdict: "Verdict") -> None:
    """Every host of the request's hostfile, then the cross-node checks, into ``verdict``."""
    from meshdoctor.checker.fleet import FleetOptions, check_fleet

    options = FleetOptions(
        timeout=request.timeout,
        only=list(request.only),
        skip=list(request.skip),
        python=request.python,
        parallel=request.max_parallel,
    )
    check_fleet(request.hostfile, verdict, options)


def _here(request: CheckRequest, verdict: "Verdict", checks: Optional[Sequence["Check"]]) -> None:
    """This machine's node checks into ``verdict`` (its host first)."""
    from meshdoctor.checker import here
    from meshdoctor.checker.selection import chosen
    from meshdoctor.model import HostInfo

    if checks is None:
        from meshdoctor.checker.registry import all_checks

        checks = all_checks()
    chosen(checks, request.only, request.skip)  # an unknown name or nothing to run: refused
    ctx = here.context(hostfile=request.hostfile, ranks=request.ranks, timeout=request.timeout)
    verdict.hosts.append(
        HostInfo(
            host=ctx.host,
            rank=ctx.ranks[0] if ctx.ranks else None,
            platform={"os": ctx.platform},
        )
    )
    verdict.results.extend(
        here.run_here(
            ctx,
            checks,
            request.only,
            request.skip,
            timeout=request.timeout,
            facts=verdict.hosts[0] if request.facts else None,
        )
    )
