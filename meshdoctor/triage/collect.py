"""Where triage's inputs come from: files, standard input, crash-report folders (local, or on
every host of a hostfile over ssh, in parallel, each host under a deadline).

Every reader returns :class:`~.findings.Finding` lists and fills an :class:`~.findings.Input`;
none raises for a missing, unreadable, binary or truncated input: the ``Input`` says what went
wrong. Remote reads go through :mod:`meshdoctor.remote` (argument lists, each word quoted, ssh
``BatchMode``) and stream, so a multi-gigabyte remote log is read in bounded memory too.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Sequence, Tuple

from meshdoctor import execute, remote
from meshdoctor.mlx import exits
from meshdoctor.triage import ips, logs
from meshdoctor.triage.findings import Finding, Input

# macOS keeps user crash reports in ~/Library/Logs/DiagnosticReports and system ones in
# /Library/Logs/DiagnosticReports (Apple, "Acquiring crash reports and diagnostic logs").
USER_REPORTS = "Library/Logs/DiagnosticReports"  # relative to the home directory
SYSTEM_REPORTS = "/Library/Logs/DiagnosticReports"
DEFAULT_SINCE_S = 24 * 3600.0
MAX_REPORTS_PER_DIR = 50
HOST_DEADLINE_S = 120.0
STDERR_WAIT_S = 1.0  # after a remote read ended, for ssh's last words on stderr
SEQ_STRIDE = 1 << 40  # seq = input index * SEQ_STRIDE + line number
# What triage reads of a device (/dev/zero, /dev/urandom, a serial line): it may never end, so
# reading stops here and the input is "not assessed" past it (never a go). A pipe or FIFO is read
# to its end however long (``job | meshdoctor triage``: stopping would break the job's pipe,
# SIGPIPE), and a regular file whole; both in bounded memory (:mod:`meshdoctor.triage.logs`).
STREAM_MAX_BYTES = 1 << 30
# Seconds a FIFO may go without a writer before triage gives it up (a FIFO nobody writes to
# would otherwise block its open, and the whole triage, for ever).
WRITER_WAIT_S = 30.0

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.I)
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class Collected:
    """Everything read: ``inputs`` (:class:`Input`), ``findings``, ``unreachable`` hosts
    (host -> reason)."""

    def __init__(self) -> None:
        self.inputs: List[Input] = []
        self.findings: List[Finding] = []
        self.unreachable: Dict[str, str] = {}
        self._lock = threading.Lock()

    def seq_base(self) -> int:
        """The first sequence number for the next input's findings (keeps inputs' findings in
        order)."""
        with self._lock:
            return len(self.inputs) * SEQ_STRIDE

    def add(self, inp: Input, found: List[Finding]) -> None:
        """Add one read input and its findings (thread-safe: inputs are read in parallel)."""
        with self._lock:
            self.inputs.append(inp)
            self.findings.extend(found)


def parse_duration(text: str) -> float:
    """Seconds in ``30m``, ``2h``, ``1d``, ``90`` (s); raises ValueError otherwise."""
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration (use e.g. 90s, 30m, 2h, 1d)")
    return float(m.group(1)) * _UNIT[m.group(2).lower()]


def default_report_dirs() -> List[Path]:
    """The user and system DiagnosticReports folders of this machine."""
    return [Path.home() / USER_REPORTS, Path(SYSTEM_REPORTS)]


def _rank_exit(f: Finding) -> None:
    """Give a ``Node with rank R exited with code C`` finding its rank and exit meaning (the
    exit status decides the role: -15 is mlx.launch's own teardown, a consequence)."""
    g = f.match.groups
    if f.code != "MD657":
        return
    f.rank = int(g["rank"]) if g.get("rank", "").isdigit() else f.rank
    if "signal" in g:  # Open MPI's "exited on signal S": the rank's wait status -S
        e = exits.explain(-int(g["signal"]))
        f.exit = e.to_dict()
        f.role = e.role
        f.match.meaning = (
            f"rank {f.rank} was killed by {exits.signal_name(int(g['signal']))} (Open MPI's "
            f"launcher's report). {f.match.meaning}"
        )
    elif "code" in g:
        try:
            e = exits.explain(int(g["code"]))
        except ValueError:
            return
        f.exit = e.to_dict()
        f.role = e.role
        f.match.meaning = f"rank {f.rank} {e.summary}. {f.match.meaning}"
    else:
        f.role = f.match.role  # "was killed": mlx.launch's teardown


class _Capped:
    """A binary stream read up to ``cap`` bytes; ``cut``: there was more."""

    def __init__(self, raw: BinaryIO, cap: int) -> None:
        self.raw, self.left, self.cut = raw, cap, False

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            self.cut = self.cut or bool(self.raw.read(1))
            return b""
        data = self.raw.read(self.left if n is None or n < 0 else min(n, self.left))
        self.left -= len(data)
        return data


def is_device(stream: Any) -> bool:
    """Whether ``stream`` (a file object with a descriptor) is a character or block device, a
    stream that may never end (``stat(2)``: ``S_ISCHR``, ``S_ISBLK``); False for a regular
    file, FIFO, pipe or socket (each ends: at its size, or when its writers close it)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def is_regular(stream: Any) -> bool:
    """Whether ``stream`` (a file object with a descriptor) is a regular file; False for a
    device, FIFO, pipe, socket, or a stream without a descriptor."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def read_stream(stream: BinaryIO, inp: Input, col: Collected, capped: bool = False) -> None:
    """Scan one log stream into ``col`` to its end; ``capped`` (a device, :func:`is_device`):
    read at most :data:`STREAM_MAX_BYTES` of it, and when there was more mark ``inp`` not
    assessed past that point (``inp.unassessed``: an error result, never a go)."""
    source: Any = _Capped(stream, STREAM_MAX_BYTES) if capped else stream
    found = logs.scan(source, inp, col.seq_base(), on_match=_rank_exit)
    if capped and source.cut:
        inp.unassessed = (
            f"not assessed past {STREAM_MAX_BYTES >> 30} GiB: a device that does not end, "
            f"reading stopped there; what was read is triaged"
        )
        inp.warnings.append(inp.unassessed)
    col.add(inp, found)


def _open_input(path: str) -> Optional[BinaryIO]:
    """``path`` opened for reading in binary; a FIFO is opened without waiting for a writer and
    then waited on for at most :data:`WRITER_WAIT_S` seconds (None: nothing came; a signal
    still stops the wait). Raises OSError."""
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        return open(path, "rb")
    import fcntl
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], WRITER_WAIT_S)
        if not ready:
            os.close(fd)
            return None
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _peek(fh: BinaryIO) -> bytes:
    """The first bytes of a regular file, the file left where it was."""
    head = fh.read(4096)
    fh.seek(0)
    return head


