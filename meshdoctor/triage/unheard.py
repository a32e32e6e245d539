"""The unheard host of a launcher's combined output: one log of ``mpirun -np N`` (or
``mlx.launch --hosts a,b,c``) in which the ranks' lines carry their host (``[machine1] ...``,
Open MPI's ``[machine1:51234] ...``, prterun's ``... on node machine1``), every host but one
printed something, and the failures printed are only echoes or waits (a Metal GPU timeout of a
collective, ``either``; a rank's exit, ``consequence``). The rank that printed nothing most likely
stalled or died without a word: in mlx #1804 a 64 GB Mac given the same pipeline share of a
105 GB model as two larger ones swapped and stopped answering, while rank 0 timed out waiting
for it. Triage names that host as the suspect with MD691 (:mod:`.silent`'s code: the same
failure seen in one log instead of one log per rank).

The rule (:func:`suspects`): a log read whole, without a warning, holding the launch line (the
world size N, or the host list) and host-tagged lines of at least two hosts, exactly one of the
N unheard (or, with a host list, the hosts not heard by name); no finding of it a ``cause``;
none named by :mod:`.silent`. mlx-lm's memory warning (``[WARNING] Generating with a model that
requires X MB which is close to the maximum recommended size of Y MB``, mlx_lm/generate.py
wired_limit) printed by the hosts heard is quoted as the evidence of memory pressure. Parsing is
pure (:func:`read_text`, :func:`open_mpi_ranks`) and reads the log's head as it was read
(:attr:`meshdoctor.triage.findings.Input.head`); the only I/O, to name the unheard host and
its rank, is a bounded read of the launch line's ``--hostfile`` when it is a relative name of
a regular file in the log's own folder (:func:`_beside`, :func:`head`).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.triage.collect import SEQ_STRIDE
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.silent import CODE, SILENT

HEAD_BYTES = 256 * 1024  # the launch line and the ranks' first lines are at the top of a log

# Open MPI's -np/-n/-c (mpirun(1)), mlx.launch's --hosts list (mlx/_distributed_utils/launch.py)
_MPI_LAUNCH = re.compile(
    r"\b(?:mpirun|mpiexec|prterun)\b.*?\s(?:-np|-n|--np|-c)(?:\s+|=)(?P<n>\d+)\b"
)
_HOSTFILE = re.compile(
    r"\s(?:--hostfile|-hostfile|--machinefile|-machinefile)(?:\s+|=)(?P<path>\S+)"
)
_MLX_HOSTS = re.compile(r"\bmlx\.launch\b.*?\s--hosts(?:\s+|=)(?P<hosts>[\w.,:-]+)")
# a rank's line tagged with its host: [machine1] ..., [machine1:51234] ...; prterun's "on node H"
_TAG = re.compile(r"^\s*\[(?P<host>[A-Za-z][\w.-]*)(?::\d+)?\]")
_NODE = re.compile(r"\bon node (?P<host>[A-Za-z0-9][\w.-]*)")
# bracketed words that are not hosts: MLX components and log levels
_NOT_HOSTS = frozenset(
    "ring jaccl mpi nccl metal distributed malloc cuda warn warning error info debug "
    "critical".split()
)
# mlx_lm/generate.py's wired_limit warning (mlx-lm 0.2x-0.31)
_MEMORY = re.compile(
    r"requires (?P<need>\d+) MB which is close to the maximum recommended size of "
    r"(?P<max>\d+) MB"
)


@dataclass
class Heard:
    """What one combined log says of its ranks: ``size`` (world size from the launch line, or
    None), ``listed`` (hosts of an mlx.launch --hosts list, in order), ``launch`` (that line),
    ``hosts`` (host -> first line number where it printed), ``memory`` (host -> (MB the model
    needs, MB of its recommended working set), from mlx-lm's warning)."""

    size: Optional[int] = None
    listed: Tuple[str, ...] = ()
    launch: str = ""
    hostfile: str = ""
    hosts: Dict[str, int] = field(default_factory=dict)
    memory: Dict[str, Tuple[int, int]] = field(default_factory=dict)


def read_text(text: str) -> Heard:
    """:class:`Heard` of one log's ``text`` (pure)."""
    h = Heard()
    for n, line in enumerate(text.splitlines(), 1):
        if h.size is None:
            m = _MLX_HOSTS.search(line)
            if m:
                h.listed = tuple(x.split(":")[0] for x in m.group("hosts").split(",") if x)
                h.size, h.launch = len(h.listed), line.strip()
                continue
            m = _MPI_LAUNCH.search(line)
            if m:
                h.size, h.launch = int(m.group("n")), line.strip()
                f = _HOSTFILE.search(line)
                h.hostfile = f.group("path") if f else ""
                continue
        host = None
        m = _TAG.match(line)
        if m and m.group("host").lower() not in _NOT_HOSTS and not m.group("host").isupper():
            host = m.group("host")
        else:
            m = _NODE.search(line)
            host = m.group("host") if m else None
        if host is None:
            continue
        h.hosts.setdefault(host, n)
        mem = _MEMORY.search(line)
        if mem:
            h.memory.setdefault(host, (int(mem.group("need")), int(mem.group("max"))))
    return h


def open_mpi_ranks(text: str, size: int) -> Tuple[str, ...]:
    """The host of each of ``size`` ranks (rank order) as Open MPI maps them by slot over the
    hostfile ``text`` (``host slots=N`` lines, ``#`` comments; mpirun(1) "--map-by slot", the
    default for more than two processes); empty when the hostfile has fewer slots (pure)."""
    out: List[str] = []
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        slots = next((w.split("=", 1)[1] for w in words[1:] if w.startswith("slots=")), "1")
        out.extend([words[0]] * (int(slots) if slots.isdigit() else 1))
    return tuple(out[:size]) if len(out) >= size else ()


def _beside(log: str, name: str) -> Optional[str]:
    """The hostfile ``name`` the launch line gives, read only when it is a relative path to a
    regular file inside the log's own folder (a name from a log never leads elsewhere)."""
    if not name or os.path.isabs(name) or name.startswith("~"):
        return None
    folder = os.path.realpath(os.path.dirname(log) or ".")
    path = os.path.realpath(os.path.join(folder, name))
    if os.path.dirname(path) != folder:
        return None
    return head(path)


def head(path: str) -> Optional[str]:
    """The first :data:`HEAD_BYTES` of a regular file, decoded; None for anything else."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _unheard(h: Heard) -> Optional[List[str]]:
    """The hosts (named, or "" for one unnamed) of ``h`` that printed nothing, or None when the
    rule does not hold."""
    if h.size is None or len(h.hosts) < 2:
        return None
    if h.listed:
        missing = [x for x in h.listed if x not in h.hosts]
        return missing if len(missing) == 1 and len(h.hosts) == h.size - 1 else None
    return [""] if len(h.hosts) == h.size - 1 else None


def _meaning(h: Heard, who: str) -> str:
    heard = ", ".join(h.hosts)
    text = (
        f"{SILENT.meaning} Here: the launch line starts {h.size} ranks ({h.launch[:120]}) but "
        f"only {heard} printed anything; {who} printed nothing while the others failed "
        "waiting (their errors are its consequences)"
    )
    if h.memory:
        need = max(n for n, _ in h.memory.values())
        limits = ", ".join(f"{x} {m} MB" for x, (_, m) in h.memory.items())
        text += (
            f"; mlx-lm warned on {', '.join(h.memory)} that the model needs {need} MB against "
            f"their recommended working set ({limits}) and {who} never got that far: it most "
            "likely ran out of memory and stalled (swapping) or was killed. mlx-lm's pipeline "
            "parallelism gives every rank an equal share of the layers (mlx #1804), so a host "
            "with less RAM than the others cannot hold its share"
        )
    return text + "."


def _remedy(who: str, host: str) -> str:
    where = (
        f"`ssh {shlex.quote(host)} meshdoctor triage --crash-reports`"
        if host
        else ("`ssh HOST meshdoctor triage --crash-reports` on that host")
    )
    return (
        f"Look at {who}: its memory pressure and swap, its jetsam or OOM-killer record "
        f"({where}; on Linux `dmesg`: 'Killed process') and how much RAM it has. Give each host "
        "a share that fits its memory: fewer layers on the smaller host (split the pipeline by "
        "RAM, not evenly), hosts of equal RAM, or a smaller quantisation of the model."
    )


def suspects(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD691 findings of combined launcher logs (the rule in the module's docstring) among
    ``inputs`` (in the order read: their index gives each finding's ``seq``) with ``findings``
    of them all (MD691 ones of :mod:`.silent` included)."""
    out: List[Finding] = []
    if any(f.code == CODE for f in findings):
        return out
    for i, inp in enumerate(inputs):
        if inp.kind != "log" or inp.error or inp.warnings or inp.host:
            continue
        own = [f for f in findings if f.source == inp.source and not f.job]
        if not own or any(f.role == signatures.CAUSE for f in own):
            continue
        text = inp.head or None  # the input's first bytes, kept as it was read
        h = read_text(text) if text is not None else None
        missing = _unheard(h) if h is not None else None
        if h is None or not missing:
            continue
        host, rank = missing[0], None
        if not host and h.hostfile and h.size:
            ranks = open_mpi_ranks(_beside(inp.source, h.hostfile) or "", h.size)
            quiet = [(r, x) for r, x in enumerate(ranks) if x not in h.hosts]
            if quiet and len({x for _, x in quiet}) == 1:
                rank, host = quiet[0]
        who = (
            f"{host}{f' (rank {rank})' if rank is not None else ''}"
            if host
            else f"the rank on the host of the hostfile other than {', '.join(h.hosts)}"
        )
        m = signatures.Match(
            code=CODE,
            name=SILENT.name,
            meaning=_meaning(h, who),
            remedy=_remedy(who, host),
            line=f"(no line of {host or 'one rank'} in the log; {len(h.hosts)} of {h.size} "
            "hosts printed)",
            lineno=inp.lines,
            sig=SILENT,
        )
        out.append(
            Finding(
                match=m,
                source=inp.source,
                seq=i * SEQ_STRIDE,
                role=signatures.CAUSE,
                host=host or None,
                rank=rank,
                last_lineno=inp.lines,
            )
        )
    return out
