"""``meshdoctor triage`` on public MLX failure reports whose first cause is a kind of its own
(each input cites its thread): the first cause named, what it means and what to do, and which
findings are only its consequences."""

from __future__ import annotations


from tests.helpers import first_cause as first, run_cli
from tests.helpers import triage_files as triage


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
PIPELINE_QWEN2 = (
    """\
$ mlx.launch --hostfile hosts.json --backend ring pipeline_generate.py --model \
mlx-community/DeepSeek-R1-Distill-Qwen-32B-4bit --prompt "hello"
"""
    + 2
    * """\
Traceback (most recent call last):
  File "/Users/user/mlx-examples/llms/mlx_lm/examples/pipeline_generate.py", line 73, in <module>
    model.model.pipeline(group)
  File "/Users/user/miniconda3/envs/py310/lib/python3.10/site-packages/mlx/nn/layers/base.py", \
line 103, in __getattr__
    super(Module, self).__getattribute__(key)
AttributeError: 'Qwen2Model' object has no attribute 'pipeline'
"""
    + """\
[WARN] Node with rank 0 exited with code 1
[WARN] Node with rank 1 exited with code 1
"""
)


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
    # the check it suggests, with a deadline long enough to prove a hung verbs call
    assert f["check"] == "meshdoctor check --only MD208 --timeout 45"
    rest = [x for x in doc["triage"]["findings"] if not x["first_cause"] and x["code"] != "MD690"]
    assert {x["code"] for x in rest} == {"MD606", "MD661"}
    assert all(x["consequence_of"] == f["id"] for x in rest)


# https://github.com/ml-explore/mlx/issues/1804 (pipeline_generate.py on 192, 128 and 64 GB Macs)
UNEVEN_RAM = """\
$ mpirun -np 3 --hostfile hosts.txt /opt/anaconda3/bin/python3 pipeline_generate.py --prompt \
"Hello world"
[machine1] [WARNING] Generating with a model that requires 105432 MB which is close to the \
maximum recommended size of 157286 MB. This can be slow.
[machine2] [WARNING] Generating with a model that requires 105432 MB which is close to the \
maximum recommended size of 104857 MB. This can be slow.
libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command \
buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)
[machine1:51234] *** Process received signal ***
[machine1:51234] Signal: Abort trap: 6 (6)
[machine1:51234] *** End of error message ***
--------------------------------------------------------------------------
prterun noticed that process rank 0 with PID 51234 on node machine1 exited on
signal 6 (Abort trap: 6).
--------------------------------------------------------------------------
"""
HOSTS = "machine1 slots=1\nmachine2 slots=1\nmachine3 slots=1\n"


def test_the_host_that_printed_nothing_is_the_suspect_not_the_gpu_timeout(tmp_path):
    (tmp_path / "hosts.txt").write_text(HOSTS)
    doc = triage(tmp_path, {"mpirun.log": UNEVEN_RAM})
    f = first(doc)
    assert f["code"] == "MD691" and f["host"] == "machine3" and f["rank"] == 2
    assert "only machine1, machine2 printed anything" in f["meaning"]
    assert "the model needs 105432 MB" in f["meaning"] and "equal share" in f["meaning"]
    assert "ssh machine3 meshdoctor triage --crash-reports" in f["remedy"]
    assert "split the pipeline by RAM" in f["remedy"]
    timeout = next(x for x in doc["triage"]["findings"] if x["code"] == "MD616")
    assert timeout["consequence_of"] == f["id"] and not timeout["first_cause"]


def test_without_the_hostfile_the_unheard_rank_is_still_the_suspect(tmp_path):
    f = first(triage(tmp_path, {"mpirun.log": UNEVEN_RAM}))
    assert f["code"] == "MD691" and f["host"] is None
    assert "other than machine1, machine2" in f["meaning"]


def test_a_hostfile_outside_the_logs_folder_is_not_read(tmp_path):
    (tmp_path / "hosts.txt").write_text(HOSTS)
    (tmp_path / "logs").mkdir()
    log = UNEVEN_RAM.replace("--hostfile hosts.txt", "--hostfile ../hosts.txt")
    f = first(triage(tmp_path / "logs", {"mpirun.log": log}))
    assert f["code"] == "MD691" and f["host"] is None


