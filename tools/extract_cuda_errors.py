"""Extract the CUDA runtime's error codes and their strings into one table.

Usage::

    python3 tools/extract_cuda_errors.py --cuda /usr/local/cuda-13.0 \
        > meshdoctor/signatures/sites/cuda.tsv

Reads the ``cudaError`` enum of the toolkit's ``include/driver_types.h`` (every
``cudaErrorXxx = N``) and asks the toolkit's own ``lib/libcudart.so`` (``cudaGetErrorName``,
``cudaGetErrorString``: a table lookup that needs no GPU or driver) for each code's name and
text: the text every wrapper prints (nccl-tests' ``Test CUDA failure FILE:N '<text>'``,
NCCL's ``Cuda failure N '<text>'``, PyTorch's ``CUDA error: <text>``, MLX's ``cuX(...) failed:
<text>``). The CUDA driver API's ``cuGetErrorString`` gives the same texts for the codes both
APIs share (CUresult values in ``include/cuda.h``, e.g. CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
CUDA_ERROR_SYSTEM_NOT_READY = 802): the ``driver`` column names the CUresult of the same number
where ``cuda.h`` has one. Standard library only (``ctypes``).

Each row: ``number``, ``name`` (cudaError_t), ``driver`` (CUresult of that number or ``-``),
``text`` (cudaGetErrorString). ``meshdoctor/signatures/cuda_errors.py`` groups the rows into
failure classes; ``tests/unit/signatures/test_cuda_errors.py`` fails on a row no class reads.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Tuple

_ENUM = re.compile(r"enum\s+__device_builtin__\s+cudaError\s*\{(?P<body>.*?)\};", re.S)
_VALUE = re.compile(r"\b(cudaError\w+)\s*=\s*(\d+)")
_CURESULT = re.compile(r"enum\s+cudaError_enum\s*\{(?P<body>.*?)\}", re.S)
_DRIVER_VALUE = re.compile(r"\b(CUDA_ERROR_\w+)\s*=\s*(\d+)")


def runtime_codes(header: str) -> List[Tuple[str, int]]:
    """``(name, number)`` of every ``cudaError`` value in ``driver_types.h``'s text."""
    m = _ENUM.search(header)
    if m is None:
        raise ValueError("no cudaError enum in driver_types.h")
    return [(n, int(v)) for n, v in _VALUE.findall(m.group("body"))]


def driver_names(header: str) -> Dict[int, str]:
    """CUresult number -> its name, from ``cuda.h``'s text."""
    m = _CURESULT.search(header)
    if m is None:
        return {}
    out: Dict[int, str] = {}
    for n, v in _DRIVER_VALUE.findall(m.group("body")):
        out.setdefault(int(v), n)
    return out


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuda", required=True, help="a CUDA toolkit folder (include/, lib/)")
    args = ap.parse_args(argv)
    root = Path(args.cuda)
    codes = runtime_codes((root / "include" / "driver_types.h").read_text())
    driver = driver_names((root / "include" / "cuda.h").read_text())
    libs = sorted((root / "lib").glob("libcudart.so.*")) or sorted(
        (root / "lib64").glob("libcudart.so.*")
    )
    lib = ctypes.CDLL(str(libs[0]))
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    lib.cudaGetErrorName.restype = ctypes.c_char_p
    version = "?"
    vfile = root / "version.json"
    api = root / "include" / "cuda_runtime_api.h"
    if vfile.exists():
        version = json.loads(vfile.read_text()).get("cuda", {}).get("version", "?")
    elif api.exists():  # CUDART_VERSION 13000 -> 13.0
        m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", api.read_text())
        if m:
            version = f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}"
    out = sys.stdout
    out.write(f"# source\tCUDA Toolkit {version} include/driver_types.h (enum cudaError)\n")
    out.write(f"# strings\tCUDA Toolkit {version} {libs[0].name} (cudaGetErrorString)\n")
    out.write(f"# driver\tCUDA Toolkit {version} include/cuda.h (enum cudaError_enum)\n")
    out.write("# made by\ttools/extract_cuda_errors.py\n")
    out.write("number\tname\tdriver\ttext\n")
    for name, number in codes:
        got = lib.cudaGetErrorName(number).decode()
        if got != name:  # an alias of another value (none in CUDA 13.0)
            continue
        text = lib.cudaGetErrorString(number).decode().replace("\t", " ").strip()
        out.write(f"{number}\t{name}\t{driver.get(number, '-')}\t{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
