"""Finding MLX rank processes: the positive identification every check and fix relies on.

A process is a rank when it belongs to this user and
* its environment has ``MLX_RANK`` or ``JACCL_RANK`` set to a rank number (what MLX reads:
  mlx.launch exports ``MLX_RANK``, mlx 0.32.4 ``_distributed_utils/launch.py``; JACCL reads
  ``JACCL_RANK``), or
* its environment has the meshdoctor probe marker ``MESHDOCTOR_PROBE_ID``, or
* it is mlx.launch's own wrapper of a rank: ``bash -c SCRIPT`` (a remote host's login shell
  ``-c SCRIPT``), or the ``ssh -tt ... HOST SCRIPT`` that carries it to a remote host, where
  SCRIPT is, whole, what ``RemoteProcess.make_launch_script`` of mlx 0.32.4 writes (``pidfile=
  $(mktemp); ...; export MLX_RANK=N; cmd=(...); exec "${cmd[@]}"``). Words in an argument are
  never enough: ``grep``, ``less``, ``tail`` or an editor naming that text are not ranks.

Never this process, its parents (a shell that exported ``MLX_RANK`` and ran meshdoctor must not be
listed as a stale rank of itself), or pid 1. Never a command meshdoctor runs, whatever its
parentage: :mod:`meshdoctor.execute` marks each with ``MESHDOCTOR_PARENT_PID`` (the pid of the
meshdoctor that started it, inherited by whatever the command forks), and a process so marked is
left out only when the marker proves it: that pid is this process, or a live meshdoctor process
the marked one descends from, older than it (a forged or leaked marker, or a
leftover of a meshdoctor that died, is a leftover like any other). Nor a meshdoctor process
itself, or a child of this process that has not yet replaced its image (between fork and exec it
still shows this process's command line and environment). Processes whose environment cannot be
read (other users, macOS without privileges) are identified by their launcher shape alone.
"""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass
from typing import List, Optional, Set

from meshdoctor.proctable import psutil

from meshdoctor.execute import PARENT_MARKER_ENV

PROBE_MARKER_ENV = "MESHDOCTOR_PROBE_ID"
RANK_ENV_KEYS = ("MLX_RANK", "JACCL_RANK")
# mlx 0.32.4 _distributed_utils/launch.py RemoteProcess.make_launch_script, whole: the optional
# "stty -echo; " (remote), the pidfile lines, the cd block, the exports, then MLX_RANK and exec
_LAUNCH_SCRIPT = re.compile(
    r'(?:stty -echo; )?pidfile=\$\(mktemp\); echo \$\$ > \$pidfile; printf "%s\\n" \$pidfile; '
    r"if \[\[ -d .+? fi; (?:.*?; )?export MLX_RANK=(\d+); cmd=\(.*\); "
    r'exec "\$\{cmd\[@\]\}"',
    re.DOTALL,
)
_SHELLS = ("bash", "sh", "zsh")  # Popen(executable="/bin/bash"); a remote login shell's -c


def launch_script_rank(arg: str) -> Optional[str]:
    """The rank of ``arg`` when it is, whole, an mlx.launch rank script (module doc), else
    None."""
    m = _LAUNCH_SCRIPT.fullmatch(arg)
    return m.group(1) if m else None


def launcher_rank(cmdline: List[str]) -> Optional[str]:
    """The rank when ``cmdline`` is mlx.launch's wrapper of one: ``SHELL -c SCRIPT`` or
    ``ssh ... -tt ... HOST SCRIPT`` with SCRIPT a whole rank script; None for anything else
    (a reader, a pager or an editor naming the same text)."""
    if len(cmdline) < 3:
        return None
    prog = os.path.basename(cmdline[0]).lstrip("-")
    if prog in _SHELLS and cmdline[1] == "-c" and len(cmdline) == 3:
        return launch_script_rank(cmdline[2])
    if prog == "ssh" and "-tt" in cmdline[1:-2]:
        return launch_script_rank(cmdline[-1])
    return None


def _rank_number(value: Optional[str]) -> bool:
    return value is not None and value.strip().isdigit()


