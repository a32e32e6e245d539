"""What a link should carry: the expected bandwidth of each link class, with its public source,
and the fraction of it below which the probe warns (``probe --link CLASS``, MD513).

Rates are the class's signalling rate per direction in GB/s (1e9 bytes/s, the unit of busbw:
nccl-tests doc/PERFORMANCE.md compares busbw with a link's rate). A probe's busbw cannot reach
the line rate (framing, the transport's own overhead, the CPU for IP links), so each class
states the fraction under which a run is worth a look: below it the link most likely trained
at a lower speed, runs over the wrong path, or shares it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

GBIT = 1 / 8  # GB/s per Gb/s


@dataclass(frozen=True)
class LinkClass:
    """One link class: ``name`` (the ``--link`` value), ``what`` it is, ``rate_gbs`` (per
    direction, GB/s; None: no rate to compare with), ``warn_below`` (the fraction of the rate
    under which the probe warns), and the public ``source`` of the rate."""

    name: str
    what: str
    rate_gbs: Optional[float]
    warn_below: float
    source: str


def _pcie(gen: int, lanes: int, per_lane_gts: float, encoding: float) -> LinkClass:
    """A PCIe class: ``lanes`` lanes at ``per_lane_gts`` GT/s with ``encoding`` efficiency
    (128b/130b from gen 3 on)."""
    return LinkClass(
        f"pcie{gen}-x{lanes}",
        f"PCIe gen {gen} x{lanes} (GPU to GPU through the host bridge)",
        round(per_lane_gts * encoding * lanes / 8, 3),
        0.5,
        f"PCI-SIG PCI Express Base Specification {gen}.0 ({per_lane_gts:g} GT/s per lane, "
        "128b/130b encoding)",
    )


_CLASSES = (
    LinkClass(
        "loopback",
        "ranks of one host over 127.0.0.1 (memory copies: no link)",
        None,
        0.0,
        "Linux loopback (lo): no line rate; judge it with --min-busbw or a baseline",
    ),
    LinkClass(
        "tb5-rdma",
        "Thunderbolt 5 cable, RDMA (JACCL), per cable",
        80 * GBIT,
        0.5,
        "Intel Thunderbolt 5 technology brief (2023): 80 Gb/s bi-directional per cable; "
        "RDMA over Thunderbolt 5 in macOS 26.2 (MLX JACCL backend docs)",
    ),
    LinkClass(
        "tb5-ip",
        "Thunderbolt 5 cable, IP (Thunderbolt Bridge, ring backend)",
        80 * GBIT,
        0.2,
        "Intel Thunderbolt 5 technology brief (2023): 80 Gb/s per cable; IP over Thunderbolt "
        "(Thunderbolt Bridge) carries a fraction of it through the TCP stack",
    ),
    LinkClass(
        "tb4-ip",
        "Thunderbolt 4 cable, IP (Thunderbolt Bridge, ring backend)",
        40 * GBIT,
        0.2,
        "Intel Thunderbolt 4 specification (2020): 40 Gb/s per cable; IP over Thunderbolt "
        "carries a fraction of it through the TCP stack",
    ),
    LinkClass(
        "10gbe",
        "10 Gigabit Ethernet",
        10 * GBIT,
        0.5,
        "IEEE 802.3ae (10 Gb/s Ethernet)",
    ),
    LinkClass(
        "25gbe",
        "25 Gigabit Ethernet",
        25 * GBIT,
        0.5,
        "IEEE 802.3by (25 Gb/s Ethernet)",
    ),
    LinkClass(
        "100gbe",
        "100 Gigabit Ethernet",
        100 * GBIT,
        0.5,
        "IEEE 802.3ba / 802.3bj (100 Gb/s Ethernet)",
    ),
    LinkClass(
        "nvlink3",
        "NVLink 3 (A100), per GPU",
        300.0,
        0.5,
        "NVIDIA A100 datasheet: NVLink 600 GB/s per GPU (both directions together)",
    ),
    LinkClass(
        "nvlink4",
        "NVLink 4 (H100, H200), per GPU",
        450.0,
        0.5,
        "NVIDIA H100 / H200 datasheets: NVLink 900 GB/s per GPU (both directions together)",
    ),
    LinkClass(
        "nvlink5",
        "NVLink 5 (B200), per GPU",
        900.0,
        0.5,
        "NVIDIA Blackwell (B200) datasheet: NVLink 1.8 TB/s per GPU (both directions together)",
    ),
    _pcie(3, 16, 8.0, 128 / 130),
    _pcie(4, 16, 16.0, 128 / 130),
    _pcie(5, 16, 32.0, 128 / 130),
    _pcie(4, 8, 16.0, 128 / 130),
    _pcie(5, 8, 32.0, 128 / 130),
)
LINK_CLASSES: Dict[str, LinkClass] = {c.name: c for c in _CLASSES}


def link_class(name: Optional[str]) -> Optional[LinkClass]:
    """The :class:`LinkClass` named ``name`` (a ``--link`` value), or None."""
    return LINK_CLASSES.get(name) if name else None


def judge_class(busbw_gbs: float, cls: LinkClass) -> Optional[Tuple[float, float]]:
    """``(fraction_of_rate, rate_gbs)`` when ``busbw_gbs`` is below ``cls``'s warn fraction of
    its rate, else None (also for a class without a rate)."""
    if cls.rate_gbs is None or cls.rate_gbs <= 0:
        return None
    frac = busbw_gbs / cls.rate_gbs
    return (frac, cls.rate_gbs) if frac < cls.warn_below else None
