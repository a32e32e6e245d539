"""NVIDIA GPUs through NVML (NVIDIA's own Python bindings, ``nvidia-ml-py``, module ``pynvml``).

``pynvml`` is imported only when this host has an NVIDIA kernel driver loaded
(``/proc/driver/nvidia/version`` exists, as the driver's README documents); on every other host
(Macs, CPU-only Linux, CI) it is never imported. :func:`snapshot` reads, once, every fact the GPU
checks and the probe's teardown need, each NVML call guarded: a call a GPU does not support
(``NVML_ERROR_NOT_SUPPORTED``) gives ``None``, any other NVML error is recorded as text. The whole
read runs under a deadline in a daemon thread: a wedged GPU can hang NVML, never the doctor.

Sources: NVML API reference (docs.nvidia.com/deploy/nvml-api), ``nvidia-ml-py`` 13.x
(``pynvml.py``): function names, return shapes and constants used below.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional

from meshdoctor.deadline import call

DRIVER_FILE = "/proc/driver/nvidia/version"
# Test and packaging hook: a file that stands in for DRIVER_FILE ("" or a missing path: no driver).
DRIVER_FILE_ENV = "MESHDOCTOR_NVIDIA_DRIVER_FILE"
DEFAULT_TIMEOUT_S = 10.0

# Clock event ("throttle") reasons that mean power or heat, NVML nvmlClocksEventReason*.
THROTTLE_REASONS = {
    0x4: "software power cap",
    0x8: "hardware slowdown (power brake or over-temperature)",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake (external power supply)",
}
COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


class NvmlUnavailable(RuntimeError):
    """NVML cannot be used here; the message says why (no driver, bindings not installed, the
    library failed to initialise)."""


def driver_file() -> str:
    """The path whose existence means an NVIDIA driver is loaded (see :data:`DRIVER_FILE_ENV`)."""
    return os.environ.get(DRIVER_FILE_ENV, DRIVER_FILE)


def driver_present() -> bool:
    """True when an NVIDIA kernel driver is loaded on this host (no NVML call, no import)."""
    path = driver_file()
    return bool(path) and os.path.exists(path)


def load():
    """The ``pynvml`` module, initialised (``nvmlInit``). Raises :class:`NvmlUnavailable` when
    no driver is loaded (without importing anything), when ``nvidia-ml-py`` is not installed, or
    when ``nvmlInit`` fails (its NVML error text)."""
    if not driver_present():
        raise NvmlUnavailable(f"no NVIDIA driver loaded ({driver_file()} does not exist)")
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as exc:
        raise NvmlUnavailable(
            f"NVIDIA's NVML bindings are not installed ({exc}); pip install nvidia-ml-py"
        ) from None
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # pynvml.NVMLError and its generated subclasses
        raise NvmlUnavailable(f"nvmlInit failed: {exc}") from None
    return pynvml


def _text(v: Any) -> Any:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


class _Reader:
    """Calls NVML functions, turning NOT_SUPPORTED into None and other errors into
    ``errors[key]``."""

    def __init__(self, nv) -> None:
        self.nv = nv
        self.errors: Dict[str, str] = {}

    def __call__(self, key: str, name: str, *args: Any) -> Any:
        fn: Optional[Callable[..., Any]] = getattr(self.nv, name, None)
        if fn is None:
            return None
        try:
            return _text(fn(*args))
        except Exception as exc:
            if getattr(exc, "value", None) == getattr(self.nv, "NVML_ERROR_NOT_SUPPORTED", 3):
                return None
            self.errors[key] = f"{name}: {exc}"
            return None


def memory_info(nv, handle) -> Dict[str, int]:
    """``{"total", "used", "reserved"}`` bytes of one GPU. NVML's version 2 call
    (``nvmlDeviceGetMemoryInfo(handle, nvmlMemory_v2)``, driver 510+) keeps the driver's
    reserved memory out of ``used``, as nvidia-smi shows it (an idle H200: 0 MiB used, where
    version 1 says 615 MiB); older drivers fall back to version 1 (``reserved`` 0)."""
    v2 = getattr(nv, "nvmlMemory_v2", None)
    if v2 is not None:
        try:
            m = nv.nvmlDeviceGetMemoryInfo(handle, version=v2)
            return {"total": int(m.total), "used": int(m.used), "reserved": int(m.reserved)}
        except Exception:
            pass
    m = nv.nvmlDeviceGetMemoryInfo(handle)
    return {"total": int(m.total), "used": int(m.used), "reserved": 0}


def _gpu(nv, read: _Reader, i: int) -> Dict[str, Any]:
    h = nv.nvmlDeviceGetHandleByIndex(i)
    k = f"gpu{i}."
    g: Dict[str, Any] = {
        "index": i,
        "name": read(k + "name", "nvmlDeviceGetName", h),
        "uuid": read(k + "uuid", "nvmlDeviceGetUUID", h),
    }
    g["compute_mode"] = read(k + "compute_mode", "nvmlDeviceGetComputeMode", h)
    mig = read(k + "mig", "nvmlDeviceGetMigMode", h)
    g["mig"] = {"current": int(mig[0]), "pending": int(mig[1])} if mig else None
    g["persistence"] = read(k + "persistence", "nvmlDeviceGetPersistenceMode", h)
    try:
        g["memory"] = memory_info(nv, h)
    except Exception as exc:
        read.errors[k + "memory"] = f"nvmlDeviceGetMemoryInfo: {exc}"
        g["memory"] = None
    procs = read(k + "processes", "nvmlDeviceGetComputeRunningProcesses", h) or []
    g["processes"] = [
        {"pid": int(p.pid), "used_bytes": None if p.usedGpuMemory is None else int(p.usedGpuMemory)}
        for p in procs
    ]
    g["ecc_volatile_uncorrected"] = read(
        k + "ecc",
        "nvmlDeviceGetTotalEccErrors",
        h,
        getattr(nv, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1),
        getattr(nv, "NVML_VOLATILE_ECC", 0),
    )
    dbe = read(
        k + "retired",
        "nvmlDeviceGetRetiredPages",
        h,
        getattr(nv, "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1),
    )
    sbe = read(
        k + "retired",
        "nvmlDeviceGetRetiredPages",
        h,
        getattr(nv, "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0),
    )
    pending = read(k + "retired_pending", "nvmlDeviceGetRetiredPagesPendingStatus", h)
    g["retired_pages"] = (
        None
        if dbe is None and sbe is None and pending is None
        else {"double_bit": len(dbe or []), "single_bit": len(sbe or []), "pending": bool(pending)}
    )
    rows = read(k + "remapped_rows", "nvmlDeviceGetRemappedRows", h)
    g["remapped_rows"] = (
        None
        if rows is None
        else {
            "correctable": int(rows[0]),
            "uncorrectable": int(rows[1]),
            "pending": bool(rows[2]),
            "failed": bool(rows[3]),
        }
    )
    links = []
    for link in range(int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            state = nv.nvmlDeviceGetNvLinkState(h, link)
        except Exception:  # NOT_SUPPORTED / INVALID_ARGUMENT: no such link on this GPU
            continue
        errs = {}
        for cname, cnum in (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3)):
            v = read(f"{k}nvlink{link}.{cname}", "nvmlDeviceGetNvLinkErrorCounter", h, link, cnum)
            if v is not None:
                errs[cname] = int(v)
        links.append({"link": link, "active": int(state) == 1, "errors": errs})
    g["nvlink"] = links
    g["pcie"] = {
        "gen": read(k + "pcie", "nvmlDeviceGetCurrPcieLinkGeneration", h),
        "max_gen": read(k + "pcie", "nvmlDeviceGetMaxPcieLinkGeneration", h),
        "width": read(k + "pcie", "nvmlDeviceGetCurrPcieLinkWidth", h),
        "max_width": read(k + "pcie", "nvmlDeviceGetMaxPcieLinkWidth", h),
    }
    g["pstate"] = read(k + "pstate", "nvmlDeviceGetPerformanceState", h)
    reasons = read(k + "clocks", "nvmlDeviceGetCurrentClocksEventReasons", h)
    if reasons is None:
        reasons = read(k + "clocks", "nvmlDeviceGetCurrentClocksThrottleReasons", h)
    g["clock_event_reasons"] = None if reasons is None else int(reasons)
    return g


def snapshot(nv) -> Dict[str, Any]:
    """Every GPU fact from an initialised ``pynvml``-shaped module ``nv``.

    Returns ``{"driver_version": str, "cuda_driver_version": int (e.g. 13000), "gpus": [...],
    "errors": {key: text}}``; each GPU: index, name, uuid, compute_mode (NVML_COMPUTEMODE_*),
    mig ({current, pending} or None when MIG is not supported), persistence (0/1), memory
    ({total, used, reserved} bytes, :func:`memory_info`), processes ([{pid, used_bytes}], compute processes), ecc_volatile_
    uncorrected (count or None), retired_pages ({double_bit, single_bit, pending}),
    remapped_rows ({correctable, uncorrectable, pending, failed}; GPUs with row remapping),
    nvlink ([{link, active, errors: {replay, recovery, crc_flit, crc_data}}], links that exist),
    pcie ({gen, max_gen, width, max_width}), pstate (0 = P0), clock_event_reasons (bitmask)."""
    read = _Reader(nv)
    out: Dict[str, Any] = {
        "driver_version": read("driver_version", "nvmlSystemGetDriverVersion"),
        "cuda_driver_version": read("cuda_driver_version", "nvmlSystemGetCudaDriverVersion"),
        "gpus": [],
    }
    count = nv.nvmlDeviceGetCount()
    for i in range(int(count)):
        try:
            out["gpus"].append(_gpu(nv, read, i))
        except Exception as exc:
            read.errors[f"gpu{i}"] = f"{type(exc).__name__}: {exc}"
            out["gpus"].append({"index": i, "unreadable": str(exc)})
    out["errors"] = read.errors
    return out


def _under_deadline(work: Callable[[Any], Any], timeout: float, name: str) -> Dict[str, Any]:
    """``work(nv)`` with an initialised NVML, in a daemon thread, within ``timeout`` seconds;
    returns ``{"value": ...}`` or ``{"reason": text}`` (NVML unusable, failed or hung). NVML is
    shut down afterwards."""
    box: Dict[str, Any] = {}

    def run() -> None:
        try:
            nv = load()
        except NvmlUnavailable as exc:
            box["reason"] = str(exc)
            return
        try:
            box["value"] = work(nv)
        except Exception as exc:
            box["reason"] = f"NVML failed: {type(exc).__name__}: {exc}"
        finally:
            try:
                nv.nvmlShutdown()
            except Exception:
                pass

    finished, _ = call(run, timeout, name=name)
    if not finished:
        return {"reason": f"NVML did not answer within {timeout:g} s (a wedged GPU or driver)"}
    return box if box else {"reason": "NVML failed"}


def read_all(timeout: float = DEFAULT_TIMEOUT_S) -> Dict[str, Any]:
    """:func:`snapshot` of this host under ``timeout`` seconds.

    Returns ``{"driver": False, "reason": ...}`` without a driver (nothing imported),
    ``{"driver": True, "nvml": False, "reason": ...}`` when NVML is unusable or did not answer
    in time, else ``{"driver": True, "nvml": True, **snapshot}``."""
    if not driver_present():
        return {
            "driver": False,
            "reason": f"no NVIDIA driver loaded ({driver_file()} does not exist)",
        }
    got = _under_deadline(snapshot, timeout, "meshdoctor-nvml")
    if "value" not in got:
        return {"driver": True, "nvml": False, "reason": got["reason"]}
    return dict(got["value"], driver=True, nvml=True)


VISIBLE_ENV = "CUDA_VISIBLE_DEVICES"


def visible(gpus: List[Dict[str, Any]], env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Which of ``gpus`` (NVML's, which ignores it) a CUDA process started with ``env`` (default:
    this one's) sees through ``CUDA_VISIBLE_DEVICES``, as the CUDA C Programming Guide
    ("CUDA Environment Variables") defines it: unset, every GPU; set, the GPUs it lists by
    index or UUID (``GPU-...``, a unique prefix), in order, up to the first entry that names
    none (``""`` or ``-1``: no GPU at all). Returns ``{"set": bool, "value": str or None,
    "indices": [int]}``."""
    value = (os.environ if env is None else env).get(VISIBLE_ENV)
    indices = [int(g["index"]) for g in gpus if "index" in g]
    if value is None:
        return {"set": False, "value": None, "indices": indices}
    seen: List[int] = []
    for word in value.split(","):
        w = word.strip()
        match = None
        if w.isdigit() and int(w) in indices:
            match = int(w)
        elif w.startswith(("GPU-", "MIG-")):
            hits = [int(g["index"]) for g in gpus if str(g.get("uuid", "")).startswith(w)]
            match = hits[0] if len(hits) == 1 else None
        if match is None or match in seen:
            break
        seen.append(match)
    return {"set": True, "value": value, "indices": seen}


