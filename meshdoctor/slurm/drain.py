"""``check --slurm-drain``: a node check's verdict as this node's Slurm state, with NHC's
ownership rule.

On no-go the node is drained with a reason that starts with :data:`OWNER_PREFIX`
(``meshdoctor: MD301 proc.stale-ranks 1 stale rank ... (+2 more)``); on go a node drained with
such a reason is resumed; a node drained with any other reason was drained by an operator (or
another tool) and is left exactly as it is, drain and reason both. An unknown verdict (could not
assess) changes nothing. This is the rule LBNL NHC follows for its own ``NHC:`` reasons
(https://github.com/mej/nhc, ``nhc.conf`` ``MARK_OFFLINE`` / ``node-mark-online``: only a node
whose reason carries NHC's prefix is put back online).

Slurm commands: ``scontrol show node -o NAME`` (its ``State=`` flags, ``DRAIN`` among them, and
``Reason=TEXT [user@time]``) and ``scontrol update NodeName=NAME State=DRAIN|RESUME
Reason=TEXT`` (https://slurm.schedmd.com/scontrol.html), each under
:data:`SCONTROL_TIMEOUT_S` through :func:`meshdoctor.execute.run`, an argument list (the reason
never reaches a shell).
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Dict, Optional

from meshdoctor import execute
from meshdoctor.model import ERROR, FAIL, WARN, Verdict
from meshdoctor.text import one_line

__all__ = ["OWNER_PREFIX", "SlurmError", "apply", "node_name", "reason_for", "scontrol"]

OWNER_PREFIX = "meshdoctor:"
SCONTROL_TIMEOUT_S = 10.0  # per scontrol call: a controller that does not answer is an error
REASON_MAX = 200  # characters of the drain reason (sinfo's %E shows the whole of it)
_REASON = re.compile(r"\bReason=(.*?)(?: \[[^\[\]@]*@[^\[\]]*\])?$")


class SlurmError(RuntimeError):
    """scontrol is missing, timed out or refused; the message says which and what to do."""


@dataclass(frozen=True)
class NodeState:
    """A node as ``scontrol show node -o`` gives it: ``state`` (``IDLE+DRAIN``), ``reason``
    (None when it has none)."""

    state: str
    reason: Optional[str]

    @property
    def drained(self) -> bool:
        """Whether the node is draining or drained (the ``DRAIN`` flag)."""
        return any(w.startswith("DRAIN") for w in self.state.upper().split("+"))

    @property
    def ours(self) -> bool:
        """Whether meshdoctor drained it (its reason starts with :data:`OWNER_PREFIX`)."""
        return (self.reason or "").startswith(OWNER_PREFIX)


def scontrol() -> str:
    """The path of ``scontrol`` on ``PATH``; raises :class:`SlurmError` when it is not
    installed."""
    path = execute.which("scontrol")
    if path is None:
        raise SlurmError(
            "--slurm-drain runs scontrol, which is not on PATH: run it on a Slurm node "
            "(Debian: apt-get install slurm-client) or leave --slurm-drain out"
        )
    return path


def node_name(env: Optional[Dict[str, str]] = None) -> str:
    """This node's Slurm name: ``SLURMD_NODENAME`` (set by slurmd for the programs it runs,
    and where NodeName differs from the host name), else ``hostname -s``."""
    env = os.environ if env is None else env
    return env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def reason_for(verdict: Verdict) -> str:
    """The drain reason of a no-go ``verdict``: :data:`OWNER_PREFIX`, the code, check and
    summary of its first failure (an error, or with ``strict`` a warning, when none failed),
    ``(+N more)`` for the others, on one line of at most :data:`REASON_MAX` characters."""
    bad = [r for r in verdict.results if r.status == FAIL]
    if not bad:
        bad = [r for r in verdict.results if r.status in (ERROR, WARN)]
    if not bad:
        return f"{OWNER_PREFIX} no-go"
    first = bad[0]
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    text = one_line(f"{OWNER_PREFIX} {first.code} {first.check} {first.summary}")
    if len(text) + len(more) > REASON_MAX:
        text = text[: REASON_MAX - len(more) - 3] + "..."
    return text + more


def _call(tool: str, *args: str) -> str:
    res = execute.run([tool, *args], timeout=SCONTROL_TIMEOUT_S)
    if res.returncode != 0:
        raise SlurmError(res.describe())
    return res.stdout


def node_state(tool: str, node: str) -> NodeState:
    """``node``'s state and reason from ``scontrol show node -o``; raises :class:`SlurmError`."""
    out = _call(tool, "show", "node", "-o", node)
    state = re.search(r"\bState=(\S+)", out)
    reason = _REASON.search(out.strip())
    if state is None:
        raise SlurmError(f"scontrol show node {node} printed no State=: {one_line(out[:200])}")
    return NodeState(state.group(1), reason.group(1) if reason else None)


def apply(verdict: Verdict, *, node: Optional[str] = None) -> Optional[str]:
    """Put this node's Slurm state in line with ``verdict`` (see module doc) and return one
    sentence saying what was done, or None when nothing needed doing; raises
    :class:`SlurmError` when scontrol is missing, does not answer within
    :data:`SCONTROL_TIMEOUT_S` or refuses."""
    tool = scontrol()
    node = node or node_name()
    kind = verdict.verdict
    if kind == "unknown":
        return f"node {node}: could not assess, Slurm state left as it is"
    now = node_state(tool, node)
    if kind == "no-go":
        if now.drained and not now.ours:
            return (
                f"node {node} is already drained by someone else (reason: "
                f"{one_line(now.reason or '-')}); left as it is"
            )
        reason = reason_for(verdict)
        _call(tool, "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
        return f"drained node {node} in Slurm: {reason}"
    if now.drained and now.ours:
        _call(tool, "update", f"NodeName={node}", "State=RESUME")
        return f"resumed node {node} in Slurm (meshdoctor had drained it: {one_line(now.reason)})"
    if now.drained:
        return (
            f"node {node} stays drained: an operator's reason ({one_line(now.reason or '-')}) "
            "is not meshdoctor's to undo"
        )
    return None
