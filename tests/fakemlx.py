"""A stand-in for the MLX build a check inspects: an interpreter that answers MLX's questions.

The checks ask ``MESHDOCTOR_PYTHON -c <inspection>`` which MLX is installed (see
:func:`meshdoctor.facts.mlx_build.gather_mlx`). On this Linux box the real MLX has one version and no
JACCL; for checks whose diagnosis depends on an older MLX on a Mac (0.31.x resource model, the
GID index JACCL sends from), :func:`install` writes an executable that prints the JSON the
inspection prints, for the version and backends given. ``guard=False`` ships a library without
``JACCL_PROGRESS_TIMEOUT_MS``, ``True`` one with it, ``None`` none at all (unknown).
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Dict, Optional, Union


def install(
    where: Union[str, Path], version: str, *, jaccl: bool = True, guard: Optional[bool] = False
) -> Dict[str, str]:
    """Write a fake interpreter under ``where`` for MLX ``version``; return the env entries to
    add (``MESHDOCTOR_PYTHON``)."""
    where = Path(where)
    lib = where / "mlx" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    libs = []
    if guard is not None:
        so = lib / "libmlx.dylib"
        so.write_bytes(b"\0mlx\0" + (b"JACCL_PROGRESS_TIMEOUT_MS\0" if guard else b"jaccl\0"))
        libs.append(str(so))
    answer = {
        "python": "3.12.0",
        "executable": sys.executable,
        "installed": True,
        "version": version,
        "path": str(where / "mlx"),
        "libs": libs,
        "backends": {"ring": True, "jaccl": jaccl, "mpi": False, "nccl": False},
        "max_recommended_working_set_size": None,
    }
    exe = where / f"python-mlx-{version}"
    exe.write_text("#!/bin/sh\ncat <<'JSON'\n" + json.dumps(answer) + "\nJSON\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return {"MESHDOCTOR_PYTHON": str(exe)}
