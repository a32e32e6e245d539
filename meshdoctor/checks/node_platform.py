"""MD101 platform: operating system and version, architecture, Python.

Thresholds (MLX distributed docs and release notes, mlx 0.30.1-0.30.6): JACCL needs macOS >= 26.2 and Thunderbolt 5; JACCL buffers above
4 KiB need macOS >= 26.3. On macOS the version comes from ``sw_vers`` (``ProductVersion:`` and
``BuildVersion:`` lines); Apple silicon is ``arm64``.
"""

from __future__ import annotations

import platform as _platform
import sys

from meshdoctor.checker.model import Check, Doc, error, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.parsers.macos import parse_sw_vers, version_tuple

JACCL_MIN_MACOS = (26, 2)
LARGE_BUFFERS_MACOS = (26, 3)
MIN_PYTHON = (3, 10)  # mlx 0.30-0.32.4 wheels: Requires-Python >=3.10 (PyPI metadata)


def gather_platform(ctx: NodeContext) -> dict:
    """Facts: ``os``, ``os_version``, ``build``, ``arch``, ``python`` (strings)."""
    info = {"os": ctx.platform, "arch": _platform.machine(), "python": _platform.python_version()}
    if ctx.is_mac:
        res = ctx.command("sw_vers")
        info["sw_vers"] = res.describe() if not res.ok else "ok"
        if res.ok:
            sv = parse_sw_vers(res.stdout)
            info.update(os_version=sv.get("ProductVersion", ""), build=sv.get("BuildVersion", ""))
        res = ctx.command("uname", "-m")
        if res.ok and res.stdout.strip():
            info["arch"] = res.stdout.strip()
    else:
        info["os_version"] = _platform.release()
    return info


def run(ctx: NodeContext):
    info = ctx.fact(gather_platform)
    if sys.version_info < MIN_PYTHON:
        yield fail(
            f"Python {info['python']} is too old; meshdoctor and MLX need >= "
            f"{'.'.join(map(str, MIN_PYTHON))}",
            evidence=info,
        )
    if not ctx.is_mac:
        yield ok(
            f"{ctx.platform} {info.get('os_version', '')} on {info['arch']}, "
            f"Python {info['python']}",
            evidence=info,
        )
        return
    if not info.get("os_version"):
        yield error(
            f"could not read the macOS version: {info['sw_vers']}",
            evidence=info,
            remediation="Run `sw_vers` by hand; JACCL needs macOS 26.2 or later.",
        )
        return
    ver = version_tuple(info["os_version"])
    label = f"macOS {info['os_version']} ({info.get('build', '?')}) on {info['arch']}"
    uses_jaccl = ctx.hostfile is not None and ctx.hostfile.effective_backend in JACCL_BACKENDS
    if info["arch"] != "arm64":
        yield warn(f"{label}: not Apple silicon; JACCL and Metal need arm64", evidence=info)
    if ver < JACCL_MIN_MACOS:
        finding = fail if uses_jaccl else warn
        yield finding(
            f"{label}: JACCL (RDMA over Thunderbolt) needs macOS 26.2 or later",
            evidence=info,
            remediation="Update macOS to 26.2 or later on every node, or use the ring backend.",
        )
    elif ver < LARGE_BUFFERS_MACOS:
        yield warn(
            f"{label}: JACCL buffers above 4 KiB need macOS 26.3; bandwidth is limited",
            evidence=info,
            remediation="Update macOS to 26.3 or later on every node.",
        )
    else:
        yield ok(f"{label}, Python {info['python']}", evidence=info)


CHECK = Check(
    code="MD101",
    name="node.platform",
    title="Platform",
    run=run,
    doc=Doc(
        meaning="""
Reads the operating system, its version and build, the CPU architecture and Python. An older
macOS than JACCL needs fails this check when the hostfile uses a jaccl backend and warns
otherwise. On Linux the kernel release is reported.
""",
        why="""
JACCL (RDMA over Thunderbolt 5) needs macOS 26.2 or later; its buffers above 4 KiB need macOS
26.3 (mlx 0.30.6 release notes).
""",
        action="Update macOS on every node of the mesh to the same release, 26.3 or later.",
        sources=(
            "mlx 0.30.6 release notes (macOS 26.3 for buffers above 4 KiB)",
            "MLX distributed documentation (JACCL needs macOS 26.2)",
        ),
    ),
)
