"""Slurm's host-list syntax expanded: ``mac[01-03,7],gpu-a`` -> ``mac01 mac02 mac03 mac7 gpu-a``.

The syntax is Slurm's (``scontrol show hostnames``, the ``SLURM_JOB_NODELIST`` of a job,
https://slurm.schedmd.com/scontrol.html): names separated by commas outside brackets; a bracket
holds comma-separated numbers and ``lo-hi`` ranges, zero-padded to the width of ``lo``; several
brackets in one name multiply (``r[1-2]n[1-2]`` -> r1n1 r1n2 r2n1 r2n2). Written here, not taken
from python-hostlist (GPL).
"""

from __future__ import annotations

import itertools
import re
from typing import List

__all__ = ["HostlistError", "MAX_HOSTS", "expand"]

MAX_HOSTS = 65536  # a list that would expand past this is refused, not built
_BRACKET = re.compile(r"\[([^\[\]]*)\]")


class HostlistError(ValueError):
    """A host list that is not Slurm's syntax; the message names the part at fault."""


def _numbers(spec: str, text: str) -> List[str]:
    """The names one bracket's ``spec`` (``01-03,7``) stands for, padded to each range's ``lo``."""
    out: List[str] = []
    for part in spec.split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise HostlistError(f"{text!r}: [{spec}] holds {part!r}, not a number or lo-hi range")
        if not sep:
            out.append(lo)
            continue
        if int(hi) < int(lo):
            raise HostlistError(f"{text!r}: range {part!r} runs backwards")
        if int(hi) - int(lo) >= MAX_HOSTS:
            raise HostlistError(f"{text!r}: range {part!r} has more than {MAX_HOSTS} hosts")
        width = len(lo) if lo.startswith("0") else 0
        out.extend(str(i).zfill(width) for i in range(int(lo), int(hi) + 1))
    return out


def _split(text: str) -> List[str]:
    """The comma-separated names of ``text``, commas inside brackets kept."""
    names, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"{text!r}: ']' without '['")
        if ch == "," and depth == 0:
            names.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise HostlistError(f"{text!r}: '[' without ']'")
    return names + [cur]


def expand(text: str) -> List[str]:
    """Every host name of the Slurm host list ``text``, in order, duplicates kept (Slurm keeps
    them too); empty names are dropped. Raises :class:`HostlistError` for a list that is not
    the syntax (an unclosed bracket, a range like ``[a-3]`` or ``[5-1]``) or that names more
    than :data:`MAX_HOSTS` hosts."""
    out: List[str] = []
    for name in _split(text.strip()):
        name = name.strip()
        if not name:
            continue
        pieces = _BRACKET.split(name)  # text, spec, text, spec, ..., text
        if "[" in "".join(pieces[::2]) or "]" in "".join(pieces[::2]):
            raise HostlistError(f"{text!r}: nested or stray brackets in {name!r}")
        choices = [[p] if i % 2 == 0 else _numbers(p, text) for i, p in enumerate(pieces)]
        total = 1
        for c in choices:
            total *= len(c)
        if len(out) + total > MAX_HOSTS:
            raise HostlistError(f"{text!r} names more than {MAX_HOSTS} hosts")
        out.extend("".join(combo) for combo in itertools.product(*choices))
    return out
