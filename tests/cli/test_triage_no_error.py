"""``meshdoctor triage`` on failures that print no error, read across the inputs rather than line
by line (each test rebuilds the input of the public thread it names): every rank alone in a
group of size 1 (MD890), ranks waiting in different collectives (MD891), and a hang where the
ranks' output stops part-way (MD892)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from tests.helpers import run_cli


def triage(tmp_path: Path, files: Dict[str, str], *extra: str) -> dict:
    paths: List[str] = []
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    r = run_cli("triage", *paths, *extra, "--json")
    assert r.doc is not None and r.rc == r.doc["exit_code"], (r.rc, r.out, r.err)
    return r.doc


def fails(doc: dict) -> List[dict]:
    return [r for r in doc["results"] if r["status"] == "fail"]


# https://github.com/ml-explore/mlx/issues/1196: two Mac Studios under mpirun, a release wheel
# without MPI (fixed by MLX PR #1199); each process prints its rank and all_sum(ones(10))
MPI_WITHOUT_MPI = """\
/opt/homebrew/bin/mpirun  -np 2  --hostfile ~/mpi_hostsfile \
/Users/m2/anaconda3/envs/pythonProject_StreamLit/bin/python \
/Users/m2/PycharmProjects/pythonProject_StreamLit/MX_mpi.py
Hostname: StudioA: 0, array([1, 1, 1, ..., 1, 1, 1], dtype=float32)
Hostname: StudioB: 0, array([1, 1, 1, ..., 1, 1, 1], dtype=float32)
"""

# the same script once MPI was in the wheel (MLX PR #1199, its thread): a real group of 2
MPI_FIXED = """\
/opt/homebrew/bin/mpirun  -x DYLD_LIBRARY_PATH=/opt/homebrew/lib/ -np 2 --hostfile \
~/mpi_hostsfile /Users/m2/anaconda3/envs/pythonProject_StreamLit/bin/python \
/Users/m2/PycharmProjects/pythonProject_StreamLit/MX_mpi.py
Distributed available: True
Distributed available: True
Hostname: PaloAlto: 0, array([2, 2, 2, ..., 2, 2, 2], dtype=float32)
Hostname: Asilomar: 1, array([2, 2, 2, ..., 2, 2, 2], dtype=float32)
"""


def test_every_rank_rank_0_with_an_all_sum_of_ones_is_a_group_of_size_1(tmp_path):
    doc = triage(tmp_path, {"mpirun.log": MPI_WITHOUT_MPI})
    assert doc["verdict"] == "no-go" and doc["exit_code"] == 1
    (r,) = fails(doc)
    assert r["code"] == "MD890" and "FIRST CAUSE" in r["summary"]
    assert "2 processes were started" in r["summary"]
    assert "all_sum of ones" in r["summary"]
    assert "is_available()" in r["remediation"]["text"]
    assert "MLX build has no such backend" in r["remediation"]["text"]
    assert r["remediation"]["command"] == "meshdoctor check --only MD102"


def test_distributed_unavailable_on_each_rank_of_a_launch_is_a_group_of_size_1(tmp_path):
    # the same thread's script prints mx.distributed.is_available() first (its output once fixed
    # is MPI_FIXED); with a wheel without the backend each of the two processes says False
    log = (
        "mpirun -np 2 --hostfile ~/mpi_hostsfile python MX_mpi.py\n"
        "Distributed available: False\nDistributed available: False\n"
        "Hostname: PaloAlto: 0\nHostname: Asilomar: 0\n"
    )
    (r,) = fails(triage(tmp_path, {"mpirun.log": log}))
    assert r["code"] == "MD890" and "'Distributed available: False'" in r["summary"]


def test_a_real_group_of_2_is_no_finding(tmp_path):
    doc = triage(tmp_path, {"mpirun.log": MPI_FIXED})
    assert doc["verdict"] == "go" and not fails(doc)


def test_one_process_alone_is_no_finding(tmp_path):
    # a single-process run is rank 0 of 1 by design
    doc = triage(tmp_path, {"run.log": "rank 0 of 1\ntraining done\n"})
    assert not fails(doc)


# https://github.com/ml-explore/mlx/issues/1210: rank 0 calls all_sum inside `if rank == 0:`
# (to print the loss), rank 1 goes on to the next step's all_sum; rebuilt as the two ranks'
# `py-spy dump --native` in one file
MISMATCH_DUMPS = """\
== rank 0 ==
Process 4711: /Users/sck/miniconda3/bin/python MLX_mpi_example3.py
Python v3.12.3 (/Users/sck/miniconda3/bin/python3.12)

