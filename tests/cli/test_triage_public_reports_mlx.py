"""``meshdoctor triage`` on public MLX failure reports whose first cause is a kind of its own
(each input cites its thread): the first cause named, what it means and what to do, and which
findings are only its consequences."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from tests.helpers import run_cli


def triage(tmp_path: Path, files: Dict[str, str]) -> dict:
    paths: List[str] = []
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    r = run_cli("triage", *paths, "--json")
    assert r.rc == 1, (r.rc, r.out, r.err)
    return r.doc


def first(doc: dict) -> dict:
    return next(f for f in doc["triage"]["findings"] if f["first_cause"])


# https://github.com/ml-explore/mlx/issues/1964 (mpirun -n 2 in a Debian container)
MPI_LINUX = """\
$ mpirun -n 2 python train.py
Traceback (most recent call last):
Traceback (most recent call last):
  File "/home/mpiuser/train.py", line 3, in <module>
    dist = mx.distributed.init(strict=True, backend="mpi")
RuntimeError: Cannot initialize MPI
  File "/home/mpiuser/train.py", line 3, in <module>
    dist = mx.distributed.init(strict=True, backend="mpi")
RuntimeError: Cannot initialize MPI
--------------------------------------------------------------------------
prterun detected that one or more processes exited with non-zero status,
thus causing the job to be terminated. The first process to do so was:

   Process name: [prterun-mpi-launcher-1@1,0]
   Exit code:    1
--------------------------------------------------------------------------
"""


def test_mpi_init_on_linux_names_the_library_name_mlx_loads(tmp_path):
    f = first(triage(tmp_path, {"mpirun.log": MPI_LINUX}))
    assert f["code"] == "MD623" and f["groups"]["mpi"] == "MPI"
    assert "libmpi.dylib" in f["meaning"] and "libmpi.so" in f["meaning"]
    assert "0.24.1" in f["meaning"] and "MLX_MPI_LIBNAME" in f["remedy"]
    assert "github.com/ml-explore/mlx/issues/1964" in run_cli("explain", "MD623").out
