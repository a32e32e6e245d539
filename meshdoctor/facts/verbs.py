"""The verbs inventory fact: RDMA devices, ports, GID tables and limits of this node.

Readers, tried in order, each under the context's command deadline:

1. ``pyverbs`` (Linux only, never imported on macOS): the OS package ``python3-pyverbs`` (the
   PyPI build fails against an older system rdma-core). Imported lazily, only when
   :func:`importlib.util.find_spec` finds it, and run in a thread under the deadline (:func:`meshdoctor.deadline.call`),
   because a wedged RDMA stack can block a verbs call. A venv (the documented set-up) cannot
   import the OS package: then the system interpreter (:data:`SYSTEM_PYTHON`) runs the same
   reader in a child process under the command deadline, as MLX is inspected in a child
   (:func:`read_pyverbs_child`). ``PyverbsRDMAError: Failed to get devices list`` means there is
   no RDMA subsystem.
2. ``ibv_devinfo -v`` parsed by :mod:`meshdoctor.parsers.ibv`, plus ``ibv_devices`` for the list
   (on macOS the RDMA-disabled answer is the header alone). Not run at all when ``ibv_devinfo`` is
   not on PATH, so a box without RDMA pays nothing.

The result is an :class:`Inventory` whose ``state`` the RDMA checks (MD201-MD204) turn into
findings. A reader that overruns the deadline gives ``state == "wedged"``: ``ibv_devinfo`` is
known to hang after JACCL errors (MLX #3910, #4278), and only a
reboot recovers; every RDMA check reports it as a critical failure with ``needs_reboot``
(:func:`meshdoctor.checks._rdma.wedged_finding`: the findings the checks share live with the
checks; this module only reads facts).

Also here, shared by the checks: whether the hostfile needs RDMA on this node
(:func:`rdma_role`), the devices it names for this node (:func:`named_devices`), and the
``rdma_ctl status`` and ``librdma.dylib`` links of the macOS enablement chain.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from meshdoctor.parsers import json_text
from meshdoctor import execute
from meshdoctor.facts.context import NodeContext
from meshdoctor.deadline import call as call_with_deadline
from meshdoctor.mlx.backends import JACCL_BACKENDS
from meshdoctor.parsers.ibv import (
    LIMIT_KEYS,
    LINK_LAYERS,
    MTU_BYTES,
    PHYS_STATES,
    PORT_STATES,
    Device,
    Gid,
    Port,
    normalize_gid,
    parse_ibv_devices,
    parse_ibv_devinfo,
    parse_rdma_ctl_status,
)

# Inventory states.
OK = "ok"  # devices were read (some may be incomplete: see ``warnings``)
NO_DEVICES = "no_devices"  # the verbs stack answers but lists no device (RDMA disabled on macOS)
NO_RDMA = "no_rdma"  # no RDMA subsystem (pyverbs: Failed to get devices list)
ABSENT = "absent"  # no reader available: no pyverbs and no ibv_devinfo on PATH
WEDGED = "wedged"  # a reader did not answer within the deadline
UNREADABLE = "unreadable"  # the tool answered, but nothing in its output could be read

PYVERBS, IBV_DEVINFO, SYSFS = "pyverbs", "ibv_devinfo", "sysfs"
MAX_GIDS_SCANNED = 256  # pyverbs: GID indexes queried per port (RoCE tables have 255 or 256)


@dataclass
class Inventory:
    """The verbs view of this node.

    ``state``: one of OK, NO_DEVICES, NO_RDMA, ABSENT, WEDGED, UNREADABLE; ``reader``: the reader
    whose answer this is (``pyverbs``/``ibv_devinfo``, '' when none ran); ``devices``: detailed
    devices; ``listed``: device names from ``ibv_devices`` or the pyverbs device list (None when no
    list was taken); ``attempts``: each reader tried and its outcome; ``warnings``: what could not
    be read (parser warnings, unparsed lines, list/detail mismatches); ``detail``: one line on why
    the state is what it is.
    """

    state: str
    reader: str = ""
    devices: List[Device] = field(default_factory=list)
    listed: Optional[List[str]] = None
    attempts: List[Dict[str, Any]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    detail: str = ""

    def device(self, name: str) -> Optional[Device]:
        """The device named ``name``; None if it is not listed."""
        return next((d for d in self.devices if d.name == name), None)

    @property
    def names(self) -> List[str]:
        """Every device name known, detailed or only listed, in order."""
        out = [d.name for d in self.devices]
        out += [n for n in (self.listed or []) if n not in out]
        return out

    def evidence(self) -> Dict[str, Any]:
        """The part of the inventory every RDMA finding carries: reader, state, attempts."""
        ev: Dict[str, Any] = {
            "reader": self.reader or None,
            "inventory": self.state,
            "attempts": self.attempts,
        }
        if self.detail:
            ev["detail"] = self.detail
        if self.warnings:
            ev["unread"] = self.warnings[:20]
        return ev


# --- pyverbs reader -------------------------------------------------------------------------


def _guid(v: Any) -> str:
    """A GUID as ibv_devinfo prints it (``xxxx:xxxx:xxxx:xxxx``) from pyverbs' raw int (the
    big-endian ``__be64`` read as a host integer, as pyverbs ``DeviceAttr.node_guid`` returns it)
    or from text."""
    if isinstance(v, int):
        raw = (v & (2**64 - 1)).to_bytes(8, sys.byteorder)
        h = raw.hex()
        return ":".join(h[i : i + 4] for i in range(0, 16, 4))
    return str(v) if v is not None else ""


def _attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except Exception:  # a Cython property may raise on an unsupported attribute
        return None


def _as_name(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _pyverbs_port(ctx_obj: Any, num: int) -> Port:
    pa = ctx_obj.query_port(num)
    code = _attr(pa, "state")
    ll = _attr(pa, "link_layer")
    port = Port(
        num,
        PORT_STATES.get(code, str(code)) if code is not None else "",
        code if isinstance(code, int) else None,
        MTU_BYTES.get(_attr(pa, "max_mtu")),
        MTU_BYTES.get(_attr(pa, "active_mtu")),
        LINK_LAYERS.get(ll, str(ll)) if ll is not None else "",
        _attr(pa, "gid_tbl_len"),
        phys_state=PHYS_STATES.get(_attr(pa, "phys_state"), ""),
    )
    for idx in range(min(port.gid_tbl_len or 0, MAX_GIDS_SCANNED)):
        try:
            g = ctx_obj.query_gid(num, idx)
        except Exception:
            continue
        text = _attr(g, "gid") or str(g)
        gid = normalize_gid(text)
        if gid and gid != "::":
            port.gids.append(Gid(idx, gid))
    return port


def _pyverbs_device(pvd: Any, name: str) -> Device:
    ctx_obj = pvd.Context(name=name)
    try:
        a = ctx_obj.query_device()
        dev = Device(
            name,
            transport="",
            node_guid=_guid(_attr(a, "node_guid")),
            sys_image_guid=_guid(_attr(a, "sys_image_guid")),
            vendor_id=hex(_attr(a, "vendor_id") or 0),
            vendor_part_id=str(_attr(a, "vendor_part_id") or ""),
            hw_ver=hex(_attr(a, "hw_ver") or 0),
            fw_ver=_as_name(_attr(a, "fw_version") or ""),
            phys_port_cnt=_attr(a, "phys_port_cnt"),
        )
        for key in LIMIT_KEYS:
            v = _attr(a, key)
            if isinstance(v, int):
                dev.limits[key] = v
        for num in range(1, (dev.phys_port_cnt or 1) + 1):
            dev.ports.append(_pyverbs_port(ctx_obj, num))
        ll = {p.link_layer for p in dev.ports}
        dev.transport = "InfiniBand" if ll <= {"InfiniBand"} else "/".join(sorted(ll))
        return dev
    finally:
        close = getattr(ctx_obj, "close", None)
        if callable(close):
            close()


def _is_no_subsystem(exc: BaseException) -> bool:
    return "Failed to get devices list" in str(exc) or "Failed to get IB devices" in str(exc)


def read_pyverbs(modules: Optional[Dict[str, Any]] = None) -> Inventory:
    """The inventory through pyverbs; ``modules`` injects ``{"device": pyverbs.device}`` (tests).

    Never raises: an import failure, the no-subsystem error and any other pyverbs error become the
    ``state``/``detail`` of the returned inventory (state ``absent`` for "cannot import", the
    caller then tries the next reader).
    """
    inv = Inventory(ABSENT, PYVERBS)
    try:
        pvd = (modules or {}).get("device") or importlib.import_module("pyverbs.device")
    except Exception as exc:  # ImportError, or a broken build (IBVERBS_PRIVATE_... not found)
        inv.detail = f"pyverbs does not import: {type(exc).__name__}: {exc}"
        return inv
    try:
        lst = pvd.get_device_list()
    except Exception as exc:
        inv.detail = f"pyverbs: {type(exc).__name__}: {exc}"
        inv.state = NO_RDMA if _is_no_subsystem(exc) else UNREADABLE
        return inv
    inv.listed = [_as_name(_attr(d, "name")) for d in lst]
    if not inv.listed:
        inv.state, inv.detail = NO_DEVICES, "pyverbs lists no RDMA device"
        return inv
    for name in inv.listed:
        try:
            inv.devices.append(_pyverbs_device(pvd, name))
        except Exception as exc:
            inv.warnings.append(f"{name}: pyverbs could not query it: {type(exc).__name__}: {exc}")
    inv.state = OK if inv.devices else UNREADABLE
    return inv


def _pyverbs_importable(ctx: NodeContext) -> bool:
    if ctx.platform != "linux" or sys.platform != "linux":
        return False  # never on macOS (pyverbs is Linux only), nor on a simulated Mac
    try:
        return importlib.util.find_spec("pyverbs") is not None
    except (ImportError, ValueError):
        return False


# --- pyverbs through the system interpreter (the OS package, from a venv) -------------------

SYSTEM_PYTHON = "/usr/bin/python3"  # where Debian/Ubuntu's python3-pyverbs is importable
SYSTEM_PYTHON_ENV = "MESHDOCTOR_SYSTEM_PYTHON"  # another interpreter with the OS pyverbs; '' = none
_CHILD = r"""
import dataclasses, json, sys
try:
    import pyverbs.device  # noqa: F401
