"""Slurm's host-list syntax, expanded: ``mac[01-16,20]`` -> mac01 ... mac16, mac20.

The syntax as Slurm documents it (slurm.conf(5), "NodeName"; scontrol(1), "show hostnames"):
a comma-separated list of entries, each a name in which a bracket holds numbers and ranges
``[01-16,20]``; the digits of a range's first number set the width (``[01-16]`` is zero-padded
to 2, ``[8-10]`` is not padded); several brackets in one entry give every combination, the
last bracket varying fastest (``r[1-2]m[1-2]``: r1m1, r1m2, r2m1, r2m2). Written here, not
taken from a library (the widely used ones are GPL). A plain ``a,b,c`` list expands to itself,
so every ``--hosts`` takes both.
"""

from __future__ import annotations

import itertools
from typing import List, Tuple

MAX_HOSTS = 65536  # a list that expands past this is a typo, not a mesh


class HostListError(ValueError):
    """A host list that cannot be expanded; the message says what is wrong and at which
    column (1-based, in the text as given)."""


def _split_top(text: str) -> List[Tuple[int, str]]:
    """The entries of ``text`` split at commas outside brackets, each with its start offset;
    a bracket that is never closed, one inside another, or a ``]`` without its ``[`` raises."""
    entries: List[Tuple[int, str]] = []
    start, opened = 0, -1
    for i, c in enumerate(text):
        if c == "[":
            if opened >= 0:
                raise HostListError(
                    f"'[' at column {i + 1} is inside the bracket opened at column "
                    f"{opened + 1}: brackets do not nest"
                )
            opened = i
        elif c == "]":
            if opened < 0:
                raise HostListError(f"']' at column {i + 1} has no '[' before it")
            opened = -1
        elif c == "," and opened < 0:
            entries.append((start, text[start:i]))
            start = i + 1
    if opened >= 0:
        raise HostListError(f"'[' at column {opened + 1} is never closed")
    entries.append((start, text[start:]))
    return entries


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _numbers(inner: str, at: int) -> List[str]:
    """The numbers a bracket's content ``inner`` (its ``[`` at offset ``at``) stands for, as
    text with their padding."""
    out: List[str] = []
    where = f"in the bracket at column {at + 1}"
    for part in inner.split(","):
        item = part.strip()
        if not item:
            raise HostListError(f"an empty item {where}")
        lo, dash, hi = item.partition("-")
        if not _is_number(lo) or (dash and not _is_number(hi)):
            raise HostListError(f"{item!r} {where} is not a number or a range like 01-16")
        if not dash:
            out.append(lo)
            continue
        first, last = int(lo), int(hi)
        if last < first:
            raise HostListError(f"the range {item!r} {where} goes down ({lo} > {hi})")
        if last - first >= MAX_HOSTS:
            raise HostListError(f"the range {item!r} {where} names more than {MAX_HOSTS} hosts")
        out.extend(str(n).zfill(len(lo)) for n in range(first, last + 1))
    return out


def _entry(entry: str, at: int) -> List[str]:
    """The names one entry (at offset ``at`` of the text) stands for."""
    pieces: List[List[str]] = []
    i = 0
    while i < len(entry):
        j = entry.find("[", i)
        if j < 0:
            pieces.append([entry[i:]])
            break
        k = entry.index("]", j)  # _split_top made sure it is closed
        pieces.append([entry[i:j]])
        pieces.append(_numbers(entry[j + 1 : k], at + j))
        i = k + 1
    count = 1
    for p in pieces:
        count *= len(p)
        if count > MAX_HOSTS:
            raise HostListError(f"the entry at column {at + 1} names more than {MAX_HOSTS} hosts")
    return ["".join(combo) for combo in itertools.product(*pieces)]


def expand(text: str) -> List[str]:
    """Every host name of the host list ``text`` (``mac[01-16,20],studio``), in order, blanks
    around entries stripped. Raises :class:`HostListError` for an empty entry, an unclosed,
    nested or unmatched bracket, a bracket item that is not a number or range, a range that
    goes down, or more than :data:`MAX_HOSTS` names."""
    names: List[str] = []
    for n, (at, raw) in enumerate(_split_top(text)):
        entry = raw.strip()
        if not entry:
            raise HostListError(f"entry {n} (column {at + 1}) is empty")
        offset = at + (len(raw) - len(raw.lstrip()))
        names.extend(_entry(entry, offset))
        if len(names) > MAX_HOSTS:
            raise HostListError(f"the list names more than {MAX_HOSTS} hosts")
    return names
