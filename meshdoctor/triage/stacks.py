"""What each rank of a job is doing: its Python stack (``py-spy dump``) and, where a tool for it
is installed, its native frames (``eu-stack`` from elfutils, else ``gdb -batch``), with a one-line
summary of the collective and the line of the user's code it is blocked in.

py-spy (PyPI ``py-spy``, https://github.com/benfred/py-spy) reads another process's memory, which
needs ptrace rights: the same user and ``kernel.yama.ptrace_scope`` 0 or 1 for a non-child, or
root / CAP_SYS_PTRACE (py-spy's README, "How do I run py-spy in Docker?" and "ptrace"). A stopped
process (SIGSTOP) cannot be suspended again, so its Python stack is read with ``--nonblocking``
and its native frames by the native tool. A ring deadlock shows ranks blocked in
``recvfrom``/``sendto``/``poll`` inside libmlx (MLX #4475).

Every tool runs under its own deadline (:func:`meshdoctor.execute.run`), all ranks at once
(:func:`meshdoctor.deadline.start`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from meshdoctor import execute
from meshdoctor.deadline import start

TOOL_S = 10.0  # each tool's deadline for one process
KEEP_CHARS = 32000  # the stack text kept per tool and rank (the first part)

PTRACE_HELP = (
    "py-spy needs ptrace rights to read another process: run meshdoctor as the ranks' user "
    "with kernel.yama.ptrace_scope 0 or 1 (sysctl kernel.yama.ptrace_scope), or as root / with "
    "CAP_SYS_PTRACE (in a container: --cap-add SYS_PTRACE)"
)
NO_PYSPY = "py-spy is not installed (pip install py-spy): no Python stacks"

# collectives and point-to-point calls of mlx.core.distributed (MLX 0.32 API), as they show in
# Python frames or native symbols
_COLLECTIVE = re.compile(
    r"\b(all_sum|all_gather|all_max|all_min|sum_scatter|reduce_scatter|send|recv|recv_like|"
    r"barrier|all_reduce|broadcast)\b"
)
# a py-spy frame line: "    function (file.py:12)"
_FRAME = re.compile(r"^\s+(?P<func>\S.*?) \((?P<file>[^():]+):(?P<line>\d+)\)\s*$")
_LIBRARY = ("site-packages", "dist-packages", "/lib/python", "<frozen", "threading.py")


@dataclass
class RankStack:
    """One rank's stacks: ``rank``, ``pid``, ``state`` (psutil's name: ``stopped``,
    ``sleeping`` ...), ``python`` (py-spy's dump text, or None), ``native`` (eu-stack's or
    gdb's text, or None), ``tool_errors`` (tool -> why it gave nothing), ``summary`` (one
    line: where it is blocked)."""

    rank: Optional[int]
    pid: int
    state: Optional[str] = None
    python: Optional[str] = None
    native: Optional[str] = None
    native_tool: Optional[str] = None
    tool_errors: Dict[str, str] = field(default_factory=dict)
    summary: str = ""

    def to_dict(self) -> Dict[str, object]:
        """JSON form (the ``launch.stacks`` items of ``verdict.schema.json``)."""
        return {
            "rank": self.rank,
            "pid": self.pid,
            "state": self.state,
            "summary": self.summary,
            "python": self.python,
            "native": self.native,
            "native_tool": self.native_tool,
            "tool_errors": dict(self.tool_errors),
        }


def _state(pid: int) -> Optional[str]:
    try:
        import psutil

        return psutil.Process(pid).status()
    except Exception:
        return None


def _py_spy(spy: str, pid: int, stopped: bool) -> Tuple[Optional[str], Optional[str]]:
    """(dump text, None) or (None, why not)."""
    argv = [spy, "dump", "--full-filenames", "--pid", str(pid)]
    argv += ["--nonblocking"] if stopped else []
    res = execute.run(argv, timeout=TOOL_S)
    if res.ok and res.stdout.strip():
        return res.stdout[:KEEP_CHARS], None
    text = f"{res.stdout}\n{res.stderr}"
    if re.search(r"Permission denied|Operation not permitted|EPERM|ptrace", text, re.I):
        return None, f"{PTRACE_HELP} ({res.describe()})"
    return None, res.describe()


def _native(pid: int) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(text, tool, None) or (None, tool, why not); tool None when none is installed."""
    eu = execute.which("eu-stack")
    if eu:
        res = execute.run([eu, "-p", str(pid)], timeout=TOOL_S)
        if res.stdout.strip():
            return res.stdout[:KEEP_CHARS], "eu-stack", None
        return None, "eu-stack", res.describe()
    gdb = execute.which("gdb")
    if gdb:
        res = execute.run(
            [gdb, "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"],
            timeout=TOOL_S,
        )
        frames = "\n".join(ln for ln in res.stdout.splitlines() if ln.startswith(("#", "Thread")))
        if frames.strip():
            return frames[:KEEP_CHARS], "gdb", None
        return None, "gdb", res.describe()
    return None, None, None


def _one(rank: Optional[int], pid: int, spy: Optional[str], native: bool) -> RankStack:
    st = RankStack(rank, pid, state=_state(pid))
    stopped = st.state == "stopped"
    if spy:
        st.python, why = _py_spy(spy, pid, stopped)
        if why:
            st.tool_errors["py-spy"] = why
    else:
        st.tool_errors["py-spy"] = NO_PYSPY
    if native:
        st.native, st.native_tool, why = _native(pid)
        if why and st.native_tool:
            st.tool_errors[st.native_tool] = why
    st.summary = summarise(st)
    return st


