"""Public failure reports of a third blind sample, half A (the half built against): their
inputs, verbatim, with what a user sees once their kinds were read. Each constant names its
report by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/nccl/issues/1612
NCCL_1612_NCCL = "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>\n[0] NCCL INFO misc/socket.cc:80 -> 6\n[0] NCCL INFO misc/socket.cc:474 -> 6\n[0] NCCL INFO misc/socket.cc:628 -> 6\n[0] NCCL INFO misc/socket.cc:731 -> 6\n[0] NCCL INFO bootstrap.cc:701 -> 6\n[0] NCCL INFO init.cc:1402 -> 6\n[0] NCCL INFO group.cc:75 -> 6 [Async thread]\n[0] NCCL INFO group.cc:423 -> 6\n[0] NCCL INFO group.cc:573 -> 6\n[0] NCCL INFO group.cc:106 -> 6\n"

# https://github.com/NVIDIA/nccl/issues/1808
NCCL_1808_WORKER_9 = "2025-08-12 09:37:02.216313 worker-9 >> :168:1228 [2] NCCL INFO Connected all trees\n2025-08-12 09:37:02.25487 worker-9 >> :169:1234 [3] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259538 worker-9 >> :170:1232 [4] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259607 worker-9 >> :171:1235 [5] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259932 worker-9 >> :167:1230 [1] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259934 worker-9 >> :166:1233 [0] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259936 worker-9 >> :173:1229 [7] NCCL INFO Connected all trees\n2025-08-12 09:37:02.259938 worker-9 >> :172:1231 [6] NCCL INFO Connected all trees\n2025-08-12 09:37:03.463948 worker-9 >> [2025-08-12 01:37:03] :166:1226 [0] misc/socket.cc:484 NCCL WARN socketFinalizeAccept: wrong magic 74656d2f20544547 != 7970663b906d70b9\n2025-08-12 09:37:14.267026 worker-9 >> :166:1835 [0] NCCL INFO Channel 00/0 : 80[0] -> 87[7] via P2P/CUMEM\n2025-08-12 09:37:14.28165 worker-9 >> :168:1836 [2] NCCL INFO Channel 03/0 : 82[2] -> 90[2] [send] via NET/IBext_v10/10/GDRDMA\n2025-08-12 09:37:14.28173 worker-9 >> :168:1836 [2] NCCL INFO Channel 11/0 : 82[2] -> 90[2] [send] via NET/IBext_v10/10/GDRDMA\n"

# https://github.com/NVIDIA/nccl-tests/issues/206
NCCL_TESTS_206_NCCL_DEBUG = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n"

# https://github.com/NVIDIA-NeMo/RL/pull/898
RL_898_VLLM_WORKER = "transport/nvls.cc:598 NCCL WARN Cuda failure 1 'invalid argument'\n\nraise RuntimeError(f\"NCCL error: {error_str}\")\nRuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"

# https://github.com/deepseek-ai/DeepEP/issues/121
DEEPEP_121_TEST_LOW_LATENCY = "Allocating buffer size: 2115.111296 MB ...\n/sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : received 36 bytes instead of 1\n\n/sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:499: non-zero status: -3 /sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : received 40 bytes instead of 1\n\n/sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:499: non-zero status: -3 /sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : received 33554468 bytes instead of 40\n\n/sglang/sglang/3rdparty/nvshmem_src/src/modules/bootstrap/uid/bootstrap_uid.cpp:499: non-zero status: -3 /sglang/sglang/3rdparty/nvshmem_src/src/host/topo/topo.cpp:526: non-zero status: -3 allgather of ipc handles failed \n"

# https://github.com/deepseek-ai/DeepEP/issues/53
DEEPEP_53_TEST_INTERNODE = "proxy.cc:1587 NCCL WARN [Service thread] Accept failed No space left on device\nmisc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-nyj24T to 10486116 bytes, error: No space left on device (28)\nterminate called after throwing an instance of 'terminate called after throwing an instance of 'terminate called after throwing an instance of 'EPExceptionEPExceptionEPException'\n'\n'\n  what():    what():  Failed: CUDA error /home/logs/DeepEP/csrc/deep_ep.cpp:89 'an illegal memory access was encountered'Failed: CUDA error /home/logs/DeepEP/csrc/deep_ep.cpp:89 'an illegal memory access was encountered'  what():  \n\nFailed: CUDA error /home/logs/DeepEP/csrc/deep_ep.cpp:89 'an illegal memory access was encountered'\nterminate called after throwing an instance of 'EPException'\n  what():  Failed: CUDA error /home/logs/DeepEP/csrc/deep_ep.cpp:89 'an illegal memory access was encountered'\n"

# https://github.com/deepspeedai/DeepSpeed/issues/6793
DEEPSPEED_6793_TRAIN = '[rank0]:   File "/root/miniconda3/envs/llama/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 1997, in no_sync\n[rank0]:     assert not self.zero_optimization_partition_gradients(), \\\n[rank0]: AssertionError: no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 3\n  0%|                                                  | 0/168 [00:00<?, ?it/s]\nW1126 23:28:07.821000 402381 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 402434 closing signal SIGTERM\nE1126 23:28:11.641000 402381 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 402435) of binary: /root/miniconda3/envs/llama/bin/python\n'

# https://github.com/exo-explore/exo/pull/2228
EXO_2228_RUNNER_ERROR = (
    "TypeError: ArraysCache.make_mask() got an unexpected keyword argument 'return_array'\n"
)

# https://github.com/ml-explore/mlx/pull/4045
MLX_4045_MLX_LAUNCH = 'Traceback (most recent call last):\n  ...\n  File "python/mlx/_distributed_utils/common.py", line 95, in from_list\n    raise ValueError("Hostname cannot be empty")\nValueError: Hostname cannot be empty\n'

# https://github.com/openxla/xla/pull/11761
XLA_11761_RANKS = "7:  Communicator for rank 1 not found in a NCCL clique devices=[3,7]; stream=0\n5: E0403 15:37:24.104311 3871038 pjrt_stream_executor_client.cc:2809] Execution of replica 0 failed: INTERNAL: Communicator for rank 1 not found in a NCCL clique devices=[1,5]; stream=0\n6: E0403 15:37:24.104477 3870182 pjrt_stream_executor_client.cc:2809] Execution of replica 0 failed: INTERNAL: Communicator for rank 1 not found in a NCCL clique devices=[2,6]; stream=0\n4: E0403 15:37:24.105872 3871021 pjrt_stream_executor_client.cc:2809] Execution of replica 0 failed: INTERNAL: Communicator for rank 1 not found in a NCCL clique devices=[0,4]; stream=0\n"

# https://github.com/pytorch/pytorch/issues/130414
PYTORCH_130414_OUTPUT = 'iZmj7cfy2ysqwfo0nrci4pZ:2532579:2532579 [0] enqueue.cc:336 NCCL WARN Cuda failure \'invalid resource handle\'\niZmj7cfy2ysqwfo0nrci4pZ:2532579:2532579 [0] NCCL INFO enqueue.cc:1382 -> 1\n[rank1]: Traceback (most recent call last):\n[rank1]:   File "/home/yyc/dist.py", line 45, in <module>\n[rank1]:     main()\n[rank1]:   File "/home/yyc/dist.py", line 40, in main\n[rank1]:     dist_allreduce()\n[rank1]:   File "/home/yyc/dist.py", line 18, in dist_allreduce\n[rank1]:     dist.barrier()\n[rank1]:   File "/home/yyc/repo/pytorch/torch/distributed/c10d_logger.py", line 79, in wrapper\n[rank1]:     return func(*args, **kwargs)\n'

# https://github.com/sgl-project/sglang/issues/552
SGLANG_552_RUNTIME = "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.\n\nFailed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'\nFailed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'\n\n[rank1]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]\n[rank0]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]\n"

# https://github.com/vllm-project/vllm/issues/3688
VLLM_3688_WORKER = "(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] ncclUnhandledCudaError: Call to CUDA function failed.\n(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] Last error:\n(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] Cuda failure 'invalid argument'\n[W CudaIPCTypes.cpp:15] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]\n"

# https://github.com/vllm-project/vllm/pull/3770
VLLM_3770_RAY_WORKER = '(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44] Error executing method init_device. This might cause deadlock in distributed execution. (RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44] Traceback (most recent call last):\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]   File "/data/dev/vllm/vllm/engine/ray_utils.py", line 37, in execute_method\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]     return executor(*args, **kwargs)\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]   File "/data/dev/vllm/vllm/worker/worker.py", line 91, in init_device\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]     torch.cuda.set_device(self.device)\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]   File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 404, in set_device\n(RayWorkerVllm pid=515753) ERROR 04-01 15:42:25 ray_utils.py:44]     torch._C._cuda_setDevice(device)\n'

# https://github.com/vllm-project/vllm/issues/42609
VLLM_42609_ENGINE_SECOND_REPORT = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'\nWorker proc VllmWorker-1 died unexpectedly, shutting down executor.\n"

# https://github.com/vllm-project/vllm/issues/42609
VLLM_42609_ENGINE = "Failed: Cuda error custom_all_reduce.cuh:455 'invalid argument'\nEngineCore failed to start: Worker proc VllmWorker-* died unexpectedly\n"

# https://github.com/vllm-project/vllm/issues/8638
VLLM_8638_CONTAINER_TAIL = "vllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /health, Methods: GET\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /tokenize, Methods: POST\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /detokenize, Methods: POST\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /v1/models, Methods: GET\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /version, Methods: GET\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /v1/chat/completions, Methods: POST\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /v1/completions, Methods: POST\nvllm-eb_1  | INFO 09-19 08:57:55 launcher.py:27] Route: /v1/embeddings, Methods: POST\nvllm-eb_1  | INFO:     Started server process [1]\nvllm-eb_1  | INFO:     Waiting for application startup.\nvllm-eb_1  | INFO:     Application startup complete.\nvllm-eb_1  | ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\nvllm-eb_1  | INFO:     Waiting for application shutdown.\nvllm-eb_1  | INFO:     Application shutdown complete.\nvllm-eb_1  | (VllmWorkerProcess pid=144) INFO 09-19 08:57:55 multiproc_worker_utils.py:244] Worker exiting\nvllm-eb_1  | (VllmWorkerProcess pid=141) INFO 09-19 08:57:55 multiproc_worker_utils.py:244] Worker exiting\n"

# https://github.com/vllm-project/vllm/issues/8638
VLLM_8638_CONTAINER = "vllm-eb_1  | INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=140) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=139) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=142) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=144) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=143) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=145) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | (VllmWorkerProcess pid=141) INFO 09-19 08:57:52 model_runner.py:1014] Starting to load model intfloat/e5-mistral-7b-instruct...\nvllm-eb_1  | INFO 09-19 08:57:52 selector.py:240] Cannot use FlashAttention-2 backend due to sliding window.\nvllm-eb_1  | INFO 09-19 08:57:52 selector.py:116] Using XFormers backend.\n"

# https://github.com/huggingface/trl/issues/3706
TRL_3706_VLLM_SERVE_ERROR = "ERROR 07-08 10:09:09 [core.py:583] RuntimeError: Worker failed with error 'NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)', please check the stack trace above for the root cause\n"

# https://github.com/huggingface/trl/issues/3706
TRL_3706_VLLM_SERVE = 'INFO:     Application startup complete.\nINFO:     Uvicorn running on http://0.0.0.0:8000/ (Press CTRL+C to quit)\nINFO:     [127.0.0.1:39726](http://127.0.0.1:39726/) - "GET /health/ HTTP/1.1" 200 OK\nINFO:     [127.0.0.1:39728](http://127.0.0.1:39728/) - "GET /get_world_size/ HTTP/1.1" 200 OK\nINFO:     [127.0.0.1:39744](http://127.0.0.1:39744/) - "POST /init_communicator/ HTTP/1.1" 200 OK\n(VllmWorker rank=1 pid=4888) INFO 07-08 10:09:09 [utils.py:1126] Found nccl from library libnccl.so.2\n(VllmWorker rank=1 pid=4888) INFO 07-08 10:09:09 [pynccl.py:70] vLLM is using nccl==2.26.2\n(VllmWorker rank=0 pid=4887) INFO 07-08 10:09:09 [utils.py:1126] Found nccl from library libnccl.so.2\n(VllmWorker rank=0 pid=4887) INFO 07-08 10:09:09 [pynccl.py:70] vLLM is using nccl==2.26.2\n'

# https://github.com/vllm-project/vllm/issues/7699
VLLM_7699_API_SERVER = "INFO 08-19 21:25:13 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: model='/root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/8c22764a7e3675c50d4c7c9a4edb474456022b16', speculative_config=None, tokenizer='/root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/8c22764a7e3675c50d4c7c9a4edb474456022b16', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, rope_scaling=None, rope_theta=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=131072, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=8, pipeline_parallel_size=1, disable_custom_all_reduce=True, quantization=None, enforce_eager=False, kv_cache_dtype=auto, quantization_param_path=None, device_config=cuda, decoding_config=DecodingConfig(guided_decoding_backend='outlines'), observability_config=ObservabilityConfig(otlp_traces_endpoint=None), seed=0, served_model_name=/root/.cache/hug\ngingface/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/8c22764a7e3675c50d4c7c9a4edb474456022b16, use_v2_block_manager=False, enable_prefix_caching=False)\nINFO 08-19 21:25:13 ray_gpu_executor.py:117] use_ray_spmd_worker: False\nINFO 08-19 21:25:13 ray_gpu_executor.py:120] driver_ip: REDACTED\n"

# https://github.com/vllm-project/vllm/issues/7699
VLLM_7699_RAY_STATUS = "======== Autoscaler status: 2024-08-19 21:32:14.787892 ========\nNode status\n---------------------------------------------------------------\nActive:\n 1 node_e161bb4b4023b8fe68152672794804629f3995241b7cc60fd9fe8ae2\n 1 node_0fcb74c428a1f8e66d45d27879bfc50cc73e80bf268f27ded6284b5c\nPending:\n (no pending nodes)\nRecent failures:\n (no failures)\n\nResources\n---------------------------------------------------------------\nUsage:\n 0.0/128.0 CPU\n 0.0/8.0 GPU\n 0B/685.33GiB memory\n 0B/297.70GiB object_store_memory\n\nDemands:\n (no resource demands)\n"

# https://github.com/vllm-project/vllm/issues/7699
VLLM_7699_WORKER_ERROR = 'ERROR 08-19 21:33:11 worker_base.py:386]   File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/pynccl_wrapper.py", line 223, in NCCL_CHECK\nERROR 08-19 21:33:11 worker_base.py:386]     raise RuntimeError(f"NCCL error: {error_str}")\nERROR 08-19 21:33:11 worker_base.py:386] RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\nProcess Process-1:\nTraceback (most recent call last):\n  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap\n    self.run()\n  File "/usr/lib/python3.10/multiprocessing/process.py", line 108, in run\n    self._target(*self._args, **self._kwargs)\n  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/rpc/server.py", line 217, in run_rpc_server\n    server = AsyncEngineRPCServer(async_engine_args, usage_context, port)\n  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/rpc/server.py", line 25, in __init__\n    self.engine = AsyncLLMEngine.from_engine_args(async_engine_args,\n  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 471, in from_engine_args\n    engine = cls(\n  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 381, in __init__\n    self.engine = self._init_engine(*args, **kwargs)\n'


def test_a_foreign_connection_to_ncclS_port_is_named_and_its_magic_read_as_text(tmp_path):
    # NVIDIA/nccl #1808: an HTTP probe ('GET /met') on the proxy's port hung the job
    f = first(triage_files(tmp_path, {"worker-9.log": NCCL_1808_WORKER_9}))
    assert f["code"] == "MD653" and "'GET /met'" in f["meaning"]
    assert "another program" in f["meaning"] and "#1808" in f["meaning"]


def test_a_bootstrap_peer_closing_in_init_lists_a_foreign_connection_before_2_27_3(tmp_path):
    # NVIDIA/nccl #1612: a stray connection closed before NCCL's magic failed bootstrap
    f = first(triage_files(tmp_path, {"nccl.log": NCCL_1612_NCCL}))
    assert f["code"] == "MD686"
    assert any("2.27.3" in c["cause"] for c in f["causes"])


def test_ibv_reg_mr_enomem_names_the_locked_memory_limit_first(tmp_path):
    # NVIDIA/nccl-tests #206: ulimit -l 8192 inside mpirun
    f = first(triage_files(tmp_path, {"nccl-debug.log": NCCL_TESTS_206_NCCL_DEBUG}))
    assert f["code"] == "MD653" and f["role"] == "cause"
    assert "locked-memory limit" in f["meaning"] and "/proc/PID/limits" in f["meaning"]


def test_a_cuda_failure_in_nvls_names_the_switch_and_a_setting_that_did_not_reach_workers(
    tmp_path,
):
    # NVIDIA-NeMo/RL #898: NCCL_NVLS_ENABLE=0 not inherited by the engine's workers
    f = first(triage_files(tmp_path, {"vllm-worker.log": RL_898_VLLM_WORKER}))
    assert f["code"] == "MD830" and "NCCL_NVLS_ENABLE=0" in f["meaning"]
    assert "did not reach this process" in f["meaning"]


def test_nvshmem_truncated_bootstrap_names_different_software_on_the_nodes(tmp_path):
    # deepseek-ai/DeepEP #121: two nodes with different GPU driver versions
    f = first(triage_files(tmp_path, {"test_low_latency.log": DEEPEP_121_TEST_LOW_LATENCY}))
    assert f["code"] == "MD850" and "GPU driver" in f["remedy"]


def test_a_full_dev_shm_comes_before_the_cuda_error_and_terminate_it_causes(tmp_path):
    # deepseek-ai/DeepEP #53: /dev/shm too small; an illegal address and terminate follow
    doc = triage_files(tmp_path, {"test_internode.log": DEEPEP_53_TEST_INTERNODE})
    f = first(doc)
    assert f["code"] == "MD653" and "/dev/shm" in f["meaning"] and "--shm-size" in f["meaning"]
    others = {x["code"]: x for x in doc["triage"]["findings"] if not x["first_cause"]}
    assert others["MD696"]["consequence_of"] == f["id"]


def test_deepspeed_no_sync_under_zero_is_named_with_its_releases(tmp_path):
    # deepspeedai/DeepSpeed #6793: DeepSpeed 0.16.0's no_sync check and HF Trainer
    f = first(triage_files(tmp_path, {"train.log": DEEPSPEED_6793_TRAIN}))
    assert f["code"] == "MD852" and f["rank"] == 0
    assert "0.15.4" in f["remedy"] and "gradient_accumulation_steps" in f["remedy"]


def test_an_unexpected_keyword_argument_is_an_api_mismatch_between_packages(tmp_path):
    # exo-explore/exo #2228: mlx-lm's ArraysCache.make_mask called with keywords it lacked
    f = first(triage_files(tmp_path, {"runner-error.log": EXO_2228_RUNNER_ERROR}))
    assert f["code"] == "MD849" and "versions" in f["meaning"]


def test_an_empty_host_name_leads_with_the_launchers_reading(tmp_path):
    # ml-explore/mlx #4045: mlx.launch --hosts '' raised a bare ValueError
    f = first(triage_files(tmp_path, {"mlx.launch.stderr": MLX_4045_MLX_LAUNCH}))
    here = f["meaning"].split("Here: ", 1)[1]
    assert here.startswith("mlx.launch could not read its hosts") and "--hosts" in here


def test_xlas_missing_clique_communicator_names_comm_splitting(tmp_path):
    # openxla/xla #11761: --xla_gpu_enable_nccl_comm_splitting in multi-process mode
    f = first(triage_files(tmp_path, {"ranks.log": XLA_11761_RANKS}))
    assert f["code"] == "MD851" and "--xla_gpu_enable_nccl_comm_splitting" in f["remedy"]
    assert f["rank"] != 1  # 'rank 1' is the peer looked up, not the rank that printed it


def test_invalid_resource_handle_at_ncclS_launch_names_the_current_device(tmp_path):
    # pytorch/pytorch #130414: ranks left on GPU 0 without torch.cuda.set_device
    f = first(triage_files(tmp_path, {"output.log": PYTORCH_130414_OUTPUT}))
    assert f["code"] == "MD830" and "torch.cuda.set_device(local_rank)" in f["meaning"]


def test_a_cuda_error_in_the_engines_custom_all_reduce_code_is_that_all_reduce(tmp_path):
    # sgl-project/sglang #552: peer access unsupported between two T4s in a VM
    f = first(triage_files(tmp_path, {"runtime.log": SGLANG_552_RUNTIME}))
    assert f["code"] == "MD878" and "--disable-custom-all-reduce" in f["remedy"]


def test_nccl_2_18_unhandled_cuda_error_names_its_memcpy_bug_and_2_19_3(tmp_path):
    # vllm-project/vllm #3688: NCCL 2.18.1, 'invalid argument' (NVIDIA/nccl #957)
    f = first(triage_files(tmp_path, {"worker.log": VLLM_3688_WORKER}))
    assert f["code"] == "MD650" and "2.19.3" in f["meaning"] and "#957" in f["meaning"]


def test_a_traceback_behind_joined_records_is_read_to_its_set_device_frame(tmp_path):
    # vllm-project/vllm #3770: CUDA initialised before Ray set CUDA_VISIBLE_DEVICES
    f = first(triage_files(tmp_path, {"ray-worker.log": VLLM_3770_RAY_WORKER}))
    assert f["code"] == "MD663" and "set_device" in f["meaning"]
    assert "CUDA_VISIBLE_DEVICES" in f["meaning"]


def test_custom_all_reduce_invalid_argument_is_the_custom_all_reduce(tmp_path):
    # vllm-project/vllm #42609: expandable segments refused by cudaIpcGetMemHandle
    doc = triage_files(
        tmp_path,
        {"engine.log": VLLM_42609_ENGINE, "engine-second.log": VLLM_42609_ENGINE_SECOND_REPORT},
    )
    assert first(doc)["code"] == "MD878"


def test_uvicorns_address_in_use_is_read_with_the_server_binding_twice(tmp_path):
    # vllm-project/vllm #8638: vLLM's own early port reservation and uvicorn's second bind
    doc = triage_files(
        tmp_path,
        {"container.log": VLLM_8638_CONTAINER, "container-tail.log": VLLM_8638_CONTAINER_TAIL},
    )
    f = first(doc)
    assert f["code"] == "MD679" and any(
        "binding its own port twice" in c["cause"] for c in f["causes"]
    )


def test_invalid_usage_names_a_trainer_on_the_servers_gpu_and_one_host_ip(tmp_path):
    # huggingface/trl #3706 (the client on the server's cuda:0); vllm-project/vllm #7699
    # (VLLM_HOST_IP set to one address on both nodes)
    for files in (
        {"serve.log": TRL_3706_VLLM_SERVE, "error.log": TRL_3706_VLLM_SERVE_ERROR},
        {
            "api.log": VLLM_7699_API_SERVER,
            "ray-status.txt": VLLM_7699_RAY_STATUS,
            "worker.log": VLLM_7699_WORKER_ERROR,
        },
    ):
        f = first(triage_files(tmp_path, files))
        assert f["code"] == "MD650" and "same GPU" in f["meaning"]
        assert "VLLM_HOST_IP" in f["meaning"] and "vllm-serve" in f["meaning"]
