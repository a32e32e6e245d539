"""The active verbs probe: open each RDMA device and allocate a protection domain, then free it.

The passive readers (:mod:`meshdoctor.facts.verbs`) list devices and read port states; a device
can pass them all (listed, PORT_ACTIVE) and still refuse ``ibv_alloc_pd``: on macOS after boot,
until the Thunderbolt 5 cable is replugged (exo PR #1467, which probes ``ibv_alloc_pd`` for that
reason); JACCL then crashes registering memory against a null protection domain (SIGSEGV in
``ibv_reg_mr``, exo issue #2186). This probe does what a rank does first: ``ibv_open_device``
and ``ibv_alloc_pd`` on each device, then ``ibv_dealloc_pd`` and ``ibv_close_device``: through
pyverbs (``pyverbs.device.Context``, ``pyverbs.pd.PD``, rdma-core) where it imports, else
through ctypes on the verbs library itself (``libibverbs``; on macOS ``librdma.dylib``, the
library JACCL loads, as exo PR #1467 does; :data:`VERBS_LIBRARY_ENV` names another).

It runs in a child process under the command deadline (``ctx.command``): a verbs
call into a wedged driver does not return, and a thread could not be stopped. The child prints
one JSON line as it starts each step and one per result, so that when it is killed the device
and the step it hung in are known. The interpreter is this one when it imports pyverbs, else
the system interpreter with the OS package (:func:`meshdoctor.facts.verbs._system_python`, as
the passive reader does), else this one; on Linux it is not started where sysfs lists no RDMA
device (:func:`meshdoctor.facts.verbs.sysfs_shortcut`). Neither pyverbs nor the library loads
-> state ``absent``. A simulated Mac (``MESHDOCTOR_PLATFORM``) is not probed: its library is
not this machine's.
"""

from __future__ import annotations

import errno as _errno
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from meshdoctor.facts import verbs
from meshdoctor.facts.context import NodeContext, hang_proven
from meshdoctor.parsers import json_text

# the verbs library the child loads through ctypes when pyverbs does not import: a name for
# ctypes.util.find_library (default ``rdma`` on macOS, ``ibverbs`` elsewhere) or a path; '' = none
VERBS_LIBRARY_ENV = "MESHDOCTOR_VERBS_LIBRARY"
OK, ABSENT, NO_RDMA, TIMED_OUT, UNREADABLE = "ok", "absent", "no_rdma", "timed_out", "unreadable"