Thread 0x1F3C8F000 (active): "MainThread"
    __psynch_cvwait (libsystem_kernel.dylib)
    ompi_request_default_wait (libopen-mpi.40.dylib)
    MPI_Allreduce (libmpi.40.dylib)
    mlx::core::distributed::mpi::MPIGroup::all_sum (libmlx.dylib)
    mlx::core::eval_impl (libmlx.dylib)
    mlx::core::array::item<float> (libmlx.dylib)
    <module> (/Users/sck/MLX_mpi_example3.py:71)

== rank 1 ==
Process 4712: /Users/sck/miniconda3/bin/python MLX_mpi_example3.py
Python v3.12.3 (/Users/sck/miniconda3/bin/python3.12)

Thread 0x1F3C90000 (active): "MainThread"
    __psynch_cvwait (libsystem_kernel.dylib)
    ompi_request_default_wait (libopen-mpi.40.dylib)
    MPI_Allreduce (libmpi.40.dylib)
    mlx::core::distributed::mpi::MPIGroup::all_sum (libmlx.dylib)
    mlx::core::eval_impl (libmlx.dylib)
    mlx::core::eval (libmlx.dylib)
    train_step (/Users/sck/MLX_mpi_example3.py:58)
    <module> (/Users/sck/MLX_mpi_example3.py:66)
"""

# the same hang seen with lldb on each Mac (`bt all` after `process attach`), one file per rank
LLDB_RANK0 = """\
(lldb) process attach --pid 4711
Process 4711 stopped
* thread #1, queue = 'com.apple.main-thread', stop reason = signal SIGSTOP
  * frame #0: 0x000000018a8e5e2c libsystem_kernel.dylib`__psynch_cvwait + 8
    frame #1: 0x0000000104a3c1d0 libmlx.dylib`mlx::core::distributed::mpi::MPIGroup::all_sum(mlx::core::array const&, mlx::core::array&, mlx::core::Stream) + 200
    frame #2: 0x0000000104a10000 libmlx.dylib`mlx::core::eval_impl(std::vector<mlx::core::array>, bool) + 512
"""
LLDB_RANK1 = """\
(lldb) process attach --pid 4712
Process 4712 stopped
* thread #1, queue = 'com.apple.main-thread', stop reason = signal SIGSTOP
  * frame #0: 0x000000018a8e5e2c libsystem_kernel.dylib`__psynch_cvwait + 8
    frame #1: 0x0000000104a3c1d0 libmlx.dylib`mlx::core::distributed::mpi::MPIGroup::all_gather(mlx::core::array const&, mlx::core::array&, mlx::core::Stream) + 200