def test_every_host_heard_or_a_cause_printed_names_no_silent_rank(tmp_path):
    heard = UNEVEN_RAM.replace("-np 3", "-np 2")
    assert "MD691" not in {
        x["code"] for x in triage(tmp_path, {"a.log": heard})["triage"]["findings"]
    }
    own = UNEVEN_RAM + "RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    f = first(triage(tmp_path, {"b.log": own}))
    assert f["code"] == "MD604"


# https://github.com/ml-explore/mlx-examples/issues/1185 (distributed mlx_lm.lora on mixed Macs)
LORA_TIMEOUT = """\
$ mpirun --hostfile ~/hosts.txt -n 3 --wdir /Users/ivan/.pyenv/shims mlx_lm.lora --model \
mistralai/Mistral-7B-v0.3 --train --data ~/Desktop/data --max-seq-length 8192 --batch-size 3
Loading pretrained model
Loading datasets
Training
Trainable parameters: 0.047% (3.408M/7248.024M)
Starting training..., iters: 1000
libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command \
buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)
[Mac:46703] *** Process received signal ***
[Mac:46703] Signal: Abort trap: 6 (6)
[Mac:46703] *** End of error message ***
--------------------------------------------------------------------------
prterun noticed that process rank 1 with PID 46703 on node Mac exited on
signal 6 (Abort trap: 6).
--------------------------------------------------------------------------
"""


def test_gpu_timeout_of_a_distributed_reduction_names_the_cpu_stream_and_mlx_lm(tmp_path):
    doc = triage(tmp_path, {"mpirun.log": LORA_TIMEOUT})
    f = first(doc)
    assert f["code"] == "MD616" and "all_sum" in f["meaning"]
    assert "slower or stalled peer" in f["meaning"]
    assert f["remedy"].startswith("Run collectives on stream=mx.cpu")
    assert "mlx-examples PR #1200: upgrade mlx-lm" in f["remedy"]
    # one host heard of three, and no hostfile beside the log: no silent rank is guessed
    assert "MD691" not in {x["code"] for x in doc["triage"]["findings"]}


# https://github.com/jundot/omlx/issues/3037 (two Mac minis over Thunderbolt 4)
OMLX_LOG = """\
2026-08-22 18:03:11,402 INFO omlx.cluster.autoconfigure: fabric: thunderbolt link mini-a <-> \
mini-b (40 Gb/s)
2026-08-22 18:03:11,403 INFO omlx.cluster.autoconfigure: backend: jaccl-ring (Thunderbolt link \
detected, without RDMA)
[ERROR] mini-b does not seem to have RDMA enabled
2026-08-22 18:03:14,210 ERROR omlx.cluster.launcher: cluster launch failed: mlx.launch exited \
with code 1
"""
MINI_B = """\
$ rdma_ctl status
enabled
$ ibv_devices
    device                 node GUID
    ------              ----------------
$ system_profiler SPThunderboltDataType | grep Speed
          Speed: Up to 40 Gb/s
"""


def test_no_rdma_device_on_a_thunderbolt_4_link_says_use_the_ring_backend(tmp_path):
    doc = triage(tmp_path, {"omlx-cluster.log": OMLX_LOG, "mini-b-rdma.txt": MINI_B})
    f = first(doc)
    assert f["code"] == "MD689" and f["groups"]["host"] == "mini-b"
    assert "mini-b has no RDMA device" in f["meaning"] and "Thunderbolt 4" in f["meaning"]
    assert "enabling it again will not help" in f["remedy"]
    assert "`mlx.launch --backend ring`" in f["remedy"] and "not jaccl or jaccl-ring" in f["remedy"]
    assert f["remedy"].index("ring backend") < f["remedy"].index("Recovery")


def test_the_pasted_rdma_transcript_decides_thunderbolt_4(tmp_path):
    doc = triage(tmp_path, {"omlx-cluster.log": OMLX_LOG, "mini-b-rdma.txt": MINI_B})
    f = first(doc)
    assert "Decided by mini-b-rdma.txt: `rdma_ctl status` says enabled" in f["meaning"]
    assert "runs at up to 40 Gb/s: Thunderbolt 4 (or older) hardware" in f["meaning"]
    assert "rdma_ctl enable again will not help" in f["meaning"]


def test_a_thunderbolt_5_transcript_decides_nothing(tmp_path):
    tb5 = MINI_B.replace("enabled", "disabled").replace("40 Gb/s", "120 Gb/s")
    f = first(triage(tmp_path, {"omlx-cluster.log": OMLX_LOG, "mini-b-rdma.txt": tb5}))
    assert f["code"] == "MD689" and "Decided by" not in f["meaning"]