# The child: stdlib, and pyverbs or libibverbs through ctypes. argv: the device names to probe
# (none: every listed one).
_CHILD = r"""
import json, os, sys
def out(**kw):
    print(json.dumps(kw), flush=True)
def code(exc):
    c = getattr(exc, "error_code", None)
    return c if isinstance(c, int) and c > 0 else None
class VerbsError(Exception):
    def __init__(self, call, err):
        super().__init__(call + " failed: " + (os.strerror(err) if err else "no errno"))
        self.error_code = err
try:
    import pyverbs.device as d
    import pyverbs.pd as p
    binding = "pyverbs"
    def listed_names():
        return [x.name.decode() if isinstance(x.name, bytes) else str(x.name)
                for x in d.get_device_list()]
    def open_device(name):
        return d.Context(name=name)
    def alloc_pd(ctx):
        return p.PD(ctx)
    def free(pd, ctx):
        pd.close()
        ctx.close()
except Exception as exc:
    why = "pyverbs: " + type(exc).__name__ + ": " + str(exc)
    import ctypes, ctypes.util
    want = sys.argv[1]
    lib_name = want if "/" in want else want and ctypes.util.find_library(want)
    if not lib_name:
        out(importable=False, error=why + "; no verbs library for ctypes"
            + (" (lib" + want + " not found)" if want else ""))
        sys.exit(0)
    binding = "ctypes " + lib_name
    try:
        lib = ctypes.CDLL(lib_name, use_errno=True)
        P = ctypes.c_void_p
        lib.ibv_get_device_list.restype = ctypes.POINTER(P)
        lib.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.ibv_get_device_name.restype = ctypes.c_char_p
        lib.ibv_get_device_name.argtypes = [P]
        lib.ibv_open_device.restype = P
        lib.ibv_open_device.argtypes = [P]
        lib.ibv_alloc_pd.restype = P
        lib.ibv_alloc_pd.argtypes = [P]
        lib.ibv_dealloc_pd.argtypes = [P]
        lib.ibv_close_device.argtypes = [P]
    except Exception as exc2:
        out(importable=False, error=why + "; " + lib_name + ": " + str(exc2))
        sys.exit(0)
    by_name = {}
    def listed_names():
        n = ctypes.c_int(0)
        lst = lib.ibv_get_device_list(ctypes.byref(n))
        if not lst:
            raise VerbsError("ibv_get_device_list", ctypes.get_errno())
        for i in range(n.value):
            by_name[lib.ibv_get_device_name(lst[i]).decode("utf-8", "replace")] = lst[i]
        return list(by_name)
    def open_device(name):
        ctx = lib.ibv_open_device(by_name[name])
        if not ctx:
            raise VerbsError("ibv_open_device", ctypes.get_errno())
        return ctx
    def alloc_pd(ctx):
        pd = lib.ibv_alloc_pd(ctx)
        if not pd:
            err = ctypes.get_errno()
            lib.ibv_close_device(ctx)
            raise VerbsError("ibv_alloc_pd", err)
        return pd
    def free(pd, ctx):
        lib.ibv_dealloc_pd(pd)
        lib.ibv_close_device(ctx)
out(importable=True, binding=binding)
try:
    out(step="ibv_get_device_list")
    listed = listed_names()
except Exception as exc:
    out(list_error=type(exc).__name__ + ": " + str(exc), errno=code(exc))
    sys.exit(0)
out(listed=listed)
for name in sys.argv[2:] or listed:
    if name not in listed:
        out(device=name, result="missing")
        continue
    step = "ibv_open_device"
    out(device=name, step=step)
    try:
        ctx = open_device(name)
        step = "ibv_alloc_pd"
        out(device=name, step=step)
        pd = alloc_pd(ctx)
        step = "ibv_dealloc_pd"
        free(pd, ctx)
    except Exception as exc:
        out(device=name, result="error", step=step, errno=code(exc),
            error=type(exc).__name__ + ": " + str(exc))
        continue
    out(device=name, result="ok")
"""


@dataclass
class PdProbe:
    """What the probe found.

    ``state``: ``ok`` (the child ran: see ``devices``), ``absent`` (pyverbs imports nowhere),
    ``no_rdma`` (no device list: ``detail``), ``timed_out`` (the child overran the deadline;
    ``hang`` when that proves a hang, :func:`meshdoctor.facts.context.hang_proven`),
    ``unreadable`` (it crashed or printed nothing readable). ``devices``: one dict per device
    in probe order, ``{"device", "result": "ok"|"error"|"missing"|"hung"|"not_probed",
    "step", "errno", "errno_name", "error"}`` (the last four for ``error``/``hung``);
    ``listed``: the device list the child read; ``python``: the interpreter; ``binding``:
    ``pyverbs`` or ``ctypes <library>``, what the child opened the devices with; ``deadline_s``
    and ``duration_s``: seconds.
    """

    state: str
    python: str = ""
    binding: str = ""
    devices: List[Dict[str, Any]] = field(default_factory=list)
    listed: Optional[List[str]] = None
    detail: str = ""
    hang: bool = False
    deadline_s: float = 0.0
    duration_s: float = 0.0

    def evidence(self) -> Dict[str, Any]:
        """The probe as a finding's evidence."""
        return {
            "probe": self.state,
            "python": self.python or None,
            "binding": self.binding or None,
            "devices": self.devices,
            "listed": self.listed,
            "detail": self.detail or None,
            "deadline_s": round(self.deadline_s, 3),
            "duration_s": round(self.duration_s, 3),
        }


def errno_text(code: Optional[int]) -> str:
    """``12`` -> ``"errno 12 (ENOMEM: Cannot allocate memory)"``; None -> ``"no errno"``."""
    if not code:
        return "no errno"
    name = _errno.errorcode.get(code, "?")
    return f"errno {code} ({name}: {os.strerror(code)})"