@dataclass
class RankProcess:
    """One identified rank process.

    ``rank``: the value of MLX_RANK/JACCL_RANK (None if unknown); ``marker``: the probe run id or
    None; ``status``: psutil status (``running``, ``sleeping``, ``disk-sleep``, ``zombie``,
    ``stopped``); ``create_time``: epoch seconds; ``cpu_percent``: over a short sample;
    ``reason``: why it was identified; ``ppid``/``parent``: its parent's pid and name (a rank
    whose parent is pid 1 or gone is orphaned: its launcher died).
    """

    pid: int
    name: str
    cmdline: List[str]
    status: str
    create_time: float
    rank: Optional[str] = None
    marker: Optional[str] = None
    reason: str = ""
    cpu_percent: Optional[float] = None
    username: Optional[str] = None
    ppid: Optional[int] = None
    parent: Optional[str] = None

    @property
    def orphaned(self) -> bool:
        """Its launcher is gone: re-parented to pid 1 (or to a subreaper that is not a rank's
        launcher, which psutil cannot tell apart; such ranks read as part of a running job)."""
        return self.ppid in (None, 0, 1)

    @property
    def age_s(self) -> float:
        """Seconds since the process started."""
        return max(0.0, time.time() - self.create_time)

    def to_dict(self) -> dict:
        """JSON evidence: pid, name, command line (300 characters), status, age, rank, marker,
        reason, CPU percent, parent pid and name, orphaned."""
        return {
            "pid": self.pid,
            "name": self.name,
            "cmdline": " ".join(self.cmdline)[:300],
            "status": self.status,
            "age_s": round(self.age_s, 1),
            "rank": self.rank,
            "marker": self.marker,
            "reason": self.reason,
            "cpu_percent": self.cpu_percent,
            "ppid": self.ppid,
            "parent": self.parent,
            "orphaned": self.orphaned,
        }


def protected_pids() -> Set[int]:
    """This process, its ancestors and pid 1: never listed, never signalled."""
    out = {0, 1, os.getpid()}
    try:
        for p in psutil.Process().parents():
            out.add(p.pid)
    except psutil.Error:
        pass
    return out


def _task_children(pid: int) -> Optional[List[int]]:
    """The pids of ``pid``'s children from ``/proc/PID/task/TID/children`` of each of its
    threads (proc(5): Linux 3.5 with CONFIG_PROC_CHILDREN): a few small reads, where psutil's
    ``children()`` reads the stat file of every process. None where the file does not exist
    (another kernel, another OS)."""
    base = f"/proc/{pid}/task"
    if not os.path.exists(f"{base}/{pid}/children"):
        return None
    out: List[int] = []
    try:
        tids = os.listdir(base)
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"{base}/{tid}/children", "rb") as fh:
                out.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):  # a thread that just ended
            continue
    return out


def children(pid: Optional[int] = None, recursive: bool = False) -> List[psutil.Process]:
    """The child processes of ``pid`` (default this one), their children too when
    ``recursive``, as psutil's ``Process.children`` gives them, read from
    :func:`_task_children` where the kernel lists them (a child forked while it is read may be
    missed: read again), else from psutil. Raises psutil.NoSuchProcess for a ``pid`` gone."""
    root = psutil.Process(pid)
    if _task_children(root.pid) is None:
        return root.children(recursive=recursive)
    out: List[psutil.Process] = []
    todo, seen = [root.pid], {root.pid}
    while todo:
        for c in _task_children(todo.pop()) or ():
            if c in seen:
                continue
            seen.add(c)
            try:
                out.append(psutil.Process(c))
            except psutil.Error:
                continue
            if recursive:
                todo.append(c)
    return out


def own_descendants() -> Set[int]:
    """Pids of this process's children and their children (the commands checks run)."""
    try:
        return {p.pid for p in children(recursive=True)}
    except psutil.Error:
        return set()


def _current_user() -> Optional[str]:
    try:
        return psutil.Process().username()
    except psutil.Error:
        return None


def _is_meshdoctor(cmdline: List[str]) -> bool:
    """The command line runs meshdoctor: its console script, or ``python -m meshdoctor``."""
    if not cmdline:
        return False
    if os.path.basename(cmdline[0]) == "meshdoctor":
        return True
    args = cmdline[1:]
    if args[:1] and os.path.basename(args[0]) == "meshdoctor":
        return True
    return any(a == "-m" and b in ("meshdoctor", "meshdoctor.cli") for a, b in zip(args, args[1:]))