def read_file(path: str, col: Collected, host: Optional[str] = None) -> None:
    """A local log or crash report (``.ips`` by name or by its header line)."""
    inp = Input(
        source=path if host is None else f"{host}:{path}", host=host, rank=logs.rank_from_name(path)
    )
    try:
        fh = _open_input(path)
        if fh is None:
            inp.error = f"a FIFO nobody wrote to within {WRITER_WAIT_S:g} s"
            col.add(inp, [])
            return
        with fh:
            if path.endswith(".ips") or (is_regular(fh) and ips.has_header(_peek(fh))):
                read_report(fh.read(ips.MAX_BYTES), inp, col)
                return
            read_stream(fh, inp, col, capped=is_device(fh))
    except OSError as exc:
        inp.error = f"cannot read: {exc.strerror or exc}"
        col.add(inp, [])


def read_report(data: bytes, inp: Input, col: Collected) -> None:
    """One crash report's bytes into ``col`` (a finding when it is a crash)."""
    inp.kind, inp.bytes, inp.rank = "crash-report", len(data), None
    inp.lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    summary, match, when, warnings = ips.parse(data, inp.source)
    inp.warnings.extend(warnings)
    if summary is not None and match is None:  # read, but nothing of a rank in it (jetsam)
        col.add(inp, [])
        return
    if summary is None or match is None:
        if not data:
            inp.error = "empty file"
        elif not warnings:
            inp.error = "not a crash report"
        else:
            inp.error = "; ".join(warnings)
            inp.warnings.clear()
        col.add(inp, [])
        return
    f = Finding(
        match=match,
        source=inp.source,
        seq=col.seq_base(),
        role=summary.get("role") or match.role,  # a report may say more than its code
        host=inp.host,
        time=when,
        crash=summary,
    )
    inp.findings = 1
    col.add(inp, [f])


