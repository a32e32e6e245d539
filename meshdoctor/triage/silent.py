"""The silent rank: a rank whose log ends without an error while every other rank reports only
that it lost a peer (``[ring] Socket 4 was closed by the peer``, ``[jaccl] Recv failed with
errno=2``, NCCL's ``Connection closed by remote peer``) most likely died without a word: killed
by SIGKILL (the OOM killer, macOS jetsam), its Mac panicked, slept or lost power. Triage names it
as the suspect with MD691, a finding it makes itself (no line of any log says it), declared here
as triage's own catalogue entry, as MD690 is in :mod:`.report`.

The rule (:func:`suspects`): among the logs read (not crash reports, not ``--exit-code``) whose
rank or host is known (``rank3.log``, a hostfile host's file), at least two; no finding of any
input is a ``cause`` or ``either`` (the job's own ``--exit-code`` aside); some finding is a
``consequence`` of another rank or host; then each such log with no finding, whose rank and
host no other input's finding names either, read whole and without a warning, is a suspect.
None is named when a log could not be read or a host could not be reached (that one may be
the rank that died: a host powered off answers nothing), nor by an interrupted triage. Its role
is ``cause``: it is the first cause, since by the rule no other cause was found.
"""

from __future__ import annotations

import shlex
from typing import Collection, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD691"

SILENT = signature(
    CODE,
    "triage.silent-rank",
    None,
    "This rank's log stops without an error while its peers report that they lost it (peer "
    "closed, connection reset, recv failed): it most likely died without printing anything, "
    "killed by SIGKILL (the out-of-memory killer, macOS jetsam), or its machine panicked, "
    "slept or lost power.",
    "Find out how that rank ended: its exit status (mlx.launch's '[WARN] Node with rank R "
    "exited with code C' line: give triage the launcher's output too), the crash, jetsam and "
    "panic reports of its host (`ssh HOST meshdoctor triage --crash-reports`, or "
    "`meshdoctor triage --hostfile HOSTFILE` from here), whether it rebooted (`ssh HOST uptime`) "
    "and, on Linux, its kernel log (`ssh HOST dmesg`: the OOM killer says 'Killed process').",
    "POSIX signals (SIGKILL cannot be caught, so nothing is printed); xnu "
    "kern_memorystatus.c (jetsam); Apple, kernel panic reports (bug_type 210)",
    examples=(),
    causes=[
        (
            "killed by the out-of-memory killer or macOS jetsam",
            "exit status -9 or 137; a jetsam report (bug_type 298) or 'Out of memory: "
            "Killed process' in dmesg",
        ),
        (
            "the machine panicked or rebooted",
            "a panic report (bug_type 210); uptime shorter than the job",
        ),
        ("the Mac slept or lost power", "pmset -g log shows Sleep at that time"),
        (
            "the link to it went down while it ran on",
            "its exit status 0, or its log going on after the peers' errors (this copy of "
            "it was cut short, not the rank)",
        ),
    ],
)

# what the role's usual "why" would say (the rank printed it) is not so here: triage names it
SILENT = with_why(
    SILENT,
    "The suspect of a job whose other ranks only lost a peer: it is the first cause "
    "because no rank printed a cause of its own, and the peers' errors are its "
    "consequences; a crash, jetsam or panic report of its host, once found, says what "
    "happened.",
)

ENTRY = entry(SILENT, "triage silent rank")

_LOGS = ("log", "stdin")

WEDGE_CODE = "MD872"
# ECONNRESET: macOS 54, Linux 104 (errno.h); the ring's "Receiving from socket N failed with
# errno E" and its give-up after ten errors ("Too many send/recv errors. Aborting...", MLX
# <= 0.32.0: the SocketThread returns without failing the pending operations)
_RESET_ERRNOS = ("54", "104")
_RESET, _GIVE_UP = "ring.socket-errno", "ring.abort-hang"

WEDGE = signature(
    WEDGE_CODE,
    "triage.ring-reset-wedge",
    None,
    "A ring connection was reset (ECONNRESET) on one hop while every rank was alive, and the "
    "ring backend gave up on it without failing the operations waiting on it: the ranks whose "
    "logs simply stop are not dead, they wait for ever in the collective (mx.eval blocked, no "
    "exception). The reset is the first cause; their silence is its consequence.",
    "Put every ring hop on a stable direct link (Thunderbolt or wired Ethernet between the "
    "neighbours the hostfile orders; no Wi-Fi, NAT or VPN/Tailscale hop, whose resets grow "
    "with the number of hops) or fix the flaky link of the rank that printed the reset, then "
    "stop the hung ranks and restart the job; upgrade MLX past 0.32.0, whose ring fails the "
    "pending operations ('Failing pending tasks...') so the error reaches every rank instead "
    "of a silent hang.",
    "MLX ring backend (mlx/distributed/ring/ring.cpp: the send/recv error limit); mlx #4060 "
    "(survivors hang after 'Aborting...', fixed in 0.32.1); "
    "https://github.com/exo-explore/exo/issues/2219",
    examples=(),
    causes=[
        (
            "a transient reset on a Wi-Fi, NAT or VPN hop (a path through a router or "
            "Tailscale) between two neighbours of the ring",
            "the reset rank's IPs for its neighbours are not on a direct link; more ranks fail "
            "more often",
        ),
        (
            "a flaky cable or port on that hop",
            "`meshdoctor probe` of that pair shows errors or a low rate",
        ),
    ],
)
WEDGE = with_why(
    WEDGE,
    "A hang read backwards would blame the silent ranks (dead, killed): they are alive "
    "and waiting; the one hop that reset is where the job broke.",
)

