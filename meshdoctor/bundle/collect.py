"""One host's share of a support bundle, collected on that host: :func:`collect_here`.

Items, in the order they are kept when the host's byte budget runs out: ``check.json`` (this
node's check verdict, ``meshdoctor check --local-only --json``), ``versions.json`` (OS, Python,
MLX, meshdoctor), ``env.txt`` (:func:`meshdoctor.bundle.redact.kept_env`), the raw output of each
tool the checks read (:data:`TOOLS`, those of this platform, all at once under one deadline),
and the newest crash and panic reports modified within ``since_s`` (macOS DiagnosticReports,
Apple "Acquiring crash reports and diagnostic logs"). Every text is scrubbed
(:func:`meshdoctor.bundle.redact.scrub`). Each item is cut at :data:`ITEM_BYTES`, the host's
share at :data:`HOST_BYTES`; the MANIFEST rows say what was collected, cut, missing (a tool
this host does not have) or failed, and why.
"""

from __future__ import annotations

import json
import os
import platform as _platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from meshdoctor import deadline, execute
from meshdoctor.bundle.redact import kept_env, scrub, secret_values

ITEM_BYTES = 1024 * 1024  # one tool's output, one report
HOST_BYTES = 4 * 1024 * 1024  # one host's share (its JSON answer stays well under the fan-out cap)
TOOL_S = 10.0  # each tool's deadline; all run at once
MAX_REPORTS = 5  # the newest crash/panic reports
DARWIN, LINUX = "darwin", "linux"

# (file name, argv, platforms): the tools the checks run, as they run them
TOOLS: Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...]], ...] = (
    ("ibv_devinfo-v.txt", ("ibv_devinfo", "-v"), (DARWIN, LINUX)),
    ("ibv_devices.txt", ("ibv_devices",), (DARWIN, LINUX)),
    ("rdma_ctl-status.txt", ("rdma_ctl", "status"), (DARWIN,)),
    (
        "system_profiler-SPThunderboltDataType.json",
        ("system_profiler", "SPThunderboltDataType", "-json"),
        (DARWIN,),
    ),
    ("ifconfig.txt", ("ifconfig",), (DARWIN, LINUX)),
    ("networksetup-listallhardwareports.txt", ("networksetup", "-listallhardwareports"), (DARWIN,)),
    ("sysctl.txt", ("sysctl", "hw.memsize", "iogpu.wired_limit_mb"), (DARWIN,)),
    ("vm_stat.txt", ("vm_stat",), (DARWIN,)),
    ("pmset-g.txt", ("pmset", "-g"), (DARWIN,)),
    ("sw_vers.txt", ("sw_vers",), (DARWIN,)),
    ("uname-a.txt", ("uname", "-a"), (DARWIN, LINUX)),
    ("ip-addr.txt", ("ip", "addr"), (LINUX,)),
    ("ip-route.txt", ("ip", "route"), (LINUX,)),
    ("nvidia-smi-q.txt", ("nvidia-smi", "-q"), (LINUX,)),
)

COLLECTED, CUT, MISSING, FAILED = "collected", "cut", "missing", "failed"


@dataclass
class HostBundle:
    """One host's share: ``files`` (name inside the host's folder -> bytes) and ``manifest``
    rows (``{"item", "status", "bytes", "detail"}``; status collected, cut, missing or failed)."""

    files: Dict[str, bytes] = field(default_factory=dict)
    manifest: List[Dict[str, Any]] = field(default_factory=list)
    secrets: List[str] = field(default_factory=list, repr=False)  # values never written
    _used: int = 0

    def clean(self, text: str) -> str:
        """``text`` scrubbed (:func:`meshdoctor.bundle.redact.scrub`, this share's secrets)."""
        return scrub(text, secrets=self.secrets)

    def text(self, text: str) -> bytes:
        """``text`` scrubbed, as UTF-8 bytes."""
        return self.clean(text).encode("utf-8", "replace")

    def add(self, name: str, data: bytes, status: str = COLLECTED, detail: str = "") -> None:
        """Keep ``data`` as ``name`` within the item and host budgets (cut, and said, beyond)."""
        room = HOST_BYTES - self._used
        if room <= 0:
            self.note(name, FAILED, f"not kept: the host's {HOST_BYTES} byte budget is spent")
            return
        limit = min(ITEM_BYTES, room)
        if len(data) > limit:
            detail = (detail + "; " if detail else "") + f"cut at {limit} of {len(data)} bytes"
            data, status = data[:limit], CUT
        self.files[name] = data
        self._used += len(data)
        self.manifest.append({"item": name, "status": status, "bytes": len(data), "detail": detail})

    def note(self, name: str, status: str, detail: str) -> None:
        """A MANIFEST row for an item not kept (``missing`` or ``failed``) and why."""
        self.manifest.append({"item": name, "status": status, "bytes": 0, "detail": detail})

    def to_json(self) -> Dict[str, Any]:
        """The share as JSON (files in base64), what a remote host sends back."""
        import base64

        return {
            "files": {k: base64.b64encode(v).decode() for k, v in self.files.items()},
            "manifest": self.manifest,
        }

    @classmethod
    def from_json(cls, doc: Any) -> "HostBundle":
        """The share a remote host sent (:meth:`to_json`); raises ValueError when malformed."""
        import base64

        if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
            raise ValueError("not a bundle share")
        hb = cls()
        for name, b64 in doc["files"].items():
            safe = str(name).replace("\\", "/")
            if safe.startswith("/") or ".." in safe.split("/"):
                raise ValueError(f"unsafe item name {name!r}")
            hb.files[safe] = base64.b64decode(str(b64), validate=True)
        hb.manifest = [m for m in doc.get("manifest") or [] if isinstance(m, dict)]
        return hb