def read_report_dirs(dirs: Sequence[Path], since_s: float, col: Collected, explicit: bool) -> None:
    """Crash reports of rank processes (python, mlx, exo) modified in the last ``since_s``
    seconds in ``dirs``; a missing default folder is skipped silently, a missing folder the
    user named is an input error."""
    cutoff = time.time() - since_s
    for d in dirs:
        try:
            entries = sorted(
                (
                    (e.stat().st_mtime, e.path)
                    for e in os.scandir(d)
                    if ips.is_rank_report(e.name) and e.is_file()
                ),
                reverse=True,
            )
        except OSError as exc:
            if explicit:
                col.add(
                    Input(
                        source=str(d),
                        kind="crash-report",
                        error=f"cannot read folder: {exc.strerror or exc}",
                    ),
                    [],
                )
            continue
        for mtime, path in entries[:MAX_REPORTS_PER_DIR]:
            if mtime >= cutoff:
                read_file(path, col)


def stdin_is_piped() -> bool:
    """Whether standard input is a pipe or a redirected file (``... | meshdoctor triage``,
    ``triage < log``): read as ``-`` when no FILE is named (``stat(2)``: ``S_ISFIFO``,
    ``S_ISREG``); a terminal, ``/dev/null`` or a closed stdin is not."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def exit_source(code: int) -> str:
    """The source name of the input that ``--exit-code CODE`` adds."""
    return f"exit status {code}"


def read_exit_code(code: int, col: Collected) -> Tuple[Input, Optional[Finding]]:
    """``--exit-code N``: the job's exit status as the wrapper saw it (mlx.launch's own, most
    often). Returns the input and its finding (None for 0: whether 0 hides a failed rank is
    decided once every input is read, :func:`launcher_zero`)."""
    from meshdoctor import signatures

    e = exits.explain(code, launcher=True)
    inp = Input(source=exit_source(code), kind="exit-code")
    if e.code_md is None:
        col.add(inp, [])
        return inp, None
    m = signatures.make_match(e.code_md, f"exit status {code}", meaning=e.summary)
    f = Finding(
        match=m, source=inp.source, seq=col.seq_base(), role=e.role, exit=e.to_dict(), job=True
    )
    inp.findings = 1
    col.add(inp, [f])
    return inp, f


def launcher_zero(col: Collected) -> None:
    """After ``--exit-code 0``: if any rank failed, say that the 0 hid it (MD660)."""
    from meshdoctor import signatures

    if not col.findings:
        return
    e = exits.explain(0, launcher=True)
    m = signatures.make_match("MD660", "exit status 0", meaning=e.summary)
    col.findings.append(
        Finding(
            match=m,
            source="exit status 0",
            seq=col.seq_base(),
            role=signatures.CONSEQUENCE,
            exit=e.to_dict(),
            job=True,
        )
    )


# ---- remote ----------------------------------------------------------------------------------


def _stream_remote(host: str, path: str, inp: Input, col: Collected, deadline: float) -> None:
    """``cat`` one remote file over ssh and scan its output as it arrives; the ssh process is
    killed (process group, SIGKILL) at ``deadline`` (monotonic)."""
    try:
        proc = remote.popen(host, ["cat", "--", path])
    except (OSError, remote.RemoteError) as exc:
        inp.error = f"cannot start ssh: {exc}"
        col.add(inp, [])
        return
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass

    timer = threading.Timer(max(0.1, deadline - time.monotonic()), kill)
    timer.start()
    try:
        found = logs.scan(proc.stdout, inp, col.seq_base(), on_match=_rank_exit)  # type: ignore
        rc = proc.wait()
        # ssh's own words: what its stderr holds now, never waited on to its end (the host's
        # ssh master may hold that pipe as long as its session lasts: execute.read_until)
        until = min(deadline, time.monotonic() + STDERR_WAIT_S)
        err = execute.read_until(proc.stderr, until).decode("utf-8", "replace")
    finally:
        timer.cancel()
        if proc.poll() is None:
            kill()
            proc.wait()
    if killed.is_set():
        inp.warnings.append("read cut off at the host's deadline")
    if rc != 0 and not killed.is_set():
        if rc == 255:
            col.unreachable.setdefault(host, (err.strip().splitlines() or ["ssh failed"])[-1])
        inp.error = (err.strip().splitlines() or [f"exit {rc}"])[-1][:300]
        found = []
    col.add(inp, found)


def _fetch_host(
    host: str,
    files: Sequence[str],
    report_dirs: Optional[Sequence[str]],
    since_s: float,
    col: Collected,
    budget_s: float,
) -> None:
    deadline = time.monotonic() + budget_s
    hosts = remote.Hosts()

    def left() -> float:
        return max(0.5, deadline - time.monotonic())

    if report_dirs is not None:
        minutes = max(1, int(since_s // 60))
        r = hosts.run(
            host,
            [
                "find",
                *report_dirs,
                "-maxdepth",
                "1",
                "-type",
                "f",
                "(",
                "-name",
                "*.ips",
                "-o",
                "-name",
                f"*{ips.TEXT_SUFFIX}",
                ")",
                "-mmin",
                f"-{minutes}",
            ],
            timeout=min(30.0, left()),
        )
        if host in hosts.unreachable:
            col.unreachable[host] = hosts.unreachable[host]
            return
        paths = [p for p in r.stdout.splitlines() if ips.is_rank_report(p)]
        for p in sorted(paths)[-MAX_REPORTS_PER_DIR:]:
            inp = Input(source=f"{host}:{p}", host=host)
            if p.endswith(ips.TEXT_SUFFIX):  # a crash report as text, read as a log
                _stream_remote(host, p, inp, col, deadline)
                continue
            rr = hosts.run(host, ["head", "-c", str(ips.MAX_BYTES), "--", p], timeout=left())
            if rr.returncode != 0:
                inp.kind = "crash-report"
                inp.error = (rr.stderr.strip().splitlines() or ["could not read"])[-1][:300]
                col.add(inp, [])
                continue
            read_report(rr.stdout.encode("utf-8", "surrogateescape"), inp, col)
    for path in files:
        if host in hosts.unreachable:
            break
        inp = Input(source=f"{host}:{path}", host=host, rank=logs.rank_from_name(path))
        if path.endswith(".ips"):
            rr = hosts.run(host, ["head", "-c", str(ips.MAX_BYTES), "--", path], timeout=left())
            if rr.returncode != 0:
                inp.error = (rr.stderr.strip().splitlines() or ["could not read"])[-1][:300]
                col.add(inp, [])
            else:
                read_report(rr.stdout.encode("utf-8", "surrogateescape"), inp, col)
            continue
        _stream_remote(host, path, inp, col, deadline)
    if host in hosts.unreachable:
        col.unreachable[host] = hosts.unreachable[host]


def fetch_hosts(
    hosts: Sequence[str],
    files: Sequence[str],
    report_dirs: Optional[Sequence[str]],
    since_s: float,
    col: Collected,
    budget_s: float = HOST_DEADLINE_S,
    progress: Optional[Callable[[str], None]] = None,
) -> None:
    """Read ``files`` (paths on each host) and the crash reports in ``report_dirs`` (None: none)
    from every host in parallel, each host within ``budget_s`` seconds."""
    if not hosts:
        return
    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        futs = [
            pool.submit(_fetch_host, h, files, report_dirs, since_s, col, budget_s) for h in hosts
        ]
        for h, fut in zip(hosts, futs):
            try:
                try:
                    fut.result()
                except KeyboardInterrupt:
                    # end every ssh read now: the pool waits for its readers before the
                    # interrupt goes on, and a reader of a FIFO would wait for the deadline
                    execute.stop_all(final=True)
                    raise
            except Exception as exc:  # a reader bug must not lose the other hosts
                col.add(
                    Input(
                        source=f"{h}:", host=h, error=f"internal error: {type(exc).__name__}: {exc}"
                    ),
                    [],
                )