except Exception as exc:
    print(json.dumps({"importable": False, "error": type(exc).__name__ + ": " + str(exc)}))
    sys.exit(0)
from meshdoctor.facts.verbs import read_pyverbs
print(json.dumps({"importable": True, "inventory": dataclasses.asdict(read_pyverbs())}))
"""


def _system_python(ctx: NodeContext) -> Optional[str]:
    """The system interpreter to read pyverbs with (``$MESHDOCTOR_SYSTEM_PYTHON``, default
    :data:`SYSTEM_PYTHON`), when it exists and is another one than this; None otherwise."""
    import os

    python = os.environ.get(SYSTEM_PYTHON_ENV, SYSTEM_PYTHON)
    if (
        ctx.platform != "linux"
        or sys.platform != "linux"
        or not python
        or not os.access(python, os.X_OK)
    ):
        return None
    if (
        os.path.realpath(python) == os.path.realpath(sys.executable)
        and sys.prefix == sys.base_prefix
    ):
        return None  # this is the system interpreter itself: the in-process reader applies
    return python


SYSFS_ENV = "SYSFS_PATH"  # where libibverbs (rdma-core) looks for sysfs; default /sys


def sysfs_shortcut(python: str) -> Optional[Inventory]:
    """The inventory without running ``python`` when sysfs already says it can list no device.

    The kernel registers every RDMA device in its ``infiniband`` device class
    (``<sysfs>/class/infiniband/<name>``, Linux ``drivers/infiniband/core/device.c``), and
    libibverbs, which pyverbs wraps, looks each device up there (rdma-core
    ``libibverbs/init-sysfs.c``); ``<sysfs>`` is ``$SYSFS_PATH`` or ``/sys``, as for libibverbs.
    That class absent means no RDMA driver is loaded (state ``no_rdma``, what pyverbs'
    ``Failed to get devices list`` gives on such a node); present but empty, no device (state
    ``no_devices``). Either way pyverbs would list nothing, so its child is not started. None
    when devices are listed there, when sysfs is not mounted (no ``<sysfs>/class``) or the
    class cannot be read: then the reader runs.
    """
    import os

    root = (os.environ.get(SYSFS_ENV) or "/sys").rstrip("/") or "/"
    if not os.path.isdir(os.path.join(root, "class")):
        return None
    cls = os.path.join(root, "class", "infiniband")
    try:
        names = os.listdir(cls)
    except FileNotFoundError:
        state, listed = NO_RDMA, None
        detail = f"{cls} does not exist (no RDMA driver is loaded)"
    except OSError:
        return None
    else:
        if names:
            return None
        state, listed = NO_DEVICES, []
        detail = f"{cls} lists no RDMA device"
    detail += f", so pyverbs through {python} was not run: it could list no device"
    return Inventory(
        state,
        SYSFS,
        listed=listed,
        attempts=[{"reader": SYSFS, "outcome": detail}],
        detail=detail,
    )


def inventory_from_dict(d: Dict[str, Any]) -> Inventory:
    """An :class:`Inventory` from its ``dataclasses.asdict`` form (the child's answer)."""
    devices = [
        Device(
            **dict(
                dev,
                ports=[Port(**dict(p, gids=[Gid(**g) for g in p["gids"]])) for p in dev["ports"]],
            )
        )
        for dev in d.get("devices", [])
    ]
    return Inventory(**dict(d, devices=devices))


def read_pyverbs_child(ctx: NodeContext, python: str) -> Inventory:
    """The pyverbs reader run by ``python`` in a child under ``ctx``'s command deadline; this
    package reaches the child through a private ``PYTHONPATH`` holding only a link to it.

    State ``absent`` when that interpreter cannot import pyverbs either (the next reader is
    tried), ``wedged`` when the child overran the deadline, ``unreadable`` when it crashed."""
    import os
    import tempfile

    from meshdoctor.ranks import PROBE_MARKER_ENV, RANK_ENV_KEYS

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # meshdoctor/
    with tempfile.TemporaryDirectory(prefix="meshdoctor-verbs-") as tmp:
        if os.path.isdir(pkg):
            os.symlink(pkg, os.path.join(tmp, "meshdoctor"))
            path = tmp
        else:  # run from a zip application (meshdoctor.ship): the zip is the path entry
            path = os.path.dirname(pkg)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in RANK_ENV_KEYS + (PROBE_MARKER_ENV, "PYTHONPATH", "PYTHONHOME")
        }
        env["PYTHONPATH"] = path
        res = execute.run([python, "-c", _CHILD], env=env, timeout=ctx.command_timeout)
    attempt = {
        "reader": f"{PYVERBS} ({python})",
        "outcome": res.describe() if not res.ok else "ok",
        "duration_s": round(res.duration_s, 3),
    }
    if res.timed_out:
        return Inventory(
            WEDGED,
            PYVERBS,
            attempts=[attempt],
            detail=f"pyverbs (through {python}) did not answer within {ctx.command_timeout:g} s",
        )
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), "")
    try:
        got = json_text.loads(line)
        if not got.get("importable"):
            attempt["outcome"] = f"not importable: {got.get('error', '')}"[:200]
            return Inventory(
                ABSENT,
                "",
                attempts=[attempt],
                detail=f"pyverbs is not importable by {python} either",
            )
        inv = inventory_from_dict(got["inventory"])
    except (ValueError, KeyError, TypeError):
        return Inventory(
            UNREADABLE,
            PYVERBS,
            attempts=[attempt],
            detail=f"pyverbs through {python}: {res.describe()}",
        )
    attempt["outcome"] = inv.detail or inv.state
    inv.attempts = [attempt]
    inv.reader = f"{PYVERBS} ({python})"
    return inv