def py_spy() -> Optional[str]:
    """py-spy's path: on PATH, else next to this interpreter (installed in its environment)."""
    import os
    import sys

    found = execute.which("py-spy")
    if found:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return beside if os.access(beside, os.X_OK) else None


def capture(
    pids: Union[Dict[int, int], Sequence[Tuple[Optional[int], int]]], *, native: bool = True
) -> List[RankStack]:
    """The stacks of local rank processes: ``pids`` is rank -> pid, or ``(rank, pid)`` pairs
    (rank None when unknown); all at once, each tool under :data:`TOOL_S`; in the order given
    (a dict: rank order). ``native``: also the native frames (eu-stack, gdb)."""
    spy = py_spy()
    pairs = sorted(pids.items()) if isinstance(pids, dict) else list(pids)
    running = start(
        {i: (lambda r=r, p=p: _one(r, p, spy, native)) for i, (r, p) in enumerate(pairs)},
        name="stacks",
    )
    got = running.wait(2 * TOOL_S + 5.0)
    out = []
    for i, (r, p) in enumerate(pairs):
        o = got[i]
        if o.finished and o.error is None:
            out.append(o.value)
        else:
            st = RankStack(r, p, summary="stack not captured")
            st.tool_errors["meshdoctor"] = (
                f"{type(o.error).__name__}: {o.error}" if o.error else "did not finish in time"
            )
            out.append(st)
    return out


def python_frames(dump: str) -> List[Tuple[str, str, int]]:
    """The frames of the first thread of a py-spy dump, innermost first: ``(function, file,
    line)``."""
    frames: List[Tuple[str, str, int]] = []
    seen_thread = False
    for ln in dump.splitlines():
        if ln.startswith("Thread "):
            if seen_thread:
                break
            seen_thread = True
            continue
        m = _FRAME.match(ln)
        if m and seen_thread:
            frames.append((m.group("func"), m.group("file"), int(m.group("line"))))
    return frames


def user_frame(frames: Sequence[Tuple[str, str, int]]) -> Optional[Tuple[str, str, int]]:
    """The innermost frame outside the libraries (site-packages, the standard library)."""
    return next((f for f in frames if not any(x in f[1] for x in _LIBRARY)), None)


# a native frame of MLX's distributed code: mlx::core::distributed::ring::RingGroup::all_reduce_impl
_MLX_DIST = re.compile(r"mlx::core::distributed::(\w+)::\w+::(\w+)(?:<[^\n]*?(Sum|Max|Min)Op)?")
_OPS = {"Sum": "all_sum", "Max": "all_max", "Min": "all_min"}
_BACKENDS = ("ring", "jaccl", "nccl", "mpi")  # MLX's backend namespaces
# a frame line of gdb ("#0  0x... in recv () from ...", "#0  syscall () at ...") or eu-stack
# ("#0  0x00007f... __libc_recv")
_NATIVE_FRAME = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+\s+(?:in\s+)?)?([A-Za-z_][\w:~<>]*)")


def native_threads(text: str) -> List[List[str]]:
    """The threads of a gdb or eu-stack dump, each its frame lines, innermost first."""
    threads: List[List[str]] = []
    for ln in text.splitlines():
        if ln.startswith(("Thread ", "TID ")):
            threads.append([])
        elif ln.startswith("#"):
            if not threads:
                threads.append([])
            threads[-1].append(ln)
    return threads


def native_block(text: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """``(operation, backend, innermost call)`` of the first thread running MLX's distributed
    code: e.g. ``("all_sum", "ring", "recv")`` for a ring all_reduce with SumOp waiting in
    ``recv`` (None for each part not found)."""
    for frames in native_threads(text):
        joined = "\n".join(frames)
        m = _MLX_DIST.search(joined)
        if not m:
            continue
        backend, method, op = m.group(1), m.group(2), m.group(3)
        backend = backend if backend in _BACKENDS else None
        name = _OPS.get(op or "", None) or method.replace("_impl", "")
        f0 = _NATIVE_FRAME.match(frames[0]) if frames else None
        return name, backend, (f0.group(1) if f0 else None)
    return None, None, None


def summarise(st: RankStack) -> str:
    """One line: ``stopped (...); blocked in all_sum (ring, recv) at train.py:12 (step)``, from
    the state, the MLX collective in the native stack (else one named in the Python stack),
    the call its thread waits in, and the user's innermost Python frame."""
    parts: List[str] = []
    if st.state == "stopped":
        parts.append("stopped (SIGSTOP or SIGTSTP: it runs no code at all)")
    frames = python_frames(st.python or "")
    where = user_frame(frames)
    op, backend, call = native_block(st.native or "")
    if op is None:
        m = _COLLECTIVE.search(" ".join(f[0] for f in frames))
        op = m.group(1) if m else None
    block = ""
    if op:
        inner = ", ".join(x for x in (backend, call) if x)
        block = f"blocked in {op}" + (f" ({inner})" if inner else "")
    elif frames:
        block = f"in {frames[0][0]}"
    if where:
        block += f" at {where[1]}:{where[2]} ({where[0]})"
    if block:
        parts.append(block.strip())
    if not parts:
        why = "; ".join(st.tool_errors.values())
        parts.append(f"no stack: {why}" if why else "no stack")
    return "; ".join(parts)
