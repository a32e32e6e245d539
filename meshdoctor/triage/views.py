"""Each node's view of the ring: launchers that write one hostfile per node (exo's runner logs
``rank 0 hostfile: PATH hosts: ["0.0.0.0:52817","192.168.204.31:52817"]``) print the address
list each rank was given. A rank listens on its own entry (``0.0.0.0``: every address) and
dials the others' entries; when two nodes' lists put the ranks on different networks (the
master on Ethernet in its own list, on the Thunderbolt bridge in the worker's), the worker
dials an address nobody listens on and its connect is refused or times out (exo #2309).
Triage names it with MD875, a finding it makes itself across the inputs, as the cause of the
ring's connect failures.

The rule (:func:`readings`): at least two printed lists (one per printing rank); for some
rank, two lists give it different addresses that are not wildcards, or the non-wildcard
addresses of two lists share no IPv4 /24 network; and some ring or JACCL connect failure
was found. Its role is ``cause``.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor.signatures.model import signature
from meshdoctor.triage import reading
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD875"
_CONNECT = ("ring.connect-failed", "jaccl.side-channel-connect")
# "rank 1 hostfile: /tmp/hosts_1.json hosts: ["10.10.0.2:52817","0.0.0.0:52817"]"
_LIST = re.compile(
    r"\brank (?P<rank>\d+)\b[^\[\n]{0,200}?\bhosts?\b\W{0,3}(?P<list>\[[^\]\n]{0,4000}\])"
)
_WILDCARD = ("0.0.0.0", "::", "*", "")

VIEW_SIG = signature(
    CODE,
    "triage.hostfile-views-differ",
    None,
    "The nodes were given different hostfiles: the address lists each node printed disagree "
    "on where the ranks are (here, on rank 0's address or network), so a rank dials an "
    "address its neighbour does not listen on and its connect is refused or times out. "
    "Nothing is wrong with the link or a firewall: the two views of the ring differ.",
    "Give every node the same hostfile, with each rank's address on the one network the "
    "ring should use: regenerate it from one place (`mlx.distributed_config`), pin the "
    "interface the launcher picks (or take down the link it should not use, e.g. the "
    "Ethernet or the Thunderbolt bridge), or upgrade the launcher that writes one per node "
    "(exo #2309).",
    "https://github.com/exo-explore/exo/issues/2309 (master and worker pick different IPs "
    "for the master, Ethernet vs Thunderbolt); MLX ring backend (each rank listens on its own "
    "entry, dials its neighbours')",
    examples=(),
    causes=[
        (
            "a node with two links to its peers (Ethernet and a Thunderbolt bridge) and a "
            "launcher that picks an address per node",
            "one node's list on 192.168.x, the other's on 10.x or 169.254.x",
        ),
        (
            "a stale hostfile on one node (an older run's addresses)",
            "its path or its addresses differ from the others' while the run is the same",
        ),
    ],
)
VIEW_SIG = with_why(
    VIEW_SIG,
    "The connect failure that follows reads as 'neighbour down or firewall'; the "
    "disagreement between the nodes' own lists is the cause.",
)

ENTRY = entry(VIEW_SIG, "triage hostfile views differ")


def _views(inputs: Sequence[Input]) -> List[Tuple[int, Input, int, List[str]]]:
    """``(input index, input, printing rank, addresses by rank)`` of every printed list."""
    out = []
    for i, inp in enumerate(inputs):
        if inp.kind not in ("log", "stdin") or inp.error:
            continue
        for m in _LIST.finditer(inp.head):
            try:
                hosts = json.loads(m.group("list"))
            except ValueError:
                continue
            if isinstance(hosts, list) and all(isinstance(h, str) for h in hosts):
                out.append((i, inp, int(m.group("rank")), [h.rsplit(":", 1)[0] for h in hosts]))
    return out


def _net(addr: str) -> Optional[str]:
    try:
        return str(ipaddress.ip_network(f"{addr}/24", strict=False))
    except ValueError:
        return None


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD875 finding (the rule in the module's docstring) for ``inputs``, or none."""
    if not any(f.match.name in _CONNECT for f in findings):
        return []
    views = _views(inputs)
    by_rank: Dict[int, Tuple[int, Input, int, List[str]]] = {}
    for v in views:
        by_rank.setdefault(v[2], v)
    if len(by_rank) < 2:
        return []
    ranks = sorted(by_rank)
    for a_n, a in enumerate(ranks):
        for b in ranks[a_n + 1 :]:
            va, vb = by_rank[a], by_rank[b]
            why = _differ(va, vb)
            if why:
                return [_finding(vb, why)]
    return []


def _differ(
    va: Tuple[int, Input, int, List[str]], vb: Tuple[int, Input, int, List[str]]
) -> Optional[str]:
    """What two printed lists disagree on, or None."""
    ra, la, rb, lb = va[2], va[3], vb[2], vb[3]
    for r in range(min(len(la), len(lb))):
        x, y = la[r], lb[r]
        if x not in _WILDCARD and y not in _WILDCARD and x != y:
            return f"rank {ra}'s list puts rank {r} at {x}, rank {rb}'s at {y}"
    na = {n for n in map(_net, [x for x in la if x not in _WILDCARD]) if n}
    nb = {n for n in map(_net, [x for x in lb if x not in _WILDCARD]) if n}
    if na and nb and not na & nb:
        dial = ", ".join(
            f"rank {r} at {x}" for r, x in enumerate(lb) if x not in _WILDCARD and r != rb
        )
        seen = ", ".join(
            f"rank {r} at {x}" for r, x in enumerate(la) if x not in _WILDCARD and r != ra
        )
        return (
            f"rank {rb} dials {dial} while rank {ra}'s own list puts the ring on another "
            f"network ({seen}): {', '.join(sorted(nb))} vs {', '.join(sorted(na))}"
        )
    return None


def _finding(v: Tuple[int, Input, int, List[str]], why: str) -> Finding:
    i, inp, rank, _ = v
    m = reading.match(
        VIEW_SIG,
        f"{why}.",
        line=f"rank {rank}'s hostfile differs from the others'",
        lineno=1,
    )
    return reading.at_input(m, i, inp, seq_line=0, rank=rank)