def gather_gpus(ctx) -> Dict[str, Any]:
    """The node context's fact: :func:`read_all` under twice the command deadline."""
    return read_all(timeout=max(1.0, 2 * ctx.command_timeout))


def throttle_names(mask: Optional[int]) -> List[str]:
    """Names of the power/heat clock event reasons set in ``mask``."""
    if not mask:
        return []
    return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]


def memory_after(
    pids, *, wait_s: float = 5.0, poll_s: float = 0.1, timeout: float = DEFAULT_TIMEOUT_S
) -> Optional[Dict[str, Any]]:
    """After a teardown: wait up to ``wait_s`` seconds until no GPU lists a compute process
    whose pid is in ``pids`` (the driver frees a process's memory as it exits).

    Returns None when there is no NVIDIA driver (nothing imported), else ``{"nvml": bool,
    "held": [{gpu, pid, used_bytes}] (still listed at the end), "gpus": [{index, used_bytes}],
    "waited_s": float, "reason": str (when NVML could not be read)}``."""
    if not driver_present():
        return None
    want = set(pids)

    def work(nv) -> Dict[str, Any]:
        t0 = time.monotonic()
        while True:
            held, gpus = [], []
            for i in range(int(nv.nvmlDeviceGetCount())):
                h = nv.nvmlDeviceGetHandleByIndex(i)
                gpus.append({"index": i, "used_bytes": memory_info(nv, h)["used"]})
                for p in nv.nvmlDeviceGetComputeRunningProcesses(h) or []:
                    if int(p.pid) in want:
                        held.append(
                            {
                                "gpu": i,
                                "pid": int(p.pid),
                                "used_bytes": None
                                if p.usedGpuMemory is None
                                else int(p.usedGpuMemory),
                            }
                        )
            waited = time.monotonic() - t0
            if not held or waited >= wait_s:
                return {"nvml": True, "held": held, "gpus": gpus, "waited_s": round(waited, 3)}
            time.sleep(poll_s)

    got = _under_deadline(work, wait_s + timeout, "meshdoctor-nvml-after")
    if "value" in got:
        return got["value"]
    return {"nvml": False, "held": [], "gpus": [], "reason": got["reason"]}


