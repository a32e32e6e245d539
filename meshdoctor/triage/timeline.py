"""One timeline for every finding, and the first cause singled out.

Findings from all inputs are ordered by time (timestamps from the logs and crash reports) and,
when there are none, by file order. Each finding has a role (:data:`meshdoctor.signatures.ROLES`,
its match's: a signature whose groups decide it gives each match its own, e.g. the ring's errno
32/104 is an echo, errno 14 a fault of this rank): a ``cause`` can only be a cause, a
``consequence`` is another rank's failure seen from here (``[jaccl] Recv failed with errno=2``
after a peer died in init, a broken pipe, a peer-closed socket, NCCL's ``remote process exited``
and ``Connection closed by remote peer``, survivors killed by mlx.launch's SIGTERM, -15),
``either`` is a cause when nothing better explains it (RTR errno 22 on a survivor in the same
second as the real fault).

An exit status that could be a cause (``either``: 1, 255) of a rank whose own log printed
only consequences is their consequence (:func:`settle_exits`); an NCCL trace line beside the
WARN or error of its rank is theirs (:func:`settle_traces`). The first cause is chosen from
the findings of the strongest role present, so an echo never
outranks an original fault, whatever the order of the files:

1. When some of them carry a time, the earliest: findings of that role equally early (the same
   second, different host or rank) are all first causes; where the timestamps of that second
   carry a fraction (``10:00:04,120``), only the earliest is, so an echo milliseconds later on
   another rank (a second identical failure, a peer-closed socket) is never named first; one
   stamped to the second only (``10:00:04``) may lie anywhere in it and stays a first cause
   beside that earliest one.
   Findings of that role without a time are then not first causes (nothing places them
   before the timed ones).
2. When none carries a time (the untimed tie rule): the lines of one input are in the order they
   were written, so each input's earliest finding of that role is its candidate; inputs have
   no order among themselves, so every input's candidate is a first cause, one per host and
   rank (of two candidates for the same host and rank from different inputs, what the rank
   printed before its exit status, then the one of the input whose name sorts first; the
   other, when neither is an exit status, is left unrelated: two logs of one rank without
   times may be two runs, github.com/ml-explore/mlx/issues/3755's jaccl and ring logs). The
   job's own exit status (``--exit-code``) is a first cause only when no input gave one. Which
   findings are first causes therefore never depends on the order in which the files were
   given.

A rank that died without a word (its log ends with no error while its peers lost it) has no
finding of its own; :mod:`meshdoctor.triage.silent` adds one (MD691, a cause) before this runs.

First causes are listed by time, then rank, host and input name. Every other finding is
``consequence_of`` the first cause on its own host and rank if there is one, else the first one,
unless it is itself a ``cause`` more than :data:`INDEPENDENT_AFTER_S` seconds later (a separate
incident, left unrelated).
"""

from __future__ import annotations

import datetime as _dt
from typing import Dict, List, Optional, Tuple

from meshdoctor import signatures
from meshdoctor.triage.findings import Finding

INDEPENDENT_AFTER_S = 300.0
_FAR = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)
_STRENGTH = {role: i for i, role in enumerate(signatures.ROLES)}  # strongest first


def _second(t: Optional[_dt.datetime]) -> Optional[_dt.datetime]:
    return t.replace(microsecond=0) if t is not None else None


def _listing(f: Finding) -> Tuple[_dt.datetime, int, str, str, int]:
    """The order first causes are listed in, the same whatever the order of the inputs: time,
    rank, host, input name, line."""
    rank = f.rank if f.rank is not None else 1 << 30
    return (f.time or _FAR, rank, f.host or "", f.source, f.match.lineno)


def settle_exits(findings: List[Finding]) -> None:
    """An exit status that is ``either`` (1: an uncaught exception or NCCL's exit(1); 255; one
    with no specific meaning) of a rank whose own log printed only consequences is read as
    their consequence: the rank ended because of what it printed (a traceback of a lost peer).
    Changes the role of such findings in place (the same (host, rank), another input)."""
    own: Dict[Tuple[Optional[str], Optional[int]], List[Finding]] = {}
    for f in findings:
        if f.exit is None and not f.job and f.rank is not None:
            own.setdefault((f.host, f.rank), []).append(f)
    for f in findings:
        if f.exit is None or f.job or f.role != signatures.EITHER:
            continue
        said = [g for g in own.get((f.host, f.rank), []) if g.source != f.source]
        if said and all(g.role == signatures.CONSEQUENCE for g in said):
            f.role = signatures.CONSEQUENCE


WRAPPED = "inner"  # the group of a signature that wraps another message (MD617's [jaccl] ...)


def settle_wrappers(findings: List[Finding]) -> None:
    """A line that wraps a specific error (``libc++abi: terminating due to uncaught exception
    of type std::runtime_error: [jaccl] Changing queue pair to RTR failed with errno 22``) is
    that error first: the finding of the wrapped message (another finding of the same line)
    takes the stronger role of the two, and the wrapper's (a signature with an ``inner``
    group) becomes its consequence; so does libstdc++'s ``terminate called after throwing``
    line for the finding of its ``what():`` line below it. Changes roles in place."""
    by_line: Dict[Tuple[str, int], List[Finding]] = {}
    for f in findings:
        if f.match.lineno and not f.job:
            by_line.setdefault((f.source, f.match.lineno), []).append(f)
    for same in by_line.values():
        wrappers = [f for f in same if f.match.groups.get(WRAPPED)]
        inner = [f for f in same if f not in wrappers]
        if not wrappers or not inner:
            continue
        best = min(same, key=lambda f: _STRENGTH[f.role]).role
        for f in inner:
            f.role = best
        for f in wrappers:
            f.role = signatures.CONSEQUENCE
    # libstdc++'s form puts the message on the next line: "terminate called after throwing
    # an instance of 'T'", then "  what():  MESSAGE" (GCC's verbose terminate handler)
    for (source, lineno), same in by_line.items():
        heads = [f for f in same if f.match.groups.get("type2")]
        inner = [g for g in by_line.get((source, lineno + 1), []) if g.match.name not in CRASHES]
        if not heads or not inner:
            continue
        best = min(heads + inner, key=lambda f: _STRENGTH[f.role]).role
        for g in inner:
            g.role = best
        for f in heads:
            f.role = signatures.CONSEQUENCE