# --- ibv_devinfo reader ---------------------------------------------------------------------


def read_ibv_tools(ctx: NodeContext) -> Inventory:
    """The inventory from ``ibv_devinfo -v`` then ``ibv_devices`` through ``ctx.command``.

    ``ibv_devices`` is not run when ``ibv_devinfo`` already hung (the stack is wedged; another
    call would only hang too and eat the check's deadline).
    """
    inv = Inventory(ABSENT, IBV_DEVINFO)
    if execute.which("ibv_devinfo") is None:
        inv.reader, inv.detail = "", "ibv_devinfo is not on PATH"
        return inv
    res = ctx.command("ibv_devinfo", "-v")
    inv.attempts.append(
        {
            "reader": IBV_DEVINFO,
            "outcome": res.describe() if not res.ok else "ok",
            "duration_s": round(res.duration_s, 3),
        }
    )
    if res.timed_out:
        inv.state, inv.detail = WEDGED, res.describe()
        return inv
    if res.cut:  # a reader that never stops printing: what it printed is not an inventory
        inv.state, inv.detail = UNREADABLE, res.describe()
        return inv
    if res.missing:
        inv.reader, inv.detail = "", res.describe()
        return inv
    rep = parse_ibv_devinfo(res.stdout, res.stderr)
    inv.devices = rep.devices
    inv.warnings += rep.warnings + [
        f"unparsed ibv_devinfo line: {ln.strip()[:120]}" for ln in rep.unparsed[:10]
    ]
    if execute.which("ibv_devices") is not None:
        lres = ctx.command("ibv_devices")
        inv.attempts.append(
            {
                "reader": "ibv_devices",
                "outcome": lres.describe() if not lres.ok else "ok",
                "duration_s": round(lres.duration_s, 3),
            }
        )
        if lres.timed_out:
            inv.state, inv.detail = WEDGED, lres.describe()
            return inv
        if lres.cut:
            inv.state, inv.detail = UNREADABLE, lres.describe()
            return inv
        if lres.ok:
            lst = parse_ibv_devices(lres.stdout)
            if lst.header or lst.devices:
                inv.listed = lst.names
            inv.warnings += [
                f"unparsed ibv_devices line: {ln.strip()[:120]}" for ln in lst.unparsed[:10]
            ]
    detailed = {d.name for d in rep.devices}
    for n in inv.listed or []:
        if n not in detailed:
            inv.warnings.append(f"{n}: listed by ibv_devices but ibv_devinfo gave no details")
    if rep.devices:
        inv.state = OK
    elif rep.no_subsystem:
        inv.state, inv.detail = NO_RDMA, "ibv_devinfo: Failed to get IB devices list"
    elif rep.no_devices or (
        inv.listed is not None and not inv.listed and not (res.stdout + res.stderr).strip()
    ):
        inv.state, inv.detail = NO_DEVICES, "ibv_devinfo: No IB devices found"
    elif inv.listed:
        inv.state = OK  # listed, but no detail could be read: see warnings
        inv.detail = "ibv_devinfo output could not be read; only the ibv_devices list is known"
    elif inv.listed is not None and not rep.unparsed:
        inv.state, inv.detail = NO_DEVICES, "ibv_devices lists no device"
    else:
        inv.state = UNREADABLE
        inv.detail = (
            f"could not read the output of `ibv_devinfo -v` ({res.describe()}); "
            f"{len(rep.unparsed)} line(s) not understood"
        )
    return inv


