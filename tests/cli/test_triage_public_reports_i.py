"""Public failure reports of a second blind sample, half A (the half built against): their
inputs, verbatim, with what a user sees once their kinds were read. Each constant names its
report by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/TensorRT-LLM/issues/1625
TRTLLM_1625_LAUNCH = "mpirun -n 2 --allow-run-as-root  /app/tensorrt_llm/benchmarks/cpp/gptSessionBenchmark --engine_dir ./examples/qwen/trtModel/fp16 --warm_up 2 --batch_size $batch_size --duration 0 --num_runs 3 --input_output_len $in_out_dims --log_level info\n"

# https://github.com/NVIDIA/TensorRT-LLM/issues/1625
TRTLLM_1625_RANK = "[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported between these two devices\n"

# https://github.com/NVIDIA-NeMo/RL/issues/564
NEMORL_564_ERROR = 'raise RuntimeError(f"NCCL error: {error_str}")\nRuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n'

# https://github.com/NVIDIA-NeMo/RL/issues/564
NEMORL_564_LAUNCH = "uv run pytest tests/unit/models/generation/test_vllm_generation.py::test_vllm_refit_non_collocated_handles_update\n"

# https://github.com/NVIDIA-NeMo/RL/issues/564
NEMORL_564_NCCL = "transport/p2p.cc:298 NCCL WARN Cuda failure 'invalid argument'\n"

# https://github.com/pytorch/pytorch/issues/186591
PYTORCH_186591_ENV = "[pip3] nvidia-nccl-cu12==2.29.3\n[pip3] nvidia-nccl-cu13==2.29.7\n"

# https://github.com/deepseek-ai/DeepEP/issues/316
DEEPEP_316_ENV = "nvidia-cublas-cu12        12.6.4.1\nnvidia-cuda-cupti-cu12    12.6.80\nnvidia-cuda-nvrtc-cu12    12.6.77\nnvidia-cuda-runtime-cu12  12.6.77\nnvidia-cudnn-cu12         9.5.1.17\nnvidia-cufft-cu12         11.3.0.4\nnvidia-cufile-cu12        1.11.1.6\nnvidia-curand-cu12        10.3.7.77\nnvidia-cusolver-cu12      11.7.1.2\nnvidia-cusparse-cu12      12.5.4.2\nnvidia-cusparselt-cu12    0.6.3\nnvidia-ml-py              12.575.51\nnvidia-nccl-cu12          2.26.2\nnvidia-nvjitlink-cu12     12.6.85\nnvidia-nvshmem-cu12       3.3.9\nnvidia-nvtx-cu12          12.6.77\npynvml                    12.0.0\npython-dotenv             1.1.0\n"

# https://github.com/deepseek-ai/DeepEP/issues/316
DEEPEP_316_LAUNCH = "MASTER_ADDR=192.168.10.20 MASTER_PORT=10086 WORLD_SIZE=2 RANK=0 python3 tests/test_internode.py\nMASTER_ADDR=192.168.10.20 MASTER_PORT=10086 WORLD_SIZE=2 RANK=1 python3 tests/test_internode.py\n"

# https://github.com/deepseek-ai/DeepEP/issues/316
DEEPEP_316_RANK0 = "IPC failure: Sending data over socket failed: No such file or directory\n/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/host/mem/mem_heap.cpp:exchange_heap_memory_handle:775: Fatal IPC Failure\n"

# https://github.com/vllm-project/vllm/issues/7201
VLLM_7201_ENV = "Versions of relevant libraries:\n[pip3] numpy==1.26.3\n[pip3] nvidia-nccl-cu11==2.20.5\n[pip3] pyzmq==26.0.3\n[pip3] torch==2.3.1+cu118\n[pip3] torchvision==0.18.1+cu118\n[pip3] transformers==4.43.1\n[pip3] triton==2.3.1\n[conda] numpy                     1.26.3                   pypi_0    pypi\n[conda] nvidia-nccl-cu11          2.20.5                   pypi_0    pypi\n[conda] pyzmq                     26.0.3                   pypi_0    pypi\n[conda] torch                     2.3.1+cu118              pypi_0    pypi\n[conda] torchvision               0.18.1+cu118             pypi_0    pypi\n[conda] transformers              4.43.1                   pypi_0    pypi\n[conda] triton                    2.3.1                    pypi_0    pypi\nROCM Version: Could not collect\nNeuron SDK Version: N/A\nvLLM Version: 0.5.3.post1\nvLLM Build Flags:\nCUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled\nGPU Topology:\nGPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity\nGPU0     X      PHB     PHB     PHB     PHB     PHB     PHB     PHB     0-85            N/A\nGPU1    PHB      X      PHB     PHB     PHB     PHB     PHB     PHB     0-85            N/A\nGPU2    PHB     PHB      X      PHB     PHB     PHB     PHB     PHB     0-85            N/A\n"

# https://github.com/vllm-project/vllm/issues/7201
VLLM_7201_RANK0 = '[rank0]:   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl.py", line 118, in all_reduce\n[rank0]:     self.nccl.ncclAllReduce(buffer_type(tensor.data_ptr()),\n[rank0]:   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl_wrapper.py", line 257, in ncclAllReduce\n[rank0]:     self.NCCL_CHECK(self._funcs["ncclAllReduce"](sendbuff, recvbuff, count,\n[rank0]:   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl_wrapper.py", line 223, in NCCL_CHECK\n[rank0]:     raise RuntimeError(f"NCCL error: {error_str}")\n[rank0]: RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n/home/wjc/miniconda3/envs/vllmenv2/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be 1 leaked shared_memory objects to clean up at shutdown\n  warnings.warn(\'resource_tracker: There appear to be %d \'\n'

# https://github.com/vllm-project/vllm/issues/7201
VLLM_7201_WORKER = '(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]   File "/home/wjc/vllm_test/vllm/vllm/distributed/parallel_state.py", line 291, in all_reduce\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]     pynccl_comm.all_reduce(input_)\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl.py", line 118, in all_reduce\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]     self.nccl.ncclAllReduce(buffer_type(tensor.data_ptr()),\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl_wrapper.py", line 257, in ncclAllReduce\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]     self.NCCL_CHECK(self._funcs["ncclAllReduce"](sendbuff, recvbuff, count,\n(VllmWorkerProcess pid=3615391) ERROR 08-06 18:38:55 multiproc_worker_utils.py:226]   File "/home/wjc/vllm_test/vllm/vllm/distributed/device_communicators/pynccl_wrapper.py", line 223, in NCCL_CHECK\n'


def test_another_programs_error_tag_is_not_mlx_launchs_and_its_cuda_text_is_read(tmp_path):
    # NVIDIA/TensorRT-LLM #1625: custom all-reduce on two GPUs without peer access
    doc = triage_files(tmp_path, {"launch.txt": TRTLLM_1625_LAUNCH, "rank.log": TRTLLM_1625_RANK})
    f = first(doc)
    assert f["code"] == "MD830" and "cudaErrorPeerAccessUnsupported" in f["meaning"]
    assert "custom all-reduce" in f["remedy"]
    assert "MD600" not in {x["code"] for x in doc["triage"]["findings"]}


def test_a_cuda_ipc_failure_in_nccls_p2p_transport_names_cumem(tmp_path):
    # NVIDIA-NeMo/RL #564: NCCL_CUMEM_ENABLE=0 in the workers, p2p.cc 'invalid argument'
    doc = triage_files(
        tmp_path,
        {
            "error.txt": NEMORL_564_ERROR,
            "launch.txt": NEMORL_564_LAUNCH,
            "nccl.log": NEMORL_564_NCCL,
        },
    )
    f = first(doc)
    assert f["code"] == "MD830" and "cudaIpcOpenMemHandle" in f["meaning"]
    assert f["remedy"].startswith(
        "Give every process of the communicator the same NCCL_CUMEM_ENABLE"
    )


def test_two_nccl_wheels_in_one_environment_are_named(tmp_path):
    # pytorch/pytorch #186591: nvidia-nccl-cu12 beside nvidia-nccl-cu13
    f = first(triage_files(tmp_path, {"env.txt": PYTORCH_186591_ENV}))
    assert f["code"] == "MD898"
    assert "nvidia-nccl-cu12 2.29.3, nvidia-nccl-cu13 2.29.7" in f["meaning"]


def test_nvshmems_ipc_failure_names_the_host_names(tmp_path):
    # deepseek-ai/DeepEP #316: two hosts with the same host name
    doc = triage_files(
        tmp_path,
        {"env.txt": DEEPEP_316_ENV, "launch.txt": DEEPEP_316_LAUNCH, "rank0.log": DEEPEP_316_RANK0},
    )
    f = first(doc)
    assert f["code"] == "MD848" and "same host name" in f["meaning"]


def test_a_topology_beside_a_failure_is_its_setting_not_a_second_cause(tmp_path):
    # vllm-project/vllm #7201: an NCCL error with nvidia-smi topo -m in the environment dump
    doc = triage_files(
        tmp_path,
        {"env.txt": VLLM_7201_ENV, "rank0.log": VLLM_7201_RANK0, "worker.log": VLLM_7201_WORKER},
    )
    assert first(doc)["code"] == "MD650"
    (topo,) = [x for x in doc["triage"]["findings"] if x["code"] == "MD897"]
    assert not topo["first_cause"]