# native crashes that name no library of their own: after another failure of the same
# process they are its teardown (a segfault or abort on the error path), not a new cause
CRASHES = ("native.crash", "native.uncaught-exception")


def settle_crashes(findings: List[Finding]) -> None:
    """A native crash with no frame of a known failure (MD662, MD696) that follows another
    failure of the same input and rank (a ``cause`` or ``either`` finding earlier in its
    lines) is that failure's consequence: the process died on its error path (NCCL's
    proxy error, then a segfault in teardown: NVIDIA/nccl #1538). Changes roles in place."""
    for f in findings:
        if f.match.name not in CRASHES or f.exit is not None or f.job:
            continue
        if any(
            g is not f
            and g.source == f.source
            and g.rank == f.rank
            and g.seq < f.seq
            and g.match.name not in CRASHES
            and g.role in (signatures.CAUSE, signatures.EITHER)
            for g in findings
        ):
            f.role = signatures.CONSEQUENCE


def settle_traces(findings: List[Finding]) -> None:
    """An NCCL trace line (``NCCL INFO transport/net.cc:687 -> 2``: group ``res``) only
    follows a failure back up the calls; the WARN line that names the failed call is its
    reason (NCCL v2.30.7 src/include/checks.h: the WARN is printed where the call fails, the
    ``-> N`` lines on the way out). Where an input and rank also hold a WARN or error of the
    same strength or stronger, its trace lines are their consequence, whatever their order
    (a log cut inside an earlier trace starts with one). Changes roles in place."""
    for f in findings:
        if not f.match.groups.get("res") or f.role == signatures.CONSEQUENCE:
            continue
        if any(
            not g.match.groups.get("res")
            and g.source == f.source
            and g.rank == f.rank
            and _STRENGTH[g.role] <= _STRENGTH[f.role]
            and g.match.name.startswith("nccl.")
            for g in findings
        ):
            f.role = signatures.CONSEQUENCE


def order(findings: List[Finding]) -> List[Finding]:
    """Findings in timeline order: timed ones by time then file order, untimed ones in file
    order after the timed ones of the same input."""
    far = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)

    def key(f: Finding) -> Tuple[_dt.datetime, int]:
        return (f.time or far, f.seq)

    return sorted(findings, key=key)


def relate(findings: List[Finding]) -> List[Finding]:
    """Number the findings (``F1``... in timeline order), mark the first cause(s) and set
    ``consequence_of`` on the others; returns the first causes (empty for no findings)."""
    settle_exits(findings)
    settle_wrappers(findings)
    settle_crashes(findings)
    settle_traces(findings)
    ordered = order(findings)
    for i, f in enumerate(ordered, 1):
        f.id = f"F{i}"
        f.first_cause, f.consequence_of = False, None
    if not ordered:
        return []
    best = min(_STRENGTH[f.role] for f in ordered)
    pool = [f for f in ordered if _STRENGTH[f.role] == best]
    timed = [f for f in pool if f.time is not None]
    if timed:
        t_min = min(f.time for f in timed)  # type: ignore[type-var]
        tied = [f for f in timed if _second(f.time) == _second(t_min)]
        frac = [f for f in tied if f.time.microsecond]  # type: ignore[union-attr]
        if frac:
            # sub-second timestamps: the earliest one, whatever the order of the files; one
            # stamped to the second only may be anywhere in it, so it stays beside that one
            t_frac = min(f.time for f in frac)  # type: ignore[type-var]
            tied = [f for f in tied if f.time == t_frac or not f.time.microsecond]  # type: ignore
    else:
        # no time: each input's earliest (its lines are in order); inputs have no order
        earliest: Dict[str, Finding] = {}
        for f in pool:
            if f.source not in earliest or f.seq < earliest[f.source].seq:
                earliest[f.source] = f
        tied = [f for f in earliest.values() if not f.job] or list(earliest.values())
    firsts: List[Finding] = []
    seen: Dict[Tuple[Optional[str], Optional[int]], Finding] = {}
    apart = set()  # untimed candidates of one rank in another input: nothing says they are related
    # of one host and rank: what it printed before what its exit status says, then the earliest
    for f in sorted(tied, key=lambda f: (f.exit is not None, f.time or _FAR, f.source, f.seq)):
        who = (f.host, f.rank)
        if who in seen:
            kept = seen[who]
            if f.time is None and f.exit is None and kept.exit is None and f.source != kept.source:
                apart.add(id(f))
            continue
        seen[who] = f
        f.first_cause = True
        firsts.append(f)
    firsts.sort(key=_listing)
    for f in ordered:
        if f.first_cause or id(f) in apart:
            continue
        own = next((c for c in firsts if (c.host, c.rank) == (f.host, f.rank)), firsts[0])
        if (
            f.role == signatures.CAUSE
            and f.time is not None
            and own.time is not None
            and (f.time - own.time).total_seconds() > INDEPENDENT_AFTER_S
        ):
            continue
        f.consequence_of = own.id
    return firsts