def gather_verbs(ctx: NodeContext) -> Inventory:
    """The verbs inventory of this node (use as ``ctx.fact(gather_verbs)``).

    pyverbs first when it imports (Linux), else the ibv tools. A pyverbs answer is final unless it
    cannot import or gives an error other than "no subsystem"; then the ibv tools are tried too.
    """
    attempts: List[Dict[str, Any]] = []
    if _pyverbs_importable(ctx):
        done, inv = call_with_deadline(read_pyverbs, ctx.command_timeout, name="verbs-reader")
        if not done:
            return Inventory(
                WEDGED,
                PYVERBS,
                attempts=[
                    {"reader": PYVERBS, "outcome": f"no answer within {ctx.command_timeout:g} s"}
                ],
                detail=f"pyverbs did not answer within {ctx.command_timeout:g} s",
            )
        attempts.append({"reader": PYVERBS, "outcome": inv.detail or inv.state})
        if inv.state in (OK, NO_DEVICES, NO_RDMA):
            inv.attempts = attempts
            return inv
    else:
        attempts.append(
            {
                "reader": PYVERBS,
                "outcome": "not importable" if ctx.platform == "linux" else "not used on macOS",
            }
        )
        python = _system_python(ctx)
        if python is not None:  # a venv: the OS package through the system interpreter
            inv = sysfs_shortcut(python) or read_pyverbs_child(ctx, python)
            attempts += inv.attempts
            if inv.state in (OK, NO_DEVICES, NO_RDMA, WEDGED):
                inv.attempts = attempts
                return inv
    inv = read_ibv_tools(ctx)
    inv.attempts = attempts + inv.attempts
    if inv.state == ABSENT:
        inv.detail = "no verbs reader: pyverbs is not importable and ibv_devinfo is not on PATH"
    return inv


