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

import linecache
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
# a collective called in a line of Python source: "mx.distributed.all_sum(" / "all_gather("
_CALL = re.compile(
    r"\b(all_sum|all_gather|all_max|all_min|sum_scatter|send|recv|recv_like|barrier)\s*\("
)
# a py-spy frame line: "    function (file.py:12)"
_FRAME = re.compile(r"^\s+(?P<func>\S.*?) \((?P<file>[^():]+):(?P<line>\d+)\)\s*$")
_LIBRARY = ("site-packages", "dist-packages", "/lib/python", "<frozen", "threading.py")


@dataclass
class RankStack:
    """One rank's stacks: ``rank``, ``pid``, ``state`` (psutil's name: ``stopped``,
    ``sleeping`` ...), ``python`` (py-spy's dump text, or None), ``native`` (eu-stack's or
    gdb's text, or None), ``tool_errors`` (tool -> why it gave nothing), ``summary`` (one
    line: where it is blocked), ``where`` (:func:`waiting`, read where the rank runs, so its
    source lines are at hand)."""

    rank: Optional[int]
    pid: int
    state: Optional[str] = None
    python: Optional[str] = None
    native: Optional[str] = None
    native_tool: Optional[str] = None
    tool_errors: Dict[str, str] = field(default_factory=dict)
    summary: str = ""
    where: Optional["Waiting"] = None

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
            "waiting": self.where.to_dict() if self.where else None,
        }


def _state(pid: int) -> Optional[str]:
    try:
        from meshdoctor.proctable import psutil

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
    st.where = waiting(st)
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


# where a thread starts: gdb ("Thread 2 (Thread 0x7f... (LWP 31614) ..."), eu-stack ("TID 31614:"),
# lldb ("* thread #1, queue = ..."), macOS sample ("    2740 Thread_1234   DispatchQueue_1: ...")
_THREAD = re.compile(r"^(?:Thread |TID |\s*\*?\s*thread #\d+|\s+\d+ Thread_\d+)")
# a frame line: gdb and eu-stack ("#0 ..."), lldb ("  * frame #0: 0x... lib`symbol + 8"),
# sample ("    + ! 2740 symbol  (in libmlx.dylib) + 100  [0x...]")
_FRAME_LINE = re.compile(r"^(?:#\d+|\s*\*?\s*frame #\d+:|[\s+!:|]*\d+ \S.*\(in [^)]+\))")
_LLDB_SYMBOL = re.compile(r"frame #\d+:\s+0x[0-9a-f]+\s+[^`\s]+`([A-Za-z_][\w:~<>]*)")
_SAMPLE_SYMBOL = re.compile(r"^[\s+!:|]*\d+ ([A-Za-z_][\w:~<>]*).*\(in [^)]+\)")


def native_threads(text: str) -> List[List[str]]:
    """The threads of a gdb, eu-stack, lldb (``bt all``) or macOS ``sample`` dump, each its
    frame lines, innermost first (``sample`` prints a call tree outermost first: reversed)."""
    threads: List[List[str]] = []
    tree = False
    for ln in text.splitlines():
        if _THREAD.match(ln):
            threads.append([])
            tree = bool(re.match(r"\s+\d+ Thread_", ln))
        elif _FRAME_LINE.match(ln):
            if not threads:
                threads.append([])
            threads[-1].append(ln)
    if tree:
        threads = [list(reversed(t)) for t in threads]
    return threads


def _symbol(frame: str) -> Optional[str]:
    """The function a native frame line names (gdb, eu-stack, lldb or sample)."""
    for rx in (_LLDB_SYMBOL, _SAMPLE_SYMBOL, _NATIVE_FRAME):
        m = rx.search(frame) if rx is _LLDB_SYMBOL else rx.match(frame)
        if m:
            return m.group(1)
    return None


