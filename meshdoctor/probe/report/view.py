"""What the parts of the probe report read of the last launch (:class:`LaunchView`), and the
host label of results about the whole group (:data:`MESH`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

from meshdoctor.probe.config import ProbeConfig
from meshdoctor.probe.events import RankState
from meshdoctor.probe.outcome import LaunchOutcome

MESH = "mesh"  # the host label of results about the whole group (figures, correctness)


@dataclass
class LaunchView:
    """What the outcome and leftover functions read: the config, the last launch, whether the
    group formed, the ranks at fault (dead, init and start outcomes), the host to name when no
    rank is, and the hosts found unreachable on the way (filled in as they are found: a rank
    that could not start over ssh, :mod:`.outcomes`; a host teardown did not reach,
    :mod:`.leftovers`)."""

    cfg: ProbeConfig
    out: LaunchOutcome
    formed: bool
    lead: List[RankState]
    first_host: str
    detect_s: Optional[float]
    unreachable: Set[str] = field(default_factory=set)