# --- what the hostfile asks of this node -----------------------------------------------------

REQUIRED, UNUSED, UNKNOWN = "required", "unused", "unknown"


def rdma_role(ctx: NodeContext) -> str:
    """``required`` when the hostfile uses a JACCL backend, ``unused`` when it uses another one,
    ``unknown`` without a hostfile (then what is cabled and active is taken as meant for RDMA)."""
    if ctx.hostfile is None:
        return UNKNOWN
    return REQUIRED if ctx.hostfile.effective_backend in JACCL_BACKENDS else UNUSED


def named_devices(ctx: NodeContext) -> List[Dict[str, Any]]:
    """The devices this node's hostfile rows name: ``[{device, rank, peer, peer_host}]``, in
    order, one entry per (rank, peer, device)."""
    out: List[Dict[str, Any]] = []
    if ctx.hostfile is None:
        return out
    hosts = ctx.hostfile.hosts
    for rank, host in ctx.hostfile_hosts():
        for peer in range(len(host.rdma)):
            for dev in host.devices_to(peer):
                out.append(
                    {
                        "device": dev,
                        "rank": rank,
                        "peer": peer,
                        "peer_host": hosts[peer].ssh if peer < len(hosts) else None,
                    }
                )
    return out


def unused_skip_reason(ctx: NodeContext) -> str:
    """Why an RDMA check skips when the hostfile's backend does not use RDMA (or there is no
    hostfile)."""
    return (
        f"the hostfile's backend is {ctx.hostfile.effective_backend!r}, which does not use RDMA"
        if ctx.hostfile is not None
        else "no hostfile"
    )


