"""When a host booted: the fact auto-setup's receipts are keyed on.

macOS: ``sysctl -n kern.boottime`` prints ``{ sec = 1732950000, usec = 123456 } Sat Nov 30
07:40:00 2024`` (sysctl(8), ``KERN_BOOTTIME`` in ``<sys/sysctl.h>``); elsewhere psutil's
``boot_time()`` (seconds since the epoch). Run as ``python -m meshdoctor.facts.boottime`` it prints
``{"boot_time": <seconds>}``: that is how a host is asked over ssh.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from meshdoctor import execute
from meshdoctor.facts.context import current_platform

KERN_BOOTTIME = ["sysctl", "-n", "kern.boottime"]
_SEC = re.compile(r"sec\s*=\s*(\d+)\s*,\s*usec\s*=\s*(\d+)")


class BootTimeError(RuntimeError):
    """The boot time could not be read; the message names the command and what it printed."""


def parse_kern_boottime(text: str) -> float:
    """Seconds since the epoch from ``sysctl -n kern.boottime`` output; raises
    :class:`BootTimeError` when the ``{ sec = S, usec = U }`` part is missing."""
    m = _SEC.search(text or "")
    if not m:
        raise BootTimeError(f"`sysctl -n kern.boottime` printed no boot time: {text[:120]!r}")
    return int(m.group(1)) + int(m.group(2)) / 1e6


def boot_time(platform: Optional[str] = None, timeout: float = execute.DEFAULT_TIMEOUT_S) -> float:
    """This host's boot time in seconds since the epoch (see module doc). Raises
    :class:`BootTimeError` when macOS's sysctl fails or hangs past ``timeout`` seconds."""
    if (platform or current_platform()) == "darwin":
        r = execute.run(KERN_BOOTTIME, timeout=timeout)
        if not r.ok:
            raise BootTimeError(r.describe())
        return parse_kern_boottime(r.stdout)
    from meshdoctor.proctable import psutil

    return float(psutil.boot_time())


def main() -> int:
    try:
        print(json.dumps({"boot_time": boot_time()}))
        return 0
    except BootTimeError as exc:
        print(json.dumps({"error": str(exc)}))
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