def _interpreter(ctx: NodeContext) -> Optional[Dict[str, Any]]:
    """``{"python": path, "env": env, "lib": name, "pyverbs_here": bool}`` to run the child
    with, or None on a simulated Mac (its verbs library is not this machine's). The
    interpreter: this one when it imports pyverbs, else the system one (the OS package,
    without this one's PYTHONPATH), else this one; the child falls back to ``lib`` (``rdma``:
    macOS's librdma.dylib, which JACCL loads; ``ibverbs`` elsewhere) through ctypes when
    pyverbs does not import."""
    from meshdoctor.ranks import PROBE_MARKER_ENV, RANK_ENV_KEYS

    if ctx.is_mac != (sys.platform == "darwin"):
        return None
    lib = os.environ.get(VERBS_LIBRARY_ENV, "rdma" if ctx.is_mac else "ibverbs")
    how = {"python": sys.executable, "env": None, "lib": lib, "pyverbs_here": False}
    if ctx.is_mac:
        return how
    if verbs._pyverbs_importable(ctx):
        return dict(how, pyverbs_here=True)
    python = verbs._system_python(ctx)
    if python is not None:
        drop = RANK_ENV_KEYS + (PROBE_MARKER_ENV, "PYTHONPATH", "PYTHONHOME")
        how.update(python=python, env={k: v for k, v in os.environ.items() if k not in drop})
    return how


def probe_pd(ctx: NodeContext, devices: Sequence[str] = ()) -> PdProbe:
    """Open each of ``devices`` (none: every device listed) and allocate a protection domain,
    in a child under ``ctx.command_timeout`` seconds. Never raises."""
    how = _interpreter(ctx)
    if how is None:
        return PdProbe(
            ABSENT, detail="a simulated Mac: its verbs library is not this machine's to load"
        )
    if not ctx.is_mac and not how["pyverbs_here"]:  # no child where sysfs lists nothing
        none = verbs.sysfs_shortcut(how["python"])
        if none is not None:
            state = NO_RDMA if none.state == verbs.NO_RDMA else OK
            return PdProbe(state, how["python"], listed=none.listed, detail=none.detail)
    res = ctx.command(how["python"], "-c", _CHILD, how["lib"], *devices, env=how["env"])
    probe = PdProbe(OK, how["python"], deadline_s=ctx.command_timeout, duration_s=res.duration_s)
    lines = []
    for ln in res.stdout.splitlines():
        try:
            got = json_text.loads(ln)
        except ValueError:
            continue
        if isinstance(got, dict):
            lines.append(got)
    if any(ln.get("importable") is False for ln in lines):
        err = next(ln.get("error", "") for ln in lines if "importable" in ln)
        return PdProbe(ABSENT, how["python"], detail=f"libibverbs does not load: {err}"[:300])
    for ln in lines:
        if "binding" in ln:
            probe.binding = str(ln["binding"])
        if "list_error" in ln:
            probe.state = NO_RDMA
            probe.detail = f"{probe.binding}: {ln['list_error']}"[:300]
            return probe
        if "listed" in ln:
            probe.listed = [str(n) for n in ln["listed"]]
        if "device" not in ln:
            continue
        name = str(ln["device"])
        row = next((r for r in probe.devices if r["device"] == name), None)
        if row is None:
            row = {"device": name, "result": "not_probed"}
            probe.devices.append(row)
        if "step" in ln and "result" not in ln:
            row.update(result="started", step=ln["step"])
        elif "result" in ln:
            row["result"] = ln["result"]
            if ln["result"] == "error":
                row.update(
                    step=ln.get("step"),
                    errno=ln.get("errno"),
                    errno_name=_errno.errorcode.get(ln.get("errno") or 0),
                    error=str(ln.get("error", ""))[:300],
                )
    wanted = list(devices) or list(probe.listed or [])
    for name in wanted:
        if not any(r["device"] == name for r in probe.devices):
            probe.devices.append({"device": name, "result": "not_probed"})
    if res.timed_out:
        probe.state, probe.hang = TIMED_OUT, hang_proven(res)
        probe.detail = res.describe()
        for row in probe.devices:
            if row["result"] == "started":
                row["result"] = "hung"
        return probe
    if any(r["result"] == "started" for r in probe.devices) or probe.listed is None:
        probe.state = UNREADABLE
        probe.detail = f"the probe ended without an answer: {res.describe()}"
        if res.stderr.strip():
            probe.detail += f": {res.stderr.strip().splitlines()[-1][:200]}"
    return probe


def gather_pd(ctx: NodeContext) -> PdProbe:
    """:func:`probe_pd` of the devices the hostfile names for this node
    (:func:`meshdoctor.facts.verbs.named_devices`), or of every listed device when it names
    none; use as ``ctx.fact(gather_pd)``."""
    named = list(dict.fromkeys(n["device"] for n in verbs.named_devices(ctx)))
    return probe_pd(ctx, named)
