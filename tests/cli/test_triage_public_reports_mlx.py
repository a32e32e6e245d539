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


# https://github.com/ml-explore/mlx-examples/issues/1293 (pipeline_generate.py on a Qwen2 model)
PIPELINE_QWEN2 = """\
$ mlx.launch --hostfile hosts.json --backend ring pipeline_generate.py --model \
mlx-community/DeepSeek-R1-Distill-Qwen-32B-4bit --prompt "hello"
""" + 2 * """\
Traceback (most recent call last):
  File "/Users/user/mlx-examples/llms/mlx_lm/examples/pipeline_generate.py", line 73, in <module>
    model.model.pipeline(group)
  File "/Users/user/miniconda3/envs/py310/lib/python3.10/site-packages/mlx/nn/layers/base.py", \
line 103, in __getattr__
    super(Module, self).__getattribute__(key)
AttributeError: 'Qwen2Model' object has no attribute 'pipeline'
""" + """\
[WARN] Node with rank 0 exited with code 1
[WARN] Node with rank 1 exited with code 1
"""


def test_a_model_without_pipeline_support_is_named_not_the_network(tmp_path):
    doc = triage(tmp_path, {"launch.log": PIPELINE_QWEN2})
    f = first(doc)
    assert f["code"] == "MD663" and f["groups"]["type"] == "AttributeError"
    assert "(Qwen2Model) has no pipeline-parallel support in mlx-lm" in f["meaning"]
    assert "not a network or backend fault" in f["meaning"]
    assert "one machine" in f["meaning"]
    ranks = [x for x in doc["triage"]["findings"] if x["code"] == "MD657"]
    assert len(ranks) == 2 and all(x["consequence_of"] == f["id"] for x in ranks)


def test_mlx_lm_sharded_load_refusal_is_the_same_kind(tmp_path):
    # mlx-lm's own words for it (mlx_lm/utils.py sharded_load)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/sharded_generate.py", line 63, in <module>\n'
        "    model, tokenizer = sharded_load(args.model, pipeline_group, tensor_group)\n"
        "ValueError: The model does not support tensor parallelism but a tensor_group was "
        "provided\n"
    )
    f = first(triage(tmp_path, {"rank0.log": text}))
    assert f["code"] == "MD663" and "has no tensor-parallel support" in f["meaning"]


# https://github.com/ml-explore/mlx/issues/4276 (ring recv errno 14 on 1 GbE and Thunderbolt)
EFAULT_RECEIVER = 10 * "[ring] Receiving from socket 51 failed with errno 14\n" + (
    "[ring] Too many send/recv errors. Aborting...\n"
)
EPIPE_SENDER = 3 * "[ring] Sending to socket 48 failed with errno 32\n"


def test_ring_recv_efault_is_a_memory_side_fault_and_the_peer_epipe_its_echo(tmp_path):
    doc = triage(tmp_path, {"rank0.log": EPIPE_SENDER, "rank1.log": EFAULT_RECEIVER})
    f = first(doc)
    assert f["code"] == "MD615" and f["rank"] == 1 and f["groups"]["errno"] == "14"
    assert "memory-side fault" in f["meaning"] and "not the network" in f["meaning"]
    assert "no cable, Wi-Fi or link change helps" in f["meaning"]
    assert f["remedy"].startswith("Errno 14 (EFAULT) is a memory-side fault")
    echo = next(x for x in doc["triage"]["findings"] if x["rank"] == 0)
    assert echo["groups"]["errno"] == "32" and echo["consequence_of"] == f["id"]


# https://github.com/exo-explore/exo/issues/2111 (4 Macs, JACCL tensor parallel, 11 minutes in)
EXO_PD = """\
[ 2026-05-23 14:31:07.114 | INFO     | exo.worker.runner.runner_supervisor:start_task:182 ] \
Starting task ChatCompletion(task_id='c1d1e9a2')
[ 2026-05-23 14:42:19.877 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner \
8e2f4c1a crashed with critical exception [jaccl] Couldn't allocate protection domain
RuntimeError: [jaccl] Couldn't allocate protection domain
[ 2026-05-23 14:42:20.011 | WARNING  | exo.worker.runner.bootstrap:entrypoint:59 ] Runner \
5d6e7f80 crashed with critical exception [jaccl] Recv failed with errno=2
RuntimeError: [jaccl] Recv failed with errno=2
libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command \
buffer execution failed: Internal Error (0000000e:Internal Error)
"""


def test_jaccl_protection_domain_failure_is_exhausted_driver_state_first(tmp_path):
    doc = triage(tmp_path, {"runner.log": EXO_PD})
    f = first(doc)
    assert f["code"] == "MD604"
    assert "run out of verbs resources or is in a broken state" in f["meaning"]
    assert f["remedy"].startswith("Reboot this host, or replug its Thunderbolt cable")
    assert f["check"] == "meshdoctor check --only MD208"
    rest = [x for x in doc["triage"]["findings"] if not x["first_cause"] and x["code"] != "MD690"]
    assert {x["code"] for x in rest} == {"MD606", "MD661"}
    assert all(x["consequence_of"] == f["id"] for x in rest)