def marked_by_live_meshdoctor(proc: psutil.Process, env: dict) -> bool:
    """``proc`` (whose environment is ``env``) is a command a meshdoctor still running started,
    proven: ``MESHDOCTOR_PARENT_PID`` names a live process created no later than ``proc`` (a pid
    reused after the marking meshdoctor died belongs to a younger process) that is this process,
    or a meshdoctor process ``proc`` descends from (a marker copied into another process's
    environment, forged or leaked, proves nothing). A probe rank (it carries ``MESHDOCTOR_PROBE_ID``) is never
    such a command."""
    value = env.get(PARENT_MARKER_ENV)
    if not value or PROBE_MARKER_ENV in env:
        return False
    try:
        pid = int(value)
        if pid <= 1:
            return False
        marker = psutil.Process(pid)
        if marker.create_time() > proc.create_time() + 0.01:
            return False
        if pid == os.getpid():  # we started it (a child that called setsid is still ours)
            return True
        return _is_meshdoctor(marker.cmdline()) and any(p.pid == pid for p in proc.parents())
    except (ValueError, psutil.Error):
        return False


@functools.lru_cache(maxsize=1)
def _own_cmdline() -> tuple:
    try:
        return tuple(psutil.Process().cmdline())
    except psutil.Error:
        return ()


def _not_yet_exec(proc: psutil.Process, cmdline: List[str]) -> bool:
    """A child of this process that still runs this process's image (between fork and exec)."""
    try:
        return proc.ppid() == os.getpid() and tuple(cmdline) == _own_cmdline()
    except psutil.Error:
        return False


@functools.lru_cache(maxsize=256)
def _uid_name(uid: int) -> str:
    """The account name of ``uid`` as psutil's ``Process.username()`` gives it (the uid itself
    when no account has it), looked up once per uid (pwd(3): one read of the account database
    per call)."""
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _username(proc: psutil.Process) -> str:
    if not hasattr(os, "getuid"):  # pragma: no cover - not a POSIX system
        return proc.username()
    return _uid_name(proc.uids().real)


_ENV_NEEDLES = tuple(
    k.encode() + b"=" for k in RANK_ENV_KEYS + (PROBE_MARKER_ENV, PARENT_MARKER_ENV)
)


