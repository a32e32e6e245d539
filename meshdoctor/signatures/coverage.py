"""How much of MLX's and NCCL's own error text the catalogue reads: the source-site tables
(``sites/*.tsv``, made by ``tools/extract_sites.py`` from a source checkout and the released
wheels, their provenance in their ``#`` lines) matched row by row through the same
:class:`~meshdoctor.signatures.scanner.Scanner` that ``triage`` uses.

A row's pattern is the text one source site prints, its formatted fields as ``{name}``
wildcards; :func:`sample_lines` fills them with sample values (:data:`SAMPLES`, by the field's
name) and writes the line as the user meets it (:data:`HOW`: the Python exception a C++
exception becomes through nanobind, mlx.launch's ``[WARN]``/``[ERROR]`` and usage error, an
NCCL ``WARN`` with and without its ``host:pid:tid [dev] file:line`` prefix). A row is
*covered* when a signature of its own reads every one of its lines, *generic* when only an
envelope or fallback signature (a component's generic reading, e.g. mlx.error, nccl.warn
without a failure class) reads one of them, *missed* when nothing does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor.signatures.model import Match
from meshdoctor.signatures.scanner import Scanner

TABLES = ("mlx.tsv", "nccl.tsv")

# sample values of the wildcards, by the field's name (the source expression's last word)
SAMPLES: Dict[str, str] = {
    "errno": "22",
    "status": "22",
    "err": "out of memory",
    "err_str": "invalid argument",
    "strerror": "Connection refused",
    "tag": "[jaccl]",
    "ibv_tag": "[jaccl]",
    "action": "Couldn't connect",
    "name": "rdma_en3",
    "host": "node2",
    "ip": "10.0.0.2",
    "port": "5000",
    "ip_port": "10.0.0.2",
    "bk": "tcp",
    "error": "dlopen(librdma.dylib, 1): Symbol not found: _ibv_reg_mr",
    "error_message": "Resource busy",
    "env_var_name": "NCCL_HOST_IP",
    "ssh_hostname": "node2",
    "utf8string": "reason",
    "hostfile": "hosts.json",
    "e": "reason",
    "s": "reason",
    "d": "7",
    "p": "0x7f00",
}
DEFAULT_SAMPLE = "7"
# a field whose sample differs by component (a CUDA call's name, not a device's)
COMPONENT_SAMPLES: Dict[str, Dict[str, str]] = {
    "cuda": {"name": "cudaMallocAsync(&data, size, stream)"},
}

# how a site's text reaches the user -> the line(s) it makes
HOW: Dict[str, Tuple[str, ...]] = {
    "RuntimeError": ("RuntimeError: {}",),
    "ValueError": ("ValueError: {}",),
    "IndexError": ("IndexError: {}",),
    "NotImplementedError": ("NotImplementedError: {}",),
    "stderr": ("{}",),
    "[WARN]": ("[WARN] {}",),
    "[ERROR]": ("[ERROR] {}",),
    "usage error": ("mlx.launch: error: {}",),
    "string": ("RuntimeError: {}",),
    "WARN": ("gpu-node-7:48213:48299 [0] {where} NCCL WARN {}", "NCCL WARN {}"),
}

COVERED, GENERIC, MISSED = "covered", "generic", "missed"


@dataclass(frozen=True)
class Site:
    """One row of a site table: ``component``, ``where`` (file:line or library and version),
    ``how`` (a key of :data:`HOW`), ``pattern`` (``{name}`` wildcards), ``table`` (its file)."""

    component: str
    where: str
    how: str
    pattern: str
    table: str


@dataclass(frozen=True)
class Reading:
    """What the catalogue makes of one :class:`Site`: its ``status`` (covered, generic,
    missed), the ``codes`` that read its lines and the sample ``lines`` tried."""

    site: Site
    status: str
    codes: Tuple[str, ...]
    lines: Tuple[str, ...]


def load(table: str) -> Tuple[List[Site], List[Tuple[str, str]]]:
    """The rows of one packaged table (``mlx.tsv``) and its provenance (``#`` lines as
    ``(key, value)``)."""
    text = resources.files("meshdoctor.signatures").joinpath("sites", table).read_text("utf-8")
    rows, prov = [], []
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition("\t")
            prov.append((key.strip(), value.strip()))
            continue
        parts = line.split("\t")
        if len(parts) != 4 or parts[0] == "component":
            continue
        rows.append(Site(parts[0], parts[1], parts[2], parts[3], table))
    return rows, prov


def fill(pattern: str, samples: Optional[Dict[str, str]] = None) -> str:
    """``pattern`` with each ``{name}`` replaced by its sample value (``{{``/``}}`` are
    literal braces)."""
    table = SAMPLES if samples is None else samples
    out = re.sub(
        r"\{\{|\}\}|\{([^{}]*)\}",
        lambda m: m.group(0)[0] if m.group(1) is None else table.get(m.group(1), DEFAULT_SAMPLE),
        pattern,
    )
    return out


def sample_lines(site: Site) -> Tuple[str, ...]:
    """The lines a user meets for ``site`` (:data:`HOW`), its wildcards filled."""
    text = fill(site.pattern, {**SAMPLES, **COMPONENT_SAMPLES.get(site.component, {})})
    where = site.where.split(":")[0].split("/")[-1] + ":" + (site.where.split(":") + ["1"])[1]
    where = where.split(",")[0]
    return tuple(
        form.replace("{where}", where).replace("{}", text) for form in HOW.get(site.how, ("{}",))
    )


def is_generic(m: Match) -> bool:
    """A match that is only a component's generic reading: an envelope or fallback signature
    whose failure classes (if any) named none here."""
    s = m.signature
    if not (s.envelope or s.fallback is not None):
        return False
    return s.failure_class(m.groups) is None


def read(site: Site) -> Reading:
    """How the catalogue reads ``site``: every sample line through a fresh generic
    :class:`Scanner` (the reader triage uses)."""
    lines = sample_lines(site)
    statuses, codes = [], []
    for line in lines:
        sc = Scanner(generic=True)
        found = sc.feed(1, line) + sc.close()
        codes += [m.code for m in found if m.code not in codes]
        if any(not is_generic(m) for m in found):
            statuses.append(COVERED)
        elif found:
            statuses.append(GENERIC)
        else:
            statuses.append(MISSED)
    status = MISSED if MISSED in statuses else GENERIC if GENERIC in statuses else COVERED
    return Reading(site, status, tuple(codes), lines)


def readings(tables: Sequence[str] = TABLES) -> List[Reading]:
    """The :class:`Reading` of every row of ``tables``, in table order."""
    out = []
    for t in tables:
        rows, _ = load(t)
        out += [read(r) for r in rows]
    return out


def summary(rs: Sequence[Reading]) -> List[Dict[str, object]]:
    """Per table and component: ``rows``, ``covered`` (a reading of its own or generic),
    ``generic``, ``missed``, in first-seen order."""
    by: Dict[Tuple[str, str], Dict[str, object]] = {}
    for r in rs:
        key = (r.site.table.split(".")[0], r.site.component)
        d = by.setdefault(
            key,
            {
                "table": key[0],
                "component": key[1],
                "rows": 0,
                "covered": 0,
                "generic": 0,
                "missed": 0,
            },
        )
        d["rows"] += 1  # type: ignore[operator]
        d["covered" if r.status != MISSED else "missed"] += 1  # type: ignore[operator]
        if r.status == GENERIC:
            d["generic"] += 1  # type: ignore[operator]
    return list(by.values())


def total_line(rs: Sequence[Reading]) -> str:
    """``coverage: N of M source sites (P %), G generic``: N rows read (specific or
    generic), G of them only generically."""
    m = len(rs)
    n = sum(1 for r in rs if r.status != MISSED)
    g = sum(1 for r in rs if r.status == GENERIC)
    pct = 100.0 * n / m if m else 100.0
    return f"coverage: {n} of {m} source sites ({pct:.1f} %), {g} generic"
