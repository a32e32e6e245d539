"""Public failure reports of a blind sample, half A (the half built against): their inputs,
verbatim, with what a user sees once their kinds were read. Each constant names its report
by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/nccl/issues/2077
NCCL_2077_ENV = "- **Hardware:** 8x NVIDIA H200 (NV18 NVLink interconnect, 4x NVSwitch)\n- **NCCL:** 2.29.7+cuda12.8\n- **CUDA:** 13.0\n- **Driver:** 580.65.06\n- **Fabric Manager:** 580.65.06 (running, State: Completed, Status: Success)\n- **OS:** RHEL 10 (kernel 6.12.0)\n- **PyTorch:** upstream main (commit 5bfd4be)\n"

# https://github.com/NVIDIA/nccl/issues/2077
NCCL_2077_RANK = "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error, NCCL version 2.29.7\nncclUnhandledCudaError: Call to CUDA function failed.\nFailed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'.\nThis is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\nDisable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.\n"

# https://github.com/sgl-project/sglang/issues/37561
SGLANG_37561_WATCHDOG = "WorkNCCL(\n  SeqNum=6,\n  OpType=ALLREDUCE,\n  NumelIn=57344,\n  NumelOut=57344,\n  Timeout(ms)=600000\n)\n\nWorkNCCL(\n  SeqNum=48559,\n  OpType=ALLREDUCE,\n  NumelIn=0,\n  NumelOut=0,\n  Timeout(ms)=600000\n)\n"

# https://github.com/pytorch/torchtune/issues/392
TORCHTUNE_392_TORCHRUN = "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).\n"

# https://github.com/vllm-project/vllm/issues/44185
VLLM_44185_LAUNCH = 'export NCCL_P2P_DISABLE=1\nexport NCCL_NET_DISABLE_INTRA=1\nexport NCCL_IB_GID_INDEX=1\nexport NCCL_IB_DISABLE=0\nexport NCCL_NET_GDR_LEVEL=3\n\n\nvllm serve /home/weight/Qwen3.5-35B-A3B/ \\\n  --max-model-len 2048 \\\n  --max-num-batched-tokens 256 \\\n  --trust-remote-code \\\n  --enable-expert-parallel \\\n  --data-parallel-size 2 \\\n  --speculative_config \'{"method":"mtp", "num_speculative_tokens":3}\' \\\n  --enforce-eager \\\n2>&1 | tee output.log\n'

# https://github.com/vllm-project/vllm/issues/44185
VLLM_44185_SERVER = "(EngineCore_DP1 pid=1455) INFO 05-28 14:44:28 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n(EngineCore_DP0 pid=1454) INFO 05-28 14:45:27 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n(EngineCore_DP1 pid=1455) INFO 05-28 14:45:28 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n(EngineCore_DP0 pid=1454) INFO 05-28 14:46:27 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"

# https://github.com/vllm-project/vllm/issues/52504
VLLM_52504_ENV = "2× NVIDIA DGX Spark (GB10, SM12.1), connected back-to-back over 200G RoCE. vLLM TP=2 across the two nodes, `mp` distributed executor backend. NCCL 2.28.9 (as shipped). DeepSeek-V4-Flash-0731.\n"

# https://github.com/vllm-project/vllm/issues/52504
VLLM_52504_SERVER = "RPC call to sample_tokens timed out\n"

# https://github.com/jax-ml/jax/pull/20588
JAX_20588_RANK = "CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:90: operation gpuDeviceGetAttribute( &major, GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) failed: CUDA_ERROR_NOT_INITIALIZED (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"

# https://github.com/NVIDIA/nccl-tests/issues/217
NCCL_TESTS_217_LAUNCH = (
    "export NCCL_SOCKET_IFNAME=lo\n./build/all_reduce_perf -b 8 -e 128M -f 2 -g 1\n"
)

# https://github.com/NVIDIA/nccl-tests/issues/217
NCCL_TESTS_217_RANK0 = "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid  70918 on NAME device  0 [0x01] NVIDIA RTX A6000\nNAME :70918:70918 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\nNAME :70918:70918 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\nNAME :70918:70918 [0] NCCL INFO NET/Plugin: Using internal network plugin.\nNAME :70918:70918 [0] NCCL INFO cudaDriverVersion 12040\nNCCL version 2.21.5+cuda12.4\nNAME :70918:70928 [0] NCCL INFO NET/IB : No device found.\nNAME :70918:70928 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\nNAME :70918:70928 [0] NCCL INFO Using non-device net plugin version 0\nNAME :70918:70928 [0] NCCL INFO Using network Socket\n\nNAME :70918:70927 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer localhost<56086>\nNAME :70918:70927 [0] NCCL INFO misc/socket.cc:752 -> 6\nNAME:70918:70927 [0] NCCL INFO misc/socket.cc:428 -> 6\n"

# https://github.com/NVIDIA/nccl/issues/2079
NCCL_2079_DESCRIPTION = "`ncclAllReduce` enters an infinite spin-wait deadlock on two NVIDIA RTX 5880 Ada Generation GPUs connected via PCIe Host Bridge (PHB) topology with no NVLink. `ncclCommInitRank` completes successfully, but the first collective operation (`ncclAllReduce`) causes both GPUs to spin at 100% SM utilization with 0% memory utilization indefinitely—no timeout, no error, no forward progress.\n\nSetting `NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1` (forcing socket transport) resolves the deadlock completely.\n"

# https://github.com/NVIDIA/nccl/issues/2079
NCCL_2079_ENV = "- **GPUs**: 2x NVIDIA RTX 5880 Ada Generation (48 GB, SM 8.9)\n- **Topology**: PCIe Gen4 x16, PHB (PCIe Host Bridge), no NVLink\n  - GPU 0: PCIe bus `0000:41:00.0`\n  - GPU 1: PCIe bus `0000:61:00.0`\n  - `nvidia-smi topo -m` reports `NODE` between the two GPUs\n- **Driver**: 580.82.09\n- **CUDA**: 13.0 (host), 12.8 (container runtime)\n- **NCCL**: 2.25.1 (from `apt` in `nvidia/cuda:12.8.0-devel-ubuntu22.04`). Also reproduced with NCCL 2.27.5 bundled in vLLM 0.15.1.\n- **OS**: Ubuntu (Pop!_OS), Linux 6.16.3\n- **Container**: Docker with `--gpus all --ipc=host`\n"

# https://github.com/NVIDIA/nccl/issues/2079
NCCL_2079_TOPO = "        GPU0    GPU1    CPU Affinity    NUMA Affinity\nGPU0     X      NODE    0-63            0\nGPU1    NODE     X      0-63            0\n"


def test_nccls_last_error_printed_bare_under_pytorchs_error_is_its_reason(tmp_path):
    # NVIDIA/nccl #2077: NVLS multicast objects used up; the CUDA 'out of memory' is not the GPU's
    doc = triage_files(tmp_path, {"env.txt": NCCL_2077_ENV, "rank.log": NCCL_2077_RANK})
    f = first(doc)
    assert f["code"] == "MD653" and "NVLS" in f["meaning"] and "nvls.cc" in f["meaning"]
    assert f["remedy"].startswith("NCCL_NVLS_ENABLE=0")
    assert "MD651" not in {x["code"] for x in doc["triage"]["findings"]}


def test_watchdog_records_of_different_collectives_are_an_order_mismatch(tmp_path):
    # sgl-project/sglang #37561: ranks that issued different collectives time out apart
    doc = triage_files(tmp_path, {"watchdog.txt": SGLANG_37561_WATCHDOG})
    f = first(doc)
    assert f["code"] == "MD891"
    assert "SeqNum 6 ALLREDUCE of 57344 elements; SeqNum 48559 ALLREDUCE of 0" in f["meaning"]
    assert "TORCH_NCCL_DESYNC_DEBUG=1" in f["remedy"]


def test_c10d_bind_failure_of_its_older_form_is_the_port_in_use(tmp_path):
    # pytorch/torchtune #392: two jobs on one host, both on torchrun's default port 29500
    doc = triage_files(tmp_path, {"torchrun.log": TORCHTUNE_392_TORCHRUN})
    f = first(doc)
    assert f["code"] == "MD839" and "port 29500" in f["meaning"]
    assert "--rdzv-endpoint localhost:0" in f["remedy"]


def test_an_engine_whose_workers_stopped_answering_is_a_hang(tmp_path):
    # vllm-project/vllm #44185 (ranks on different paths), #52504 (a collective stuck in NCCL)
    doc = triage_files(tmp_path, {"launch.txt": VLLM_44185_LAUNCH, "server.log": VLLM_44185_SERVER})
    f = first(doc)
    assert f["code"] == "MD892" and "(4 times)" in f["meaning"]
    assert "py-spy dump --pid" in f["remedy"] and "different collectives" in f["remedy"]
    doc = triage_files(tmp_path, {"env.txt": VLLM_52504_ENV, "server.log": VLLM_52504_SERVER})
    f = first(doc)
    assert f["code"] == "MD892" and "'sample_tokens'" in f["meaning"]
    assert "--enforce-eager" in f["remedy"]


def test_a_cuda_driver_api_name_is_read_by_its_class(tmp_path):
    # jax-ml/jax #20588: a device query before cuInit (CUDA_ERROR_NOT_INITIALIZED)
    doc = triage_files(tmp_path, {"rank.log": JAX_20588_RANK})
    f = first(doc)
    assert f["code"] == "MD830" and "before cuInit()" in f["meaning"]


def test_a_peer_closed_on_loopback_names_software_on_the_host(tmp_path):
    # NVIDIA/nccl-tests #217: one process, its own loopback sockets closed by endpoint security
    doc = triage_files(
        tmp_path, {"launch.txt": NCCL_TESTS_217_LAUNCH, "rank0.log": NCCL_TESTS_217_RANK0}
    )
    f = first(doc)
    assert f["code"] == "MD686" and "loopback" in f["meaning"]
    assert "endpoint security" in f["meaning"]


def test_a_pasted_topology_names_the_gpus_through_the_cpu(tmp_path):
    # NVIDIA/nccl #2079: two PCIe GPUs, P2P redirected by ACS: the first all_reduce never ends
    doc = triage_files(
        tmp_path,
        {
            "description.txt": NCCL_2079_DESCRIPTION,
            "env.txt": NCCL_2079_ENV,
            "topo.txt": NCCL_2079_TOPO,
        },
    )
    codes = {x["code"] for x in doc["triage"]["findings"]}
    assert "MD897" in codes
    f = next(x for x in doc["triage"]["findings"] if x["code"] == "MD897")
    assert "ACS" in f["remedy"] and "NCCL_P2P_DISABLE=1" in f["remedy"]
