"""The CUDA runtime's error table (``meshdoctor/signatures/sites/cuda.tsv``, made by
``tools/extract_cuda_errors.py`` from a CUDA toolkit's driver_types.h and cudaGetErrorString)
against the catalogue: every row belongs to one failure class, and every text (but those that
other signatures read with a meaning of their own) is read by cuda.failure (MD830) in each
wrapper that prints it, with its class."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from meshdoctor import signatures
from meshdoctor.signatures import cuda_errors

ROOT = Path(__file__).resolve().parents[3]
TOOLKIT = Path("/usr/local/cuda-13.0")

# the wrappers that print a CUDA error text (nccl-tests' CUDACHECK, NCCL's WARN with and
# without its number and file, PyTorch's C10_CUDA_CHECK and cudaGetDeviceCount, MLX's
# mlx/backend/cuda/utils.cpp)
WRAPPERS = (
    "node1: Test CUDA failure common.cu:1030 '{t}'",
    "h1:1:2 [0] transport/net.cc:300 NCCL WARN Cuda failure {n} '{t}'",
    "h1:1:2 [0] include/alloc.h:178 NCCL WARN Cuda failure '{t}'",
    "RuntimeError: CUDA error: {t}",
    "RuntimeError: cudaMemcpyAsync(dst, src, size, kind, stream) failed: {t}",
)
# texts read by a signature of their own behind (some of) these wrappers
ELSEWHERE = {"no CUDA-capable device is detected": "MD684", "out of memory": ("MD800", "MD651")}


def test_the_table_says_where_it_comes_from_and_has_every_runtime_error():
    prov = dict(cuda_errors.PROVENANCE)
    assert "driver_types.h" in prov["source"] and "cudaGetErrorString" in prov["strings"]
    names = {e.name for e in cuda_errors.TABLE}
    assert {"cudaErrorSystemNotReady", "cudaErrorPeerAccessUnsupported"} <= names
    assert cuda_errors.BY_NAME["cudaErrorSystemNotReady"].number == 802
    assert cuda_errors.BY_NAME["cudaErrorSystemNotReady"].text == "system not yet initialized"
    assert cuda_errors.BY_NAME["cudaErrorPeerAccessUnsupported"].driver == (
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"
    )


def test_every_row_belongs_to_exactly_one_class():
    grouped = [f"cudaError{n}" for _, names, *_ in cuda_errors.GROUPS for n in names]
    assert sorted(grouped) == sorted(e.name for e in cuda_errors.TABLE)
    assert len(grouped) == len(set(grouped))


@pytest.mark.parametrize("row", cuda_errors.TABLE, ids=lambda e: e.name)
def test_every_text_is_read_with_its_class_whichever_wrapper_prints_it(row):
    want = next(name for name, names, *_ in cuda_errors.GROUPS if row.name[9:] in names)
    # the class of each text sharing this one (two codes print "device kernel image is invalid")
    same = {
        name
        for name, names, *_ in cuda_errors.GROUPS
        for e in cuda_errors.TABLE
        if e.text == row.text and e.name[9:] in names
    }
    assert want in same
    for wrapper in WRAPPERS:
        line = wrapper.format(t=row.text, n=row.number)
        found = signatures.match_line(line)
        codes = {m.code for m in found}
        other = ELSEWHERE.get(row.text)
        if other and "MD830" not in codes:
            assert codes & set((other,) if isinstance(other, str) else other), (line, codes)
            continue
        (m,) = [m for m in found if m.code == "MD830"]
        assert "MD652" not in codes, line  # the generic reading stays out of the way
        cls = m.signature.failure_class(m.groups)
        assert cls is not None and cls.name in same, (line, cls)
        assert row.name in m.meaning and cls.meaning in m.meaning
        assert m.remedy.lower().startswith(cls.remedy.lower())  # the class's remedy first


def test_a_cuda_text_the_table_lacks_keeps_the_generic_reading():
    (m,) = signatures.match_line("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED")
    assert m.code == "MD652"


def test_nccl_site_classes_come_before_the_text_classes():
    nvls = signatures.match_line("transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'")[
        0
    ]
    assert nvls.signature.failure_class(nvls.groups).name == "cuda.nccl-nvls"
    p2p = signatures.match_line("transport/p2p.cc:300 NCCL WARN Cuda failure 1 'invalid argument'")[
        0
    ]
    assert p2p.signature.failure_class(p2p.groups).name == "cuda.nccl-p2p-ipc"
    net = signatures.match_line("transport/net.cc:300 NCCL WARN Cuda failure 1 'invalid argument'")[
        0
    ]
    assert net.signature.failure_class(net.groups).name == "cuda.invalid-argument"
    shm = signatures.match_line(
        "transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported "
        "between these two devices'"
    )[0]
    assert shm.signature.failure_class(shm.groups).name == "cuda.nccl-cumem-host"


def _tool():
    spec = importlib.util.spec_from_file_location(
        "extract_cuda_errors", ROOT / "tools/extract_cuda_errors.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_the_tool_reads_the_enums_of_the_headers():
    tool = _tool()
    runtime = "enum __device_builtin__ cudaError\n{\n    cudaSuccess = 0,\n" + (
        "    /** doc */\n    cudaErrorSystemNotReady = 802,\n};"
    )
    assert tool.runtime_codes(runtime) == [("cudaErrorSystemNotReady", 802)]
    driver = (
        "typedef enum cudaError_enum {\n  CUDA_SUCCESS = 0,\n  CUDA_ERROR_SYSTEM_NOT_READY = 802\n}"
    )
    assert tool.driver_names(driver) == {802: "CUDA_ERROR_SYSTEM_NOT_READY"}


@pytest.mark.skipif(not (TOOLKIT / "include/driver_types.h").exists(), reason="no CUDA 13.0")
def test_the_committed_table_is_what_the_tool_makes_from_the_toolkit():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools/extract_cuda_errors.py"), "--cuda", str(TOOLKIT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    table = ROOT / "meshdoctor/signatures/sites/cuda.tsv"
    assert out == table.read_text()