def interface_of(device: str) -> Optional[str]:
    """``rdma_en3`` -> ``en3`` (Apple names RDMA devices after their interface, as macOS 26.2 does)."""
    return device[len("rdma_") :] if device.startswith("rdma_") and len(device) > 5 else None


# --- macOS enablement links ------------------------------------------------------------------


def gather_rdma_ctl(ctx: NodeContext) -> Dict[str, Any]:
    """``rdma_ctl status`` -> ``{"enabled": True/False/None, "detail": str}`` (macOS)."""
    if execute.which("rdma_ctl") is None:
        return {"enabled": None, "detail": "rdma_ctl is not on PATH"}
    res = ctx.command("rdma_ctl", "status")
    if not res.ok:
        return {"enabled": None, "detail": res.describe()}
    state = parse_rdma_ctl_status(res.stdout)
    return {
        "enabled": state,
        "detail": res.stdout.strip()[:200]
        if state is None
        else ("enabled" if state else "disabled"),
    }


LIBRDMA = "librdma.dylib"


def find_librdma() -> Dict[str, Any]:
    """Is ``librdma.dylib`` (the library JACCL dlopens) loadable? ``{"found": bool|None, ...}``.

    Only answerable on a real Mac: system libraries live in the dyld shared cache, so this asks
    dyld through :func:`ctypes.util.find_library`. Elsewhere (a simulated Mac) ``found`` is None.
    """
    if sys.platform != "darwin":
        return {"found": None, "detail": "not inspected: not running on macOS itself"}
    import ctypes.util

    path = ctypes.util.find_library("rdma")
    return {"found": bool(path), "path": path, "detail": path or f"{LIBRDMA} not found by dyld"}