def _mlx_op(text: str) -> Tuple[Optional[str], Optional[str]]:
    """``(operation, backend)`` of the first MLX distributed frame in ``text`` that runs a
    collective (a backend's own threads, such as the ring's socket workers, are no
    collective)."""
    for m in _MLX_DIST.finditer(text):
        backend, method, op = m.group(1), m.group(2), m.group(3)
        name = _OPS.get(op or "", None) or method.replace("_impl", "")
        if _COLLECTIVE.fullmatch(name):
            return name, (backend if backend in _BACKENDS else None)
    return None, None


def native_block(text: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """``(operation, backend, innermost call)`` of the first thread running MLX's distributed
    code: e.g. ``("all_sum", "ring", "recv")`` for a ring all_reduce with SumOp waiting in
    ``recv`` (None for each part not found)."""
    for frames in native_threads(text):
        name, backend = _mlx_op("\n".join(frames))
        if name is None:
            continue
        return name, backend, (_symbol(frames[0]) if frames else None)
    return None, None, None


@dataclass(frozen=True)
class Waiting:
    """Where one rank waits, read from its stacks: ``op`` (the collective: ``all_sum`` ...,
    None when none shows), ``backend`` and ``call`` (the innermost native call), ``site``
    (``file:line`` of the user's innermost Python frame, None when no Python stack) and
    ``function`` (that frame's function)."""

    rank: Optional[int]
    host: Optional[str]
    op: Optional[str]
    backend: Optional[str]
    call: Optional[str]
    site: Optional[str]
    function: Optional[str]

    def who(self) -> str:
        """``rank 1`` (``rank 1 on m2`` with its host), or ``a rank``."""
        who = f"rank {self.rank}" if self.rank is not None else "a rank"
        return who + (f" on {self.host}" if self.host else "")

    def where(self) -> str:
        """``all_sum at train.py:42 (step)``, the parts that are known."""
        what = self.op or "no collective"
        at = (
            f" at {self.site}" + (f" ({self.function})" if self.function else "")
            if self.site
            else ""
        )
        return what + at

    def to_dict(self) -> Dict[str, object]:
        """JSON form."""
        return {
            "rank": self.rank,
            "host": self.host,
            "collective": self.op,
            "backend": self.backend,
            "call": self.call,
            "site": self.site,
            "function": self.function,
        }


def waiting(st: RankStack, host: Optional[str] = None) -> Waiting:
    """Where ``st`` waits: the MLX collective in its native stack (else in MLX frames that
    ``py-spy --native`` put in its Python dump, else one named by a Python frame), the call its
    thread waits in, and the user's innermost Python frame."""
    frames = python_frames(st.python or "")
    where = user_frame(frames)
    op, backend, call = native_block(st.native or "")
    if op is None and st.python:
        op, backend = _mlx_op(st.python)
    if op is None:
        m = _COLLECTIVE.search(" ".join(f[0] for f in frames))
        op = m.group(1) if m else None
    if op is None and where:  # the user's line itself: mx.eval(mx.distributed.all_sum(x))
        m = _CALL.search(linecache.getline(where[1], where[2]))
        op = m.group(1) if m else None
    return Waiting(
        rank=st.rank,
        host=host,
        op=op,
        backend=backend,
        call=call,
        site=f"{where[1]}:{where[2]}" if where else None,
        function=where[0] if where else None,
    )


@dataclass(frozen=True)
class OrderReading:
    """What the stacks of a job's ranks say together: ``ranks`` (each one's
    :class:`Waiting`), ``mismatch`` (True: they wait in different collectives, or in the same
    one from different lines: a collective-order mismatch), ``summary`` (one line)."""

    ranks: Tuple[Waiting, ...]
    mismatch: bool
    summary: str

    def to_dict(self) -> Dict[str, object]:
        """JSON form."""
        return {
            "mismatch": self.mismatch,
            "summary": self.summary,
            "ranks": [w.to_dict() for w in self.ranks],
        }


ORDER_ADVICE = (
    "make every rank call the same collectives in the same order and number (no collective "
    "inside `if rank == ...`, no loop whose length differs by rank; MLX #1210)"
)


def order_reading(
    stacks: Sequence[Union[RankStack, Dict[str, object]]],
) -> Optional[OrderReading]:
    """The reading of a job's stacks (``RankStack`` or their :meth:`RankStack.to_dict` forms,
    with ``host``), the one that ``triage`` (stack dumps given as files), ``triage --running``
    and ``launch --hang-after`` give. None when fewer than two ranks show where they wait, or
    none of them waits in a collective."""
    got: List[Waiting] = []
    stopped: List[Waiting] = []
    for s in stacks:
        if isinstance(s, dict):
            host = s.get("host")
            host = host if isinstance(host, str) else None
            done = s.get("waiting")
            if isinstance(done, dict):  # read on the rank's own host
                w = Waiting(
                    rank=s.get("rank", done.get("rank")),  # type: ignore[arg-type]
                    host=host,
                    op=done.get("collective"),  # type: ignore[arg-type]
                    backend=done.get("backend"),  # type: ignore[arg-type]
                    call=done.get("call"),  # type: ignore[arg-type]
                    site=done.get("site"),  # type: ignore[arg-type]
                    function=done.get("function"),  # type: ignore[arg-type]
                )
            else:
                st = RankStack(
                    s.get("rank"),  # type: ignore[arg-type]
                    int(s.get("pid") or 0),  # type: ignore[call-overload]
                    python=s.get("python"),  # type: ignore[arg-type]
                    native=s.get("native"),  # type: ignore[arg-type]
                )
                w = waiting(st, host)
            state = s.get("state")
        else:
            w, state = (s.where or waiting(s)), s.state
        if state == "stopped":
            stopped.append(w)
        elif w.op or w.site:
            got.append(w)
    if stopped:  # a stopped rank is why the others wait: not an order of the program
        names = ", ".join(w.who() for w in stopped)
        return OrderReading(
            tuple(stopped + got),
            False,
            f"{names} stopped (SIGSTOP or SIGTSTP): the other ranks wait for it in their "
            "collective; resume it (kill -CONT PID) or end the job",
        )
    if len(got) < 2 or not any(w.op for w in got):
        return None
    got.sort(key=lambda w: (w.rank is None, w.rank if w.rank is not None else 0))
    places = {(w.op, w.site) for w in got}
    each = "; ".join(f"{w.who()} waits in {w.where()}" for w in got)
    if len(places) > 1:
        ops = {w.op for w in got}
        how = (
            "different collectives"
            if len(ops) > 1
            else f"the same {got[0].op} from different lines"
        )
        return OrderReading(
            tuple(got),
            True,
            f"collective-order mismatch: {each}: the ranks are in {how}, so each waits for "
            f"peers that are elsewhere and none can go on; {ORDER_ADVICE}",
        )
    w = got[0]
    return OrderReading(
        tuple(got),
        False,
        f"every rank waits in {w.where()}: the same collective from the same line, so not an "
        "order mismatch: the data is not moving (a transport or backend hang, MLX #4475; "
        "compare each rank's native stack)",
    )


def summarise(st: RankStack) -> str:
    """One line: ``stopped (...); blocked in all_sum (ring, recv) at train.py:12 (step)``, from
    the state and :func:`waiting`."""
    parts: List[str] = []
    if st.state == "stopped":
        parts.append("stopped (SIGSTOP or SIGTSTP: it runs no code at all)")
    frames = python_frames(st.python or "")
    w = waiting(st)
    block = ""
    if w.op:
        inner = ", ".join(x for x in (w.backend, w.call) if x)
        block = f"blocked in {w.op}" + (f" ({inner})" if inner else "")
    elif frames:
        block = f"in {frames[0][0]}"
    if w.site:
        block += f" at {w.site} ({w.function})"
    if block:
        parts.append(block.strip())
    if not parts:
        why = "; ".join(st.tool_errors.values())
        parts.append(f"no stack: {why}" if why else "no stack")
    return "; ".join(parts)
