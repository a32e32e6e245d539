"""The node checks on this machine: choose them, build the node's context, run them under their
deadlines; and the arguments that run the same node check on another host.

Every path that runs node checks here goes through :func:`run_here`: ``meshdoctor check`` on one
node (:mod:`meshdoctor.commands.check`), the fix engine's checks on this machine
(:meth:`meshdoctor.fixer.hosts.HostExec.check`) and fleet mode's hostfile check when no host
could run it (:mod:`meshdoctor.checker.fleet`). Another host runs the same code through
``meshdoctor check --local-only --json``, with the arguments :func:`check_args` builds.
"""

from __future__ import annotations

import socket
import time
from typing import List, Optional, Sequence

from meshdoctor.checker.model import Check
from meshdoctor.checker.runner import DEFAULT_CHECK_TIMEOUT_S, run_checks
from meshdoctor.facts.context import NodeContext
from meshdoctor.hostfile.model import Hostfile
from meshdoctor.model import HostInfo, Result

# Each external command a check runs gets this share of the check's deadline (``--timeout``), so
# that two in a row that both hang still end inside it as findings rather than as a check in
# error ("each external command gets 45% of it", ``meshdoctor check --help``).
COMMAND_SHARE = 0.45
# The least time (s) a command gets, however short the check's deadline.
MIN_COMMAND_TIMEOUT_S = 0.05


def proof_timeout() -> str:
    """The ``--timeout`` (seconds, as text) whose command deadline (:data:`COMMAND_SHARE` of it)
    is :data:`meshdoctor.facts.context.HANG_PROOF_S`: what to run a check again with so that an
    overrun proves a hang instead of a slow machine."""
    import math

    from meshdoctor.facts.context import HANG_PROOF_S

    return str(math.ceil(HANG_PROOF_S / COMMAND_SHARE))


def slow_not_hung(what: str) -> str:
    """The remedy of a command that overran a deadline too short to prove a hang; ``what``
    names the command in words (``"The MLX import"``)."""
    return (
        f"{what} overran a deadline too short to tell a loaded machine or a short --timeout "
        f"from a hang. Run the same command again with --timeout {proof_timeout()}: an overrun "
        "there is a hang."
    )


def this_host_name() -> str:
    """The short host name results about this machine carry when no hostfile entry names it:
    the host name up to its first dot, else ``localhost``."""
    return socket.gethostname().split(".")[0] or "localhost"


def context(
    *,
    hostfile: Optional[Hostfile] = None,
    ranks: Optional[Sequence[int]] = None,
    host: Optional[str] = None,
    timeout: float = DEFAULT_CHECK_TIMEOUT_S,
) -> NodeContext:
    """The context the node checks read on this machine. ``ranks``: this machine's ranks in
    ``hostfile`` (None: the entries that are this machine, :func:`meshdoctor.hostfile.locality.local_ranks`;
    none without a hostfile); ``host``: the name its results carry (None: the ssh name of its
    first rank, else :func:`this_host_name`); ``timeout``: each check's deadline in seconds, of
    which every external command gets :data:`COMMAND_SHARE` (at least
    :data:`MIN_COMMAND_TIMEOUT_S`)."""
    if ranks is None:
        from meshdoctor.hostfile.locality import local_ranks

        ranks = local_ranks(hostfile) if hostfile is not None else []
    ranks = list(ranks)
    if host is None:
        host = (hostfile.hosts[ranks[0]].ssh if hostfile is not None and ranks else "") or (
            this_host_name()
        )
    return NodeContext(
        host=host,
        hostfile=hostfile,
        ranks=ranks,
        command_timeout=max(MIN_COMMAND_TIMEOUT_S, timeout * COMMAND_SHARE),
    )


def run_here(
    ctx: NodeContext,
    checks: Optional[Sequence[Check]] = None,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    *,
    timeout: float = DEFAULT_CHECK_TIMEOUT_S,
    facts: Optional[HostInfo] = None,
) -> List[Result]:
    """Run the node checks on this machine, with the context ``ctx`` (:func:`context`); returns
    their results in check order.

    ``checks``: the candidates (None: every check, :func:`meshdoctor.checker.registry.all_checks`),
    filtered by ``only``/``skip`` (:func:`meshdoctor.checker.selection.select`; a caller that
    takes them from the command line validates them first,
    :func:`meshdoctor.checker.selection.chosen`); ``timeout``: each check's deadline in seconds
    (:func:`meshdoctor.checker.runner.run_checks`, which raises
    :class:`~meshdoctor.checker.runner.Interrupted` on an interrupt). ``facts``: the node's
    :class:`~meshdoctor.model.HostInfo` when the node's facts are wanted too (``check
    --facts``): :func:`meshdoctor.facts.summary.node_facts` is gathered side by side with the
    checks (they share the context's cached facts) and put on it; facts not ready ``timeout``
    seconds after the start are named in ``facts["errors"]``."""
    from meshdoctor.checker.selection import select

    if checks is None:
        from meshdoctor.checker.registry import all_checks

        checks = all_checks()
    selected = select(checks, only, skip)
    if facts is None:
        return run_checks(selected, ctx, timeout=timeout)
    return _with_facts(ctx, facts, timeout, lambda: run_checks(selected, ctx, timeout=timeout))


def _with_facts(ctx: NodeContext, host_info: HostInfo, timeout: float, run) -> List[Result]:
    """``run()`` (the checks) with the node's facts gathered beside it into ``host_info``. An
    interrupt while waiting for the facts raises :class:`~meshdoctor.checker.runner.Interrupted`
    with every check's result (they had all finished)."""
    from meshdoctor.checker.runner import Interrupted
    from meshdoctor.deadline import start
    from meshdoctor.facts.summary import node_facts

    t0 = time.monotonic()
    running = start({"facts": lambda: node_facts(ctx)}, name="node-facts")
    results = run()
    try:
        got = running.wait(max(0.0, t0 + timeout - time.monotonic()))["facts"]
    except KeyboardInterrupt as exc:
        raise Interrupted(results, str(exc) or "SIGINT") from None
    if got.error is not None:  # node_facts catches its own; this is the last guard
        host_info.facts = {"errors": {"facts": f"{type(got.error).__name__}: {got.error}"}}
    else:
        host_info.facts = (
            got.value
            if got.finished
            else {"errors": {"facts": f"not gathered within the {timeout:g} s deadline"}}
        )
    return results


def check_args(
    *,
    timeout: float,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    hostfile: Optional[str] = None,
    ranks: Optional[Sequence[int]] = None,
    facts: bool = False,
) -> List[str]:
    """The arguments of ``meshdoctor check`` that run the node checks on another host and print
    its verdict as JSON (``--local-only --json``): ``timeout``: each check's deadline (s);
    ``only``/``skip``: codes or names, one option each; ``hostfile``: the ``--hostfile``
    argument the host reads it from (the caller sends the hostfile on its standard input; None:
    no hostfile); ``ranks``: that host's ranks in it (``--ranks``, fleet mode); ``facts``: add
    the node's facts (``--facts``, for the cross-node checks)."""
    argv = ["check", "--local-only", "--json"]
    if facts:
        argv.append("--facts")
    if hostfile is not None:
        argv += ["--hostfile", hostfile]
    if ranks is not None:
        argv += ["--ranks", ",".join(map(str, ranks))]
    argv += ["--timeout", f"{timeout:g}"]
    for c in only:
        argv += ["--only", c]
    for c in skip:
        argv += ["--skip", c]
    return argv
