"""A stand-in for NVIDIA's ``pynvml`` (nvidia-ml-py 13.x) for hosts without GPUs.

Same names, call signatures, constants and return types as the real module for every call
meshdoctor makes: ints for modes and counters, ``[current, pending]`` for MIG, a tuple for
remapped rows, a list of addresses for retired pages, structure-like objects with attributes for
memory and processes, and ``NVMLError`` (with ``.value``; ``NVMLError(NVML_ERROR_NOT_SUPPORTED)``
is an ``NVMLError_NotSupported``) for what a GPU does not support. Scenario: the
``FAKE_NVML`` environment variable, a comma-separated list of
``healthy`` (2 H200s joined by 18 NVLink links), ``one-gpu`` (a single H200), ``ecc`` (GPU 1: 3 volatile uncorrected ECC
errors, row remapping pending), ``nvlink-down`` (GPU 1 links 4 and 5 down), ``exclusive`` (GPU
0 in EXCLUSIVE_PROCESS), ``mig`` (GPU 1 MIG on), ``no-persistence``, ``throttle`` (GPU 0 hardware
thermal slowdown, its thermal violation time growing), ``hang`` (nvmlInit never returns); ``FAKE_NVML_PROCS`` =
``gpu:pid:bytes,...`` adds compute processes.
"""

import os
import time
from types import SimpleNamespace

NVML_SUCCESS = 0
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1
NVML_COMPUTEMODE_DEFAULT = 0
NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1
NVML_COMPUTEMODE_PROHIBITED = 2
NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
NVML_NVLINK_MAX_LINKS = 36
NVML_NVLINK_ERROR_DL_REPLAY = 0
NVML_NVLINK_ERROR_DL_RECOVERY = 1
NVML_NVLINK_ERROR_DL_CRC_FLIT = 2
NVML_NVLINK_ERROR_DL_CRC_DATA = 3
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
nvmlClocksEventReasonGpuIdle = 0x1
nvmlClocksEventReasonHwThermalSlowdown = 0x40
nvmlMemory_v2 = 0x02000028


class NVMLError(Exception):
    _valClassMapping = dict()

    def __new__(typ, value):
        if typ == NVMLError:
            typ = NVMLError._valClassMapping.get(value, typ)
        obj = Exception.__new__(typ)
        obj.value = value
        return obj

    def __str__(self):
        return {2: "Invalid Argument", 3: "Not Supported"}.get(self.value, "Unknown Error")


class NVMLError_NotSupported(NVMLError):
    def __new__(typ):
        obj = Exception.__new__(typ)
        obj.value = NVML_ERROR_NOT_SUPPORTED
        return obj


NVMLError._valClassMapping[NVML_ERROR_NOT_SUPPORTED] = NVMLError_NotSupported

GiB = 1 << 30


def _flags():
    return {f.strip() for f in os.environ.get("FAKE_NVML", "healthy").split(",") if f.strip()}


def _procs():
    out = {}
    for item in os.environ.get("FAKE_NVML_PROCS", "").split(","):
        if item.strip():
            g, pid, used = item.split(":")
            out.setdefault(int(g), []).append((int(pid), int(used)))
    return out


_state = {"init": 0}


def _handle(h):
    if not _state["init"]:
        raise NVMLError(1)  # Uninitialized
    return h


def nvmlInit():
    if "hang" in _flags():
        time.sleep(3600)
    _state["init"] += 1


def nvmlShutdown():
    _state["init"] = max(0, _state["init"] - 1)


def nvmlSystemGetDriverVersion():
    return "580.159.04"


def nvmlSystemGetCudaDriverVersion():
    return 13000


def nvmlDeviceGetCount():
    _handle(None)
    return 1 if "one-gpu" in _flags() else 2


def nvmlDeviceGetHandleByIndex(index):
    _handle(None)
    if index not in range(nvmlDeviceGetCount()):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return SimpleNamespace(index=index)


def nvmlDeviceGetName(handle):
    return "NVIDIA H200"


def nvmlDeviceGetUUID(handle):
    return f"GPU-0000000{handle.index}-fake"


def nvmlDeviceGetComputeMode(handle):
    if "exclusive" in _flags() and handle.index == 0:
        return NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
    return NVML_COMPUTEMODE_DEFAULT


def nvmlDeviceGetMigMode(handle):
    on = 1 if "mig" in _flags() and handle.index == 1 else 0
    return [on, on]


def nvmlDeviceGetPersistenceMode(handle):
    return NVML_FEATURE_DISABLED if "no-persistence" in _flags() else NVML_FEATURE_ENABLED


def nvmlDeviceGetMemoryInfo(handle, version=None):
    used = sum(u for _, u in _procs().get(handle.index, []))
    m = SimpleNamespace(
        total=141 * GiB, used=used + (0 if version else 615 << 20), free=141 * GiB - used
    )
    if version:
        m.version, m.reserved = version, 615 << 20
    return m


def nvmlDeviceGetComputeRunningProcesses(handle):
    return [
        SimpleNamespace(
            pid=pid, usedGpuMemory=used, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF
        )
        for pid, used in _procs().get(handle.index, [])
    ]


def nvmlDeviceGetTotalEccErrors(handle, errorType, counterType):
    if (
        "ecc" in _flags()
        and handle.index == 1
        and errorType == NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        and counterType == NVML_VOLATILE_ECC
    ):
        return 3
    return 0


def nvmlDeviceGetRetiredPages(device, sourceFilter):
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED)  # Hopper uses row remapping instead


def nvmlDeviceGetRetiredPagesPendingStatus(device):
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED)


def nvmlDeviceGetRemappedRows(device):
    if "ecc" in _flags() and device.index == 1:
        return (0, 2, 1, 0)
    return (0, 0, 0, 0)


def nvmlDeviceGetNvLinkState(device, link):
    if link >= 18:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    if "nvlink-down" in _flags() and device.index == 1 and link in (4, 5):
        return NVML_FEATURE_DISABLED
    return NVML_FEATURE_ENABLED


def nvmlDeviceGetNvLinkErrorCounter(device, link, counter):
    return 12 if counter == NVML_NVLINK_ERROR_DL_CRC_DATA else 0  # healthy links count a few


def nvmlDeviceGetCurrPcieLinkGeneration(handle):
    return 5


def nvmlDeviceGetMaxPcieLinkGeneration(handle):
    return 5


def nvmlDeviceGetCurrPcieLinkWidth(handle):
    return 16


def nvmlDeviceGetMaxPcieLinkWidth(handle):
    return 16


def nvmlDeviceGetPerformanceState(handle):
    return 0


def nvmlDeviceGetCurrentClocksEventReasons(handle):
    if "throttle" in _flags() and handle.index == 0:
        return nvmlClocksEventReasonHwThermalSlowdown
    return nvmlClocksEventReasonGpuIdle


NVML_PERF_POLICY_POWER = 0
NVML_PERF_POLICY_THERMAL = 1
_violations = {"calls": 0}


def nvmlDeviceGetViolationStatus(device, perfPolicyType):
    """Cumulative ns held back; with ``throttle``, GPU 0's thermal count grows 5 ms a call."""
    grow = "throttle" in _flags() and device.index == 0 and perfPolicyType == 1
    _violations["calls"] += 1 if grow else 0
    return SimpleNamespace(
        referenceTime=0,
        violationTime=10_000_000 + (5_000_000 * _violations["calls"] if grow else 0),
    )
