"""Live processes that use MLX (and so Metal on a Mac): who may be holding wired memory.

A process uses MLX when its memory map contains MLX's library (``libmlx.so``/``libmlx.dylib``:
every ``import mlx.core`` loads it), or, when its map cannot be read (another user, macOS without
privileges), when its command line names an MLX program (any word holding ``mlx``, whatever
its case: ``mlx_lm.server``, ``vllm-mlx`` / ``vllm_mlx``, ``rapid-mlx``, ``omlx``,
``mlx.launch``; and ``exo``) or it is a rank (:mod:`meshdoctor.ranks`). Ranks and non-ranks
alike: a single-node ``mlx_lm.server`` has no ``MLX_RANK`` and may hold hundreds of GiB
(mlx-lm PR #1252: sibling vllm-mlx servers held 464 GB wired, freed when one was killed).

Scope: every process on the machine, or only the process trees rooted at the pids listed in
``MESHDOCTOR_ATTRIBUTE_PIDS`` (comma-separated) when it is set: an operator asks "does this job
explain the memory?", and a test reasons only about the processes it started.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set

from meshdoctor.proctable import psutil

from meshdoctor.ranks import PROBE_MARKER_ENV, RANK_ENV_KEYS, own_descendants, protected_pids

SCOPE_ENV = "MESHDOCTOR_ATTRIBUTE_PIDS"
LIB_MARKS = ("libmlx.so", "libmlx.dylib")
# an MLX program named on a command line: "mlx" in any word (mlx_lm, vllm-mlx, omlx, oMLX.app),
# or exo; a false match only makes MD302 say "live MLX process" instead of "reboot"
CMDLINE_MARK = re.compile(r"mlx|(?:^|[/\s])exo(?:$|[\s.])", re.I)


@dataclass
class MlxProcess:
    """A live process using MLX: ``pid``, ``name``, ``rss_bytes`` (resident size), ``rank``
    (MLX_RANK/JACCL_RANK when its environment says so, else None), ``how`` it was identified."""

    pid: int
    name: str
    cmdline: str
    rss_bytes: int
    rank: Optional[str]
    how: str

    def to_dict(self) -> Dict[str, Any]:
        """JSON evidence: pid, name, command line (first 300 characters), resident bytes, rank."""
        return {
            "pid": self.pid,
            "name": self.name,
            "cmdline": self.cmdline[:300],
            "rss_bytes": self.rss_bytes,
            "rank": self.rank,
            "is_rank": self.rank is not None,
            "how": self.how,
        }

    def label(self) -> str:
        """One line for a summary: ``pid N name (rank R, resident X GiB)``."""
        who = f"rank {self.rank}" if self.rank is not None else "not a rank"
        return f"pid {self.pid} {self.name} ({who}, resident {self.rss_bytes / (1 << 30):.1f} GiB)"


def scope_pids(env: Optional[Dict[str, str]] = None) -> Optional[Set[int]]:
    """The pids of the process trees named by ``MESHDOCTOR_ATTRIBUTE_PIDS`` (None when unset)."""
    raw = (env if env is not None else os.environ).get(SCOPE_ENV)
    if raw is None:
        return None
    roots = {int(p) for p in raw.replace(" ", "").split(",") if p.isdigit()}
    out = set(roots)
    for pid in roots:
        try:
            out |= {c.pid for c in psutil.Process(pid).children(recursive=True)}
        except psutil.Error:
            pass
    return out


def scope_env_problem(env: Optional[Dict[str, str]] = None) -> Optional[str]:
    """What is wrong with ``MESHDOCTOR_ATTRIBUTE_PIDS`` (set, but not a comma-separated list of
    at least one pid; :func:`scope_pids` would skip what is not a number), or None."""
    raw = (env if env is not None else os.environ).get(SCOPE_ENV)
    if raw is None:
        return None
    words = raw.replace(" ", "").split(",")
    if not any(words) or not all(w.isdigit() for w in words if w):
        return (
            f"{SCOPE_ENV}={raw!r} is not a list of process ids; set it to pids separated by "
            "commas (e.g. 4242,4243), or unset it to attribute every process"
        )
    return None


def _maps_mlx(proc: psutil.Process, cmdline: str) -> Optional[bool]:
    """True/False whether MLX's library is mapped; None when the map cannot be read.

    Linux reads ``/proc/<pid>/maps`` (cheap). Elsewhere (macOS) reading a map walks every VM
    region of the process, so only Python interpreters and processes whose command line
    mentions mlx are read; any other process counts as not using MLX."""
    path = f"/proc/{proc.pid}/maps"
    try:
        if os.path.exists(path):
            with open(path, "r", errors="replace") as fh:
                return any(m in line for line in fh for m in LIB_MARKS)
        if "python" not in proc.name().lower() and "mlx" not in cmdline.lower():
            return False
        return any(
            any(m in (mm.path or "") for m in LIB_MARKS) for mm in proc.memory_maps(grouped=True)
        )
    except (OSError, psutil.AccessDenied, psutil.ZombieProcess, NotImplementedError):
        return None


def identify(proc: psutil.Process, unreadable: Optional[List[int]] = None) -> Optional[MlxProcess]:
    """An :class:`MlxProcess` when ``proc`` positively uses MLX, else None; never raises for a
    process that vanishes or denies access (its pid is added to ``unreadable`` when access is
    denied: another user's process, read without privileges)."""
    try:
        with proc.oneshot():
            cmd = proc.cmdline()
            try:
                env = proc.environ()
            except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
                env = {}
            rank = next((env[k] for k in RANK_ENV_KEYS if k in env), None)
            text = " ".join(cmd)
            maps = _maps_mlx(proc, text)
            if maps:
                how = f"maps MLX's library ({'/'.join(LIB_MARKS)})"
            elif maps is None and CMDLINE_MARK.search(text):
                how = "command line names an MLX program (memory map unreadable)"
            elif maps is None and (rank is not None or PROBE_MARKER_ENV in env):
                how = "an MLX rank (memory map unreadable)"
            else:
                return None
            return MlxProcess(proc.pid, proc.name(), text, proc.memory_info().rss, rank, how)
    except psutil.AccessDenied:
        if unreadable is not None:
            unreadable.append(proc.pid)
        return None
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None


def find_mlx_processes(
    scope: Optional[Set[int]] = None, unreadable: Optional[List[int]] = None
) -> List[MlxProcess]:
    """Live MLX processes, largest resident size first; never this process, its parents, pid 1
    or the commands a check runs. ``scope``: only these pids (see :func:`scope_pids`);
    ``unreadable`` collects the pids that could not be inspected."""
    skip = protected_pids() | own_descendants()
    out = []
    for proc in psutil.process_iter():
        if proc.pid in skip or (scope is not None and proc.pid not in scope):
            continue
        found = identify(proc, unreadable)
        if found is not None:
            out.append(found)
    return sorted(out, key=lambda p: -p.rss_bytes)