WEDGE_ENTRY = entry(WEDGE, "triage ring reset wedge")


def _is_reset(f: Finding) -> bool:
    return f.match.name == _RESET and f.match.groups.get("errno") in _RESET_ERRNOS


def wedged(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD872 finding when the only failure the ranks printed is a ring connection reset
    (ECONNRESET on one hop, with the ring's give-up after it) and the other ranks' logs stop
    with no error and no exit status: they hang alive, so they are no silent suspects. Empty
    otherwise. Its role is ``cause``, on the rank that printed the reset."""
    rank_findings = [f for f in findings if not f.job and f.exit is None]
    if not rank_findings or any(f.match.name not in (_RESET, _GIVE_UP) for f in rank_findings):
        return []
    resets = [f for f in rank_findings if _is_reset(f)]
    if not resets or any(f.exit is not None for f in findings):
        return []  # an exit status says how the silent ones ended: read that instead
    logs = [
        inp
        for inp in inputs
        if inp.kind in _LOGS and inp.error is None and (inp.rank is not None or inp.host)
    ]
    named = {(f.host, f.rank) for f in rank_findings}
    quiet = [i for i in logs if not i.findings and (i.host, i.rank) not in named]
    if not quiet:
        return []
    first = min(resets, key=lambda f: f.seq)
    gave_up = any(f.match.name == _GIVE_UP for f in rank_findings)
    where = _who(first.host, first.rank) or first.source
    m = reading.match(
        WEDGE,
        f"{where}'s ring socket was reset ('{first.match.line}'"
        + (f", x{first.count}" if first.count > 1 else "")
        + (", then the ring gave up: 'Aborting...'" if gave_up else "")
        + f"); {', '.join(_who(i.host, i.rank) or i.source for i in quiet)} print nothing "
        "after it: waiting, not dead.",
        line=first.match.line,
        lineno=first.match.lineno,
        groups=dict(first.match.groups),
    )
    return [reading.at_finding(m, first)]


def _who(host: Optional[str], rank: Optional[int]) -> str:
    parts = ([host] if host else []) + ([f"rank {rank}"] if rank is not None else [])
    return " ".join(parts)


def _remedy(inp: Input) -> str:
    """The remedy of one suspect, its host named (quoted) when known."""
    if not inp.host:
        return SILENT.remedy
    h = shlex.quote(inp.host)
    return (
        f"Find out how {_who(inp.host, inp.rank)} ended: its exit status (mlx.launch's '[WARN] "
        "Node with rank R exited with code C' line: give triage the launcher's output too), "
        f"its host's crash, jetsam and panic reports (`ssh {h} meshdoctor triage "
        f"--crash-reports`), whether it rebooted (`ssh {h} uptime`) and, on Linux, its kernel "
        f"log (`ssh {h} dmesg`: the OOM killer says 'Killed process')."
    )


def suspects(
    inputs: Sequence[Input], findings: Sequence[Finding], unreachable: Collection[str] = ()
) -> List[Finding]:
    """The MD691 findings (the rule in the module's docstring) for what triage read:
    ``inputs`` in the order read (their index gives each finding's ``seq``), ``findings`` of
    them all, ``unreachable`` the hosts that could not be read. Empty when the rule does not
    hold."""
    if unreachable or any(inp.error and inp.kind in _LOGS for inp in inputs):
        return []  # a log not read (a host down, a file missing, an interrupt) may be the one
    logs = [
        (i, inp)
        for i, inp in enumerate(inputs)
        if inp.kind in _LOGS and inp.error is None and (inp.rank is not None or inp.host)
    ]
    if len(logs) < 2:
        return []
    rank_findings = [f for f in findings if not f.job]
    if any(f.role != signatures.CONSEQUENCE for f in rank_findings):
        return []
    if wedged(inputs, findings):
        return []  # a reset on a hop of live ranks: the quiet ones hang (MD872), not dead
    named = {(f.host, f.rank) for f in rank_findings}
    out: List[Finding] = []
    for i, inp in logs:
        who: Tuple[Optional[str], Optional[int]] = (inp.host, inp.rank)
        if inp.findings or who in named or inp.warnings:  # a log read with trouble proves nothing
            continue
        lost = sorted(
            {_who(f.host, f.rank) or f.source for f in rank_findings if (f.host, f.rank) != who}
        )
        if not lost:
            continue
        m = reading.match(
            SILENT,
            f"{_who(inp.host, inp.rank)}'s log ends after "
            f"{inp.lines} line(s) with no error, while {', '.join(lost)} lost a peer.",
            line=f"(end of the log after {inp.lines} line(s), no error)",
            lineno=inp.lines,
            remedy=_remedy(inp),
        )
        out.append(reading.at_input(m, i, inp))
    return out
