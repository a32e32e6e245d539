"""Message sizes: parsing ``256MiB``/``1GiB``/``4096``/``64KB``, formatting, and the memory a
probe needs on one host.

Units, one rule for every size and rate option (``--size``, ``launch --probe``,
``--min-busbw``): ``B`` is a byte and ``b`` a bit (eight of them: IEC 80000-13 and IEEE 1541
symbols; ``10MB`` is 10^7 bytes, ``10Mb`` 1.25 x 10^6), in sizes as in rates. A plain number is
bytes; ``KiB``/``MiB``/``GiB``/``TiB`` (``Kib``... in bits) are powers of 1024;
``KB``/``MB``/``GB``/``TB`` (``Kb``...) powers of 1000 (SI); the bare letters ``K``/``M``/``G``/``T``
are powers of 1024 bytes, as in nccl-tests ``-b 8M`` (nccl-tests doc/PERFORMANCE.md). The case
of the prefix letter does not matter; the case of ``B``/``b`` does.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable

from meshdoctor.probe.worker import batch_plan

_POWERS: Dict[str, int] = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kKmMgGtT])([iI])?)?(B|b|bits?)?\s*$")
MAX_SIZE = 1 << 40  # 1 TiB: anything larger is a typo, not a probe


def is_bits(unit: str) -> bool:
    """Whether the unit letters ``unit`` (``b``, ``bit``, ``bits``; not ``B``) count bits, the
    one meaning of a lower-case ``b`` in every size and rate (see the module's doc)."""
    return unit in ("b", "bit", "bits")


class SizeError(ValueError):
    """The text is not a size; the message says what was wrong and shows valid examples."""


def parse_size(text: str) -> int:
    """Bytes in ``text`` (e.g. ``"256MiB"`` -> 268435456, ``"64KB"`` -> 64000, ``"4096"``,
    ``"80Mb"`` -> 10000000: ``b`` is a bit, see the module's doc).

    Raises :class:`SizeError` for anything else (empty, negative, unknown unit, zero, a
    fractional byte count, more than 1 TiB).
    """
    m = _SIZE.match(str(text))
    hint = "use e.g. 4096, 64KB, 256MiB or 1GiB (B: bytes, b: bits)"
    if not m:
        raise SizeError(f"{text!r} is not a size; {hint}")
    number, prefix, binary, unit = m.group(1), (m.group(2) or "").lower(), m.group(3), m.group(4)
    if binary and not prefix:
        raise SizeError(f"{text!r} is not a size; {hint}")
    # KiB, bare K (nccl-tests' -b 8M): 1024s; KB, Kb: 1000s
    base = 1024 if binary or not unit else 1000
    value = float(number) * base ** _POWERS[prefix]
    if unit and is_bits(unit):
        value /= 8
    if value != int(value):
        raise SizeError(f"{text!r} is not a whole number of bytes; {hint}")
    if value <= 0:
        raise SizeError(f"{text!r}: the size must be at least 1 byte; {hint}")
    if value > MAX_SIZE:
        raise SizeError(f"{text!r} is more than 1 TiB per rank; {hint}")
    return int(value)


def format_size(nbytes: float) -> str:
    """``nbytes`` as a short binary-unit string, to two decimals: 268435456 -> ``256MiB``,
    1000 -> ``1000B``, 1536 -> ``1.5KiB``, 16 MiB less a few bytes -> ``16MiB``."""
    n = float(nbytes)
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        v = round(n / scale, 2)
        if v >= 1:
            return f"{v:.2f}".rstrip("0").rstrip(".") + unit
    return f"{int(n)}B"


def format_size_exact(nbytes: int) -> str:
    """:func:`format_size` when that is exact (``256MiB``), else the bytes (``4092B``), so a
    label never disagrees with the element count checked."""
    short = format_size(nbytes)
    try:
        return short if parse_size(short) == int(nbytes) else f"{int(nbytes)}B"
    except SizeError:
        return f"{int(nbytes)}B"


# Per-rank buffers the worker holds at once for one op, in multiples of the message size:
# input, output, expected value, and one temporary of the comparison (worker.py). Measured peak
# RSS with mlx 0.32.4 (CPU, ring): 1.68 GiB per rank at 512 MiB for 2 and 4 ranks (~3.3x the
# size), flat in the world size since the expected value is built from one period of the data.
BUFFERS_PER_RANK = 4
SLACK_BYTES = 256 << 20  # interpreter + MLX runtime per rank, measured ~150 MiB with mlx 0.32.4


def memory_needed(size: int, local_ranks: int, iters: int = 1) -> int:
    """Bytes the probe needs on one host running ``local_ranks`` ranks with message ``size``
    bytes: every op keeps at most :data:`BUFFERS_PER_RANK` buffers of ``size`` bytes per rank
    (all_gather's output is ``size`` bytes too: nccl-tests counts the gathered output as the
    size; sum_scatter's input is ``size`` bytes and its output and expected value ``size``/n),
    plus the other outputs of a timed batch of ``iters`` iterations, kept for the exact check
    after it (:func:`meshdoctor.probe.worker.batch_plan`: within
    :data:`meshdoctor.probe.worker.RETAIN_BYTES`), plus :data:`SLACK_BYTES` per rank for the
    interpreter and MLX."""
    longest = max((count for _, count in batch_plan(iters, size)), default=1)
    kept = max(0, longest - 1) * size
    return local_ranks * (BUFFERS_PER_RANK * size + kept + SLACK_BYTES)


# MLX 0.32.4 jaccl/mesh_impl.h: a mesh message of at least this many bytes is split over every
# wire (cable) to a peer, a smaller one goes over the first wire only (MLX PR #4607).
MESH_MULTI_WIRE_MIN_BYTES = 512 << 10
# Ops whose per-peer message is the probe's size divided by the world size (all_gather's
# ``size`` is the gathered output, sum_scatter's the input; MLX passes one rank's share).
PER_RANK_SHARE_OPS = ("all_gather", "sum_scatter")


def mesh_wire_floor(ops: Iterable[str], n: int, wires: int) -> int:
    """The smallest probe ``size`` in bytes that puts at least :data:`MESH_MULTI_WIRE_MIN_BYTES`
    x ``wires`` through each peer in every op of ``ops`` on a JACCL mesh of ``n`` ranks whose
    cells list up to ``wires`` cables (so a bad second cable cannot hide behind the one-wire
    path of small messages, MLX PR #4607). 0 when ``wires`` < 2 (nothing to reach)."""
    if wires < 2:
        return 0
    per_peer = MESH_MULTI_WIRE_MIN_BYTES * wires
    return max(
        (per_peer * max(1, n) if op in PER_RANK_SHARE_OPS else per_peer for op in ops),
        default=per_peer,
    )


# Rates (--min-busbw): a number, a decimal prefix (k, M, G, T: powers of 1000, as link rates
# are), ``B`` for bytes or ``b`` for bits (as in sizes: 10GB/s is 8 x 10Gb/s), then ``/s`` or
# ``ps``: ``10GB/s``, ``800Mb/s``, ``25Gbps``, ``1.5 GB/s``.
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKMGT]?)(B|b|bits?|Bit)?\s*(?:/s|ps)\s*$")
_RATE_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_rate(text: str) -> float:
    """A bandwidth as written on the command line, in GB/s (1e9 bytes/s, the unit of busbw):
    ``"10GB/s"`` -> 10.0, ``"800Mb/s"`` -> 0.1, ``"25Gbps"`` -> 3.125. Raises
    :class:`SizeError` (with examples) for anything else or a rate that is not positive."""
    m = _RATE.match(str(text))
    if not m:
        raise SizeError(
            f"{text!r} is not a rate; write a number, a decimal prefix and B/s (bytes) or b/s "
            "(bits), e.g. 10GB/s, 800Mb/s, 25Gbps"
        )
    value = float(m.group(1)) * _RATE_PREFIX[m.group(2)]
    if m.group(3) and (is_bits(m.group(3)) or m.group(3) == "Bit"):
        value /= 8
    if value <= 0:
        raise SizeError(f"{text!r}: a rate must be above 0")
    return value / 1e9