def _check(hb: HostBundle, hostfile_text: Optional[str], timeout: float) -> None:
    argv = [sys.executable, "-m", "meshdoctor", "check", "--local-only", "--json"]
    argv += ["--timeout", f"{timeout:g}"]
    if hostfile_text is not None:
        argv += ["--hostfile", "-"]
    res = execute.run(argv, timeout=timeout * 2 + 10, input=hostfile_text)
    if res.stdout.strip().startswith("{"):
        hb.add("check.json", hb.text(res.stdout))
    else:
        hb.note("check.json", FAILED, hb.clean(res.describe()))


def _versions() -> str:
    from importlib import metadata

    from meshdoctor import __version__
    from meshdoctor.facts.context import current_platform

    def dist(name: str) -> Optional[str]:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    doc = {
        "platform": current_platform(),
        "os": _platform.platform(),
        "machine": _platform.machine(),
        "python": sys.version.split()[0],
        "mlx": dist("mlx"),
        "mlx-metal": dist("mlx-metal"),
        "meshdoctor": __version__,
    }
    return json.dumps(doc, indent=1) + "\n"


def _tools(hb: HostBundle, plat: str) -> None:
    chosen = [(n, argv) for n, argv, plats in TOOLS if plat in plats]
    runs = deadline.outcomes(
        {
            n: (lambda a=argv: execute.run(list(a), TOOL_S, max_bytes=ITEM_BYTES))
            for n, argv in chosen
        },
        TOOL_S + 2.0,
        name="bundle-tools",
    )
    for name, argv in chosen:
        o = runs[name]
        shown = " ".join(argv)
        res = o.value if o.finished else None
        if res is None:
            hb.note(f"tools/{name}", FAILED, f"`{shown}` gave no answer within {TOOL_S:g} s")
        elif res.missing:
            hb.note(f"tools/{name}", MISSING, f"`{shown}`: not on this host")
        elif res.timed_out or res.returncode != 0:
            why = hb.clean(res.describe())
            if res.stdout:
                hb.add(f"tools/{name}", hb.text(res.stdout), FAILED, why + "; partial output kept")
            else:
                hb.note(f"tools/{name}", FAILED, why)
        else:
            hb.add(f"tools/{name}", hb.text(res.stdout), detail=f"`{shown}`")


def report_dirs() -> List[Path]:
    """Where crash and panic reports are: the user's and the system's DiagnosticReports
    (:func:`meshdoctor.triage.collect.default_report_dirs`)."""
    from meshdoctor.triage.collect import default_report_dirs

    return default_report_dirs()


def _is_report(name: str) -> bool:
    from meshdoctor.triage.ips import is_rank_report

    return is_rank_report(name) or name.endswith(".panic")


def _reports(hb: HostBundle, since_s: float, dirs: Sequence[Path]) -> None:
    cutoff = time.time() - since_s
    found = []
    for d in dirs:
        try:
            with os.scandir(d) as it:
                for e in it:
                    if _is_report(e.name) and e.is_file(follow_symlinks=False):
                        mtime = e.stat(follow_symlinks=False).st_mtime
                        if mtime >= cutoff:
                            found.append((mtime, e.path, e.name))
        except OSError:
            continue
    found.sort(reverse=True)
    if not found:
        hb.note("crash/", MISSING, f"no crash or panic report in the last {since_s:g} s")
    for _, path, name in found[:MAX_REPORTS]:
        try:
            with open(path, "rb") as fh:
                data = fh.read(ITEM_BYTES + 1)
        except OSError as exc:
            hb.note(f"crash/{name}", FAILED, f"cannot read: {exc.strerror or exc}")
            continue
        hb.add(f"crash/{name}", hb.text(data.decode("utf-8", "replace")))
    if len(found) > MAX_REPORTS:
        hb.note("crash/", FAILED, f"{len(found) - MAX_REPORTS} older report(s) left out")


def collect_here(
    hostfile_text: Optional[str],
    since_s: float,
    timeout: float = 10.0,
    dirs: Optional[Sequence[Path]] = None,
) -> HostBundle:
    """This host's share: the check verdict (per-check deadline ``timeout`` s), versions, the
    environment that matters, every tool of this platform, crash reports newer than
    ``since_s`` seconds (from ``dirs``, default :func:`report_dirs`)."""
    from meshdoctor.facts.context import current_platform

    hb = HostBundle(secrets=secret_values(os.environ))
    _check(hb, hostfile_text, timeout)
    hb.add("versions.json", hb.text(_versions()))
    env, removed = kept_env(os.environ)
    hb.add(
        "env.txt",
        hb.text("".join(f"{k}={v}\n" for k, v in env.items()) or "# no MLX_*/JACCL_*/NCCL_*\n"),
        detail=f"values removed: {', '.join(removed)}" if removed else "",
    )
    _tools(hb, current_platform())
    _reports(hb, since_s, report_dirs() if dirs is None else dirs)
    return hb