# NVML performance policies whose violation time (ns the clocks were held below the requested
# level, nvmlDeviceGetViolationStatus) means power or heat.
SLOWDOWN_POLICIES = {"power": 0, "thermal": 1}  # NVML_PERF_POLICY_POWER, _THERMAL


def violation_ns(timeout: float = DEFAULT_TIMEOUT_S) -> Optional[Dict[int, Dict[str, int]]]:
    """Cumulative nanoseconds each GPU's clocks were held back for power and for heat
    (``{gpu index: {"power": ns, "thermal": ns}}``, a policy the GPU does not report left
    out); None without an NVIDIA driver (nothing imported) or when NVML cannot answer. Read
    before and after a run, the difference says whether the run was slowed."""
    if not driver_present():
        return None

    def work(nv) -> Dict[int, Dict[str, int]]:
        out: Dict[int, Dict[str, int]] = {}
        for i in range(int(nv.nvmlDeviceGetCount())):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            row = {}
            for name, policy in SLOWDOWN_POLICIES.items():
                try:
                    row[name] = int(nv.nvmlDeviceGetViolationStatus(h, policy).violationTime)
                except Exception:  # not supported on this GPU
                    continue
            out[i] = row
        return out

    return _under_deadline(work, timeout, "meshdoctor-nvml-violation").get("value")


def slowdown(
    before: Optional[Dict[int, Dict[str, int]]], after: Optional[Dict[int, Dict[str, int]]]
) -> List[Dict[str, Any]]:
    """``[{gpu, reason, ms}]``: how long each GPU's clocks were held back for power or heat
    between two :func:`violation_ns` readings (only the reasons that grew)."""
    if not before or not after:
        return []
    out = []
    for gpu, row in sorted(after.items()):
        for reason, ns in row.items():
            delta = ns - before.get(gpu, {}).get(reason, ns)
            if delta > 0:
                out.append({"gpu": gpu, "reason": reason, "ms": round(delta / 1e6, 3)})
    return out
