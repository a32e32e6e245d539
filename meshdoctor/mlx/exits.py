"""What an exit status means, wherever it was seen: a log line (mlx.launch's
``Node with rank R exited with code C``), ``meshdoctor triage --exit-code N``, or the probe.

Conventions (POSIX wait status, ssh(1), bash(1), mlx/_distributed_utils/launch.py):

* negative ``-N``: a *local* process killed by signal N, as Python's subprocess (and so
  mlx.launch) reports it; -15 from mlx.launch is its own SIGTERM of the survivors after one rank
  failed, -9 a SIGKILL it never sends (OOM killer, operator);
* ``128+N`` (129..159): a shell's way of saying "killed by signal N" (137 SIGKILL, 139 SIGSEGV);
* 255: ssh's status when the remote command died of a signal or ssh itself failed; a remote
  rank's native crash shows as 255 through mlx.launch;
* 75: the JACCL progress guard's teardown exit (JACCL_TIMEOUT_ACTION unset);
* 1: an uncaught Python exception, or the NCCL backend's ``exit(1)`` after ``NCCL error`` /
  ``CUDA error``;
* 2: mlx.launch's (argparse's) usage error;
* 126/127: the shell found the command but could not execute it / did not find it (bash(1),
  "EXIT STATUS"): a rank launched with an interpreter path that does not exist on that host
  exits 127;
* 0 from mlx.launch: it exits 0 even when ranks failed, so 0 proves nothing on its own.

Signal numbers 1-6, 8, 9, 11, 13-15 are the same on Linux and macOS; others differ and are named
for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from meshdoctor.codes import model as roles

_COMMON = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
}
_DIFFER = {
    7: "SIGBUS on Linux, SIGEMT on macOS",
    10: "SIGUSR1 on Linux, SIGBUS on macOS",
    12: "SIGUSR2 on Linux, SIGSYS on macOS",
    30: "SIGPWR on Linux, SIGUSR1 on macOS",
    31: "SIGSYS on Linux, SIGUSR2 on macOS",
}
_SIGNAL_MEANING = {
    9: "SIGKILL, which mlx.launch never sends: most often the out-of-memory killer (Linux "
    "`dmesg | grep -i oom`, macOS jetsam in the system log), else an operator or supervisor",
    15: "SIGTERM: mlx.launch sends it to the surviving ranks after one rank failed, so this "
    "rank is usually a consequence; else an operator or supervisor stopped it",
    11: "SIGSEGV: a native crash (on a Mac with JACCL often the Thunderbolt RDMA driver's "
    "tbt_post_recv, mlx #4192, or ibv_reg_mr on a missing device before MLX 0.32.1); look "
    "for a crash report",
    6: "SIGABRT: an abort, typically an uncaught C++ exception (libc++abi: terminating ...; "
    "MLX <= 0.32.0 aborts on JACCL data-path errors)",
    2: "SIGINT: interrupted (Ctrl-C)",
    1: "SIGHUP: the terminal or ssh session went away",
    13: "SIGPIPE: wrote to a closed pipe or socket (a peer or the log reader went away)",
}


def signal_name(n: int) -> str:
    """A signal number's name, e.g. ``SIGKILL``; numbers that differ between Linux and macOS
    name both (``signal 12 (SIGUSR2 on Linux, SIGSYS on macOS)``)."""
    if n in _COMMON:
        return _COMMON[n]
    if n in _DIFFER:
        return f"signal {n} ({_DIFFER[n]})"
    return f"signal {n}"


@dataclass
class ExitMeaning:
    """One exit status explained: ``code`` as seen, ``signal`` (number or None), ``summary``
    (one line), ``code_md`` (the signature code that classifies it, None for a clean 0) and
    ``role`` (:data:`meshdoctor.codes.model.ROLES`)."""

    code: int
    signal: Optional[int]
    summary: str
    code_md: Optional[str]
    role: str

    def to_dict(self) -> Dict[str, object]:
        """JSON form: ``code``, ``signal``, ``summary``, ``signature`` (the MD6xx code) and the rest
        of the fields."""
        return {
            "code": self.code,
            "signal": self.signal,
            "summary": self.summary,
            "signature": self.code_md,
        }


def explain(code: int, *, launcher: bool = False) -> ExitMeaning:
    """Explain exit status ``code``. ``launcher`` says it is mlx.launch's own status (so 0
    proves nothing). Raises nothing for any int."""
    S = roles
    if code < 0:
        n = -code
        why = f"; {_SIGNAL_MEANING[n]}" if n in _SIGNAL_MEANING else ""
        role = S.CONSEQUENCE if n == 15 else (S.CAUSE if n in (9, 11, 6, 7, 10) else S.EITHER)
        return ExitMeaning(
            code, n, f"exit {code}: a local rank killed by {signal_name(n)}{why}", "MD658", role
        )
    if 129 <= code <= 159:
        n = code - 128
        why = f"; {_SIGNAL_MEANING[n]}" if n in _SIGNAL_MEANING else ""
        role = S.CONSEQUENCE if n == 15 else (S.CAUSE if n in (9, 11, 6, 7, 10) else S.EITHER)
        return ExitMeaning(
            code,
            n,
            f"exit {code} = 128 + {n}: killed by {signal_name(n)} (shell convention){why}",
            "MD658",
            role,
        )
    if code == 255:
        return ExitMeaning(
            code,
            None,
            "exit 255: through ssh this is a remote rank that died "
            "of a signal (often a native crash: look for a .ips crash report on "
            "that host) or ssh itself failing to connect",
            "MD618",
            S.EITHER,
        )
    if code == 75:
        return ExitMeaning(
            code,
            None,
            "exit 75: the JACCL progress guard tore the group down "
            "after a peer stopped answering; the peer is the cause",
            "MD622",
            S.CONSEQUENCE,
        )
    if code == 1:
        return ExitMeaning(
            code,
            None,
            "exit 1: an uncaught Python exception, or the NCCL "
            "backend's exit(1) after printing 'NCCL error' or 'CUDA error'",
            "MD659",
            S.EITHER,
        )
    if code == 2 and launcher:
        return ExitMeaning(
            code, None, "exit 2: mlx.launch rejected its arguments", "MD664", S.CAUSE
        )
    if code == 127:
        return ExitMeaning(
            code,
            None,
            "exit 127: the shell did not find the command (bash: command not found); a job "
            "launched without its interpreter exits 127: check that the Python path the ranks "
            "use exists on that host (mlx.launch --python, MESHDOCTOR_REMOTE_PYTHON)",
            "MD664",
            S.CAUSE,
        )
    if code == 126:
        return ExitMeaning(
            code,
            None,
            "exit 126: the shell found the command but could not execute it (not executable, "
            "or a directory): check the permissions of the interpreter or script the ranks run",
            "MD664",
            S.CAUSE,
        )
    if code == 0:
        if launcher:
            return ExitMeaning(
                code,
                None,
                "exit 0 from mlx.launch proves nothing: it exits 0 "
                "even when ranks fail; wrappers must not trust it",
                None,
                S.CONSEQUENCE,
            )
        return ExitMeaning(code, None, "exit 0: success", None, S.CONSEQUENCE)
    return ExitMeaning(
        code, None, f"exit {code}: a non-zero status with no specific meaning", "MD664", S.EITHER
    )