"""


def test_ranks_in_the_same_all_sum_from_different_lines_are_an_order_mismatch(tmp_path):
    doc = triage(tmp_path, {"stacks.txt": MISMATCH_DUMPS})
    assert doc["verdict"] == "no-go"
    (r,) = fails(doc)
    assert r["code"] == "MD891" and "FIRST CAUSE" in r["summary"]
    assert "rank 0 waits in all_sum at /Users/sck/MLX_mpi_example3.py:71 (<module>)" in r["summary"]
    assert (
        "rank 1 waits in all_sum at /Users/sck/MLX_mpi_example3.py:58 (train_step)"
        in (r["summary"])
    )
    assert "same all_sum from different lines" in r["summary"]
    assert "if rank ==" in r["remediation"]["text"]


def test_ranks_in_different_collectives_from_lldb_dumps_are_an_order_mismatch(tmp_path):
    doc = triage(tmp_path, {"rank0.txt": LLDB_RANK0, "rank1.txt": LLDB_RANK1})
    (r,) = fails(doc)
    assert r["code"] == "MD891"
    assert "rank 0 waits in all_sum" in r["summary"]
    assert "rank 1 waits in all_gather" in r["summary"]
    assert "different collectives" in r["summary"]


def _sample(pid: int, collective: str) -> str:
    """macOS `sample PID` output of a rank blocked in an MPI collective (its call graph)."""
    return (
        f"Analysis of sampling python3.12 (pid {pid}) every 1 millisecond\n"
        f"Process:         python3.12 [{pid}]\n\n"
        "Call graph:\n"
        "    2740 Thread_8123   DispatchQueue_1: com.apple.main-thread  (serial)\n"
        "    + 2740 start  (in dyld) + 2840  [0x18a5a2b98]\n"
        "    +   2740 mlx::core::eval(std::vector<mlx::core::array>)  (in libmlx.dylib) + 64"
        "  [0x105a00040]\n"
        f"    +     2740 mlx::core::distributed::mpi::MPIGroup::{collective}(mlx::core::array "
        "const&, mlx::core::array&, mlx::core::Stream)  (in libmlx.dylib) + 200  [0x105a1b2c8]\n"
        "    +       2740 __psynch_cvwait  (in libsystem_kernel.dylib) + 8  [0x18a8e5e2c]\n"
    )


def test_ranks_in_different_collectives_from_macos_sample_are_an_order_mismatch(tmp_path):
    # the same hang of ml-explore/mlx#1210 seen with `sample` on each Mac
    files = {
        "rank0.sample.txt": _sample(4711, "all_sum"),
        "rank1.sample.txt": _sample(4712, "all_gather"),
    }
    (r,) = fails(triage(tmp_path, files))
    assert r["code"] == "MD891"
    assert "rank 0 waits in all_sum; rank 1 waits in all_gather" in r["summary"]


def test_every_rank_in_the_same_all_sum_at_the_same_line_is_no_order_mismatch(tmp_path):
    same = MISMATCH_DUMPS.replace("train_step (/Users/sck/MLX_mpi_example3.py:58)\n", "")
    same = same.replace("MLX_mpi_example3.py:66", "MLX_mpi_example3.py:71")
    doc = triage(tmp_path, {"stacks.txt": same})
    assert not any(r["code"] == "MD891" for r in doc["results"])


# https://github.com/ml-explore/mlx/issues/4475: a training loop whose all_sum deadlocks on the
# ring backend: both ranks stop printing at the same step, no exception, no crash
def _steps(rank: int, last: int, total: int = 200) -> str:
    return "".join(
        f"2026-09-09 10:{s // 60:02d}:{s % 60:02d},000 INFO [rank {rank}] step {s}/{total} "
        f"loss {2.5 - s / 100:.3f}\n"
        for s in range(1, last + 1)
    )


def test_every_rank_stopping_part_way_with_no_error_is_a_hang(tmp_path):
    doc = triage(tmp_path, {"rank0.log": _steps(0, 37), "rank1.log": _steps(1, 37)})
    assert doc["verdict"] == "no-go"
    (r,) = fails(doc)
    assert r["code"] == "MD892" and "FIRST CAUSE" in r["summary"]
    assert "stops at 2026-09-09 10:00:37 UTC" in r["summary"]
    assert "step 37/200" in r["summary"]
    text = r["remediation"]["text"]
    assert "meshdoctor triage --running" in text and "--hang-after" in text
    assert "py-spy dump --pid" in text


def test_a_hang_is_read_from_a_later_supervisor_line_and_the_timeout_exit(tmp_path):
    logs = {
        "rank0.log": _steps(0, 37).replace("/200", ""),
        "rank1.log": _steps(1, 37).replace("/200", ""),
        "supervisor.log": "2026-09-09 10:30:00 watchdog: no progress for 1800 s, stopping\n",
    }
    doc = triage(tmp_path, logs, "--exit-code", "124")
    hang = [r for r in fails(doc) if r["code"] == "MD892"]
    assert hang and "FIRST CAUSE" in hang[0]["summary"], doc["results"]
    assert "1763 s after" in hang[0]["summary"]


def test_a_run_that_reached_its_last_step_is_no_hang(tmp_path):
    doc = triage(tmp_path, {"rank0.log": _steps(0, 200), "rank1.log": _steps(1, 200)})
    assert doc["verdict"] == "go" and not fails(doc)


def test_a_run_logged_every_10_steps_that_ended_at_its_last_logged_step_is_no_hang(tmp_path):
    log = "".join(f"2026-09-09 10:00:{s // 10:02d},000 step {s}/200\n" for s in range(0, 200, 10))
    doc = triage(tmp_path, {"rank0.log": log, "rank1.log": log.replace("step", "rank 1 step")})
    assert not fails(doc), doc["results"]