def _environ(proc: psutil.Process) -> dict:
    """``proc``'s environment as psutil's ``Process.environ()`` gives it, or ``{}`` when its
    block (``/proc/PID/environ``, proc(5)) names none of the variables :func:`identify` reads:
    most processes of a node, whose environment is then not parsed. Raises what
    ``Process.environ()`` raises."""
    try:
        with open(f"/proc/{proc.pid}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:  # another OS, access denied, gone: psutil's answer (or its exception)
        return proc.environ()
    if not any(n in raw for n in _ENV_NEEDLES):
        return {}
    return proc.environ()


def identify(proc: psutil.Process, user: Optional[str] = None) -> Optional[RankProcess]:
    """A :class:`RankProcess` when ``proc`` is positively a rank of ``user``, else None (also for
    a command a live meshdoctor runs, a meshdoctor process, and this process's forked children
    before their exec: see the module doc)."""
    try:
        with proc.oneshot():
            uname = _username(proc)
            if user is not None and uname != user:
                return None
            cmdline = proc.cmdline()
            if _is_meshdoctor(cmdline) or _not_yet_exec(proc, cmdline):
                return None
            try:
                env = _environ(proc)
            except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
                env = {}
            if marked_by_live_meshdoctor(proc, env):
                return None
            key = next((k for k in RANK_ENV_KEYS if _rank_number(env.get(k))), None)
            rank = env[key].strip() if key else None
            marker = env.get(PROBE_MARKER_ENV)
            reason = ""
            if marker is not None:
                reason = f"environment has {PROBE_MARKER_ENV}={marker}"
            elif key is not None:
                reason = f"environment has {key}={rank}"
            else:
                rank = launcher_rank(cmdline)
                if rank is not None:
                    reason = "mlx.launch's wrapper of rank " + rank
            if not reason:
                return None
            ppid = proc.ppid()
            try:
                parent = psutil.Process(ppid).name() if ppid > 0 else None
            except psutil.Error:
                parent, ppid = None, None
            return RankProcess(
                pid=proc.pid,
                name=proc.name(),
                cmdline=cmdline,
                status=proc.status(),
                create_time=proc.create_time(),
                rank=rank,
                marker=marker,
                reason=reason,
                username=uname,
                ppid=ppid,
                parent=parent,
            )
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def find_ranks(
    marker: Optional[str] = None,
    *,
    sample_cpu_s: float = 0.0,
    skip_descendants: bool = False,
    any_user: bool = False,
) -> List[RankProcess]:
    """Every rank process of this user (see module doc), sorted by pid.

    ``marker``: only ranks whose ``MESHDOCTOR_PROBE_ID`` equals it. ``skip_descendants``: also
    leave out this process's children and theirs as listed once at the start (commands
    meshdoctor runs are left out anyway, by their marker, at the moment each is inspected; this
    is for children started by other means). ``sample_cpu_s``: when > 0,
    measure each rank's CPU % over that many seconds (one shared sleep). Never raises for
    processes that vanish or deny access while being read. ``any_user``: ranks of every user,
    not only this one's (for root, whose fixes may stop another user's identified ranks).
    """
    user = None if any_user else _current_user()
    skip = protected_pids()
    if skip_descendants:  # commands a check runs inherit the shell's MLX_RANK: not ranks
        skip |= own_descendants()
    found: List[RankProcess] = []
    procs = {}
    for proc in psutil.process_iter():
        if proc.pid in skip:
            continue
        rp = identify(proc, user)
        if rp is None or (marker is not None and rp.marker != marker):
            continue
        found.append(rp)
        procs[rp.pid] = proc
    if sample_cpu_s > 0 and found:
        for rp in found:
            try:
                procs[rp.pid].cpu_percent(None)
            except psutil.Error:
                pass
        time.sleep(sample_cpu_s)
        for rp in found:
            try:
                rp.cpu_percent = procs[rp.pid].cpu_percent(None)
            except psutil.Error:
                rp.cpu_percent = None
    return sorted(found, key=lambda r: r.pid)


def family(rank: RankProcess) -> List[RankProcess]:
    """The processes below ``rank`` (its children and theirs), each as a :class:`RankProcess`
    whose ``reason`` names the rank they belong to, sorted by pid: a wrapper a rank runs its
    command under is stopped with that command, in one plan. Processes that vanish are left
    out; this process and its parents never appear."""
    skip = protected_pids()
    out = []
    try:
        kids = psutil.Process(rank.pid).children(recursive=True)
    except psutil.Error:
        return []
    for proc in kids:
        if proc.pid in skip:
            continue
        try:
            with proc.oneshot():
                cmdline = proc.cmdline()
                if _is_meshdoctor(cmdline):
                    continue
                try:
                    env = proc.environ()
                except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
                    env = {}
                key = next((k for k in RANK_ENV_KEYS if _rank_number(env.get(k))), None)
                ppid = proc.ppid()
                out.append(
                    RankProcess(
                        pid=proc.pid,
                        name=proc.name(),
                        cmdline=cmdline,
                        status=proc.status(),
                        create_time=proc.create_time(),
                        rank=env[key].strip() if key else rank.rank,
                        reason=f"runs under rank pid {rank.pid}",
                        username=proc.username(),
                        ppid=ppid,
                        parent=psutil.Process(ppid).name() if ppid > 0 else None,
                    )
                )
        except psutil.Error:
            continue
    return sorted(out, key=lambda r: r.pid)


def send_signal(pid: int, sig: int, *, group: bool = False) -> str:
    """Send ``sig`` to ``pid`` (to its whole process group when ``group`` and it leads one).

    Refuses pid 1, this process, its parents and this process's own group (meshdoctor's rule for
    every signal meshdoctor sends). Returns the outcome as text: ``sent``, ``already gone``,
    ``refused: protected process`` or ``failed: <reason>``; never raises.
    """
    if pid <= 1 or pid in protected_pids() or (group and pid == os.getpgrp()):
        return "refused: protected process"
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
        return "sent"
    except ProcessLookupError:
        return "already gone"
    except PermissionError as exc:
        return f"failed: {exc}"
