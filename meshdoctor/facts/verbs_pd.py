"""The active verbs probe: open each RDMA device and allocate a protection domain, then free it.

The passive readers (:mod:`meshdoctor.facts.verbs`) list devices and read port states; a device
can pass them all (listed, PORT_ACTIVE) and still refuse ``ibv_alloc_pd``: on macOS after boot,
until the Thunderbolt 5 cable is replugged (exo PR #1467, which probes ``ibv_alloc_pd`` for that
reason); JACCL then crashes registering memory against a null protection domain (SIGSEGV in
``ibv_reg_mr``, exo issue #2186). This probe does what a rank does first: ``ibv_open_device``
and ``ibv_alloc_pd`` on each device, through pyverbs (``pyverbs.device.Context``,
``pyverbs.pd.PD``, rdma-core), then ``ibv_dealloc_pd`` and ``ibv_close_device``.

It runs in a child process under the command deadline (``ctx.command``): a verbs
call into a wedged driver does not return, and a thread could not be stopped. The child prints
one JSON line as it starts each step and one per result, so that when it is killed the device
and the step it hung in are known. The interpreter is this one when it imports pyverbs, else
the system interpreter with the OS package (:func:`meshdoctor.facts.verbs._system_python`, as
the passive reader does, and like it not started where sysfs lists no RDMA device:
:func:`meshdoctor.facts.verbs.sysfs_shortcut`); neither -> state ``absent``.
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

OK, ABSENT, NO_RDMA, TIMED_OUT, UNREADABLE = "ok", "absent", "no_rdma", "timed_out", "unreadable"

# The child: stdlib and pyverbs only. argv: the device names to probe (none: every listed one).
_CHILD = r"""
import json, sys
def out(**kw):
    print(json.dumps(kw), flush=True)
def code(exc):
    c = getattr(exc, "error_code", None)
    return c if isinstance(c, int) and c > 0 else None
try:
    import pyverbs.device as d
    import pyverbs.pd as p
except Exception as exc:
    out(importable=False, error=type(exc).__name__ + ": " + str(exc))
    sys.exit(0)
out(importable=True)
try:
    listed = [x.name.decode() if isinstance(x.name, bytes) else str(x.name)
              for x in d.get_device_list()]
except Exception as exc:
    out(list_error=type(exc).__name__ + ": " + str(exc), errno=code(exc))
    sys.exit(0)
out(listed=listed)
for name in sys.argv[1:] or listed:
    if name not in listed:
        out(device=name, result="missing")
        continue
    step = "ibv_open_device"
    out(device=name, step=step)
    try:
        ctx = d.Context(name=name)
        step = "ibv_alloc_pd"
        out(device=name, step=step)
        pd = p.PD(ctx)
        step = "ibv_dealloc_pd"
        pd.close()
        ctx.close()
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
    ``listed``: the device list the child read; ``python``: the interpreter; ``deadline_s``
    and ``duration_s``: seconds.
    """

    state: str
    python: str = ""
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
    """``{"python": path, "env": env}`` to run the child with, or None when no interpreter
    here imports pyverbs (this one, then the system one without this one's PYTHONPATH)."""
    from meshdoctor.ranks import PROBE_MARKER_ENV, RANK_ENV_KEYS

    if verbs._pyverbs_importable(ctx):
        return {"python": sys.executable, "env": None}
    python = verbs._system_python(ctx)
    if python is None:
        return None
    drop = RANK_ENV_KEYS + (PROBE_MARKER_ENV, "PYTHONPATH", "PYTHONHOME")
    return {"python": python, "env": {k: v for k, v in os.environ.items() if k not in drop}}


def probe_pd(ctx: NodeContext, devices: Sequence[str] = ()) -> PdProbe:
    """Open each of ``devices`` (none: every device listed) and allocate a protection domain,
    in a child under ``ctx.command_timeout`` seconds. Never raises."""
    how = _interpreter(ctx)
    if how is None and ctx.is_mac:
        return PdProbe(
            ABSENT, detail="pyverbs (rdma-core's Python binding of libibverbs) is Linux only"
        )
    if how is None:
        other = os.environ.get(verbs.SYSTEM_PYTHON_ENV, verbs.SYSTEM_PYTHON)
        return PdProbe(
            ABSENT,
            detail="pyverbs (rdma-core's Python binding of libibverbs) does not import in "
            + "this interpreter, and there is no other interpreter to try"
            + (f" ({other} is this one or not executable)" if other else ""),
        )
    if how["env"] is not None:  # the system interpreter: not started where sysfs lists nothing
        none = verbs.sysfs_shortcut(how["python"])
        if none is not None:
            state = NO_RDMA if none.state == verbs.NO_RDMA else OK
            return PdProbe(state, how["python"], listed=none.listed, detail=none.detail)
    res = ctx.command(how["python"], "-c", _CHILD, *devices, env=how["env"])
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
        return PdProbe(ABSENT, how["python"], detail=f"pyverbs does not import: {err}"[:300])
    for ln in lines:
        if "list_error" in ln:
            probe.state, probe.detail = NO_RDMA, f"pyverbs: {ln['list_error']}"[:300]
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
