"""Public failure reports of blind sample 9's half A (MLX apps, exo, NCCL in clouds), the half
its kinds were built from, each rebuilt from the report's own posted output and run through
the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/79: an image in the request
    (
        "Blaizzy-mlx-vlm-79",
        {
            "log.txt": 'libc++abi: terminating due to uncaught exception of type std::runtime_error: Attempting to allocate 51619840000 bytes which is greater than the maximum allowed buffer size of 21743271936 bytes.\nFatal Python error: Aborted\n\nThread 0x00000001e136dc40 (most recent call first):\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/models/qwen2_vl/qwen2_vl.py", line 81 in _merge_input_ids_with_image_features\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/models/qwen2_vl/qwen2_vl.py", line 68 in get_input_embeddings\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/models/qwen2_vl/qwen2_vl.py", line 97 in __call__\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/utils.py", line 888 in generate_step\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/utils.py", line 1021 in generate\n  File "/Users/matt/Workspace/mlx-vlm/mlx_vlm/generate.py", line 84 in main\n',
        },
        "MD673",
        [
            "vision model's image step",
            "_merge_input_ids_with_image_features",
            "2.4 times the largest buffer",
        ],
    ),
    # https://github.com/Layr-Labs/d-inference/pull/660: an image in the request
    (
        "Layr-Labs-d-inference-660",
        {
            "log.txt": "MLX/ErrorHandler.swift:345: Fatal error: [metal::malloc] Attempting to allocate\n298090824192 bytes which is greater than the maximum allowed buffer size of\n41747087360 bytes.\n\nProviderLoop.handleInferenceRequest\n  → MLXOpenAIService.streamChatCompletionFrames\n    → MultiModelBatchSchedulerEngine.streamChatCompletion\n      → EngineV2VisionPrefill.prepare\n        → mlx_eval → _mlx_error → assertionFailure → SIGTRAP\n",
        },
        "MD673",
        ["image patches", "one image per request"],
    ),
    # https://github.com/aws/aws-k8s-tester/issues/690: nccl-tests' buffers
    (
        "aws-aws-k8s-tester-690",
        {
            "log.txt": "        [1,6]<stdout>:multi-node-alltoall-perf-worker-0: Test NCCL failure alltoall.cu:62 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure common.cu:381\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure common.cu:590\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure alltoall.cu:97\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure common.cu:623\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure common.cu:1073\n        [1,6]<stdout>: .. multi-node-alltoall-perf-worker-0 pid 411: Test failure common.cu:886\n        [1,0]<stdout>:multi-node-alltoall-perf-worker-0:402:458 [0] NCCL INFO [Service thread] Connection closed by localRank 6\n        [1,0]<stdout>:\n        [1,0]<stdout>:multi-node-alltoall-perf-worker-0:402:402 [0] enqueue.cc:1451 NCCL WARN Cuda failure 2 'out of memory'\n",
        },
        "MD800",
        ["the job is nccl-tests", "Lower -e", "NCCL_BUFFSIZE"],
    ),
    # https://github.com/awslabs/awsome-distributed-ai/issues/192: a loopback peer
    (
        "awslabs-awsome-distributed-ai-192",
        {
            "log.txt": 'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1906, in broadcast 10: work = default_pg.broadcast([tensor], opts) 10: torch.distributed.DistBackendError: NCCL error in: /opt/conda/conda-bld/pytorch_1696588393313/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5 10: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. 10: Last error: 10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort\n',
        },
        "MD653",
        ["dialled a loopback address", "NCCL_SOCKET_IFNAME"],
    ),
    # https://github.com/awslabs/awsome-distributed-ai/issues/203: EFA Libfabric
    (
        "awslabs-awsome-distributed-ai-203",
        {
            "log.txt": "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22, Error: Invalid argument\n",
        },
        "MD653",
        ["1.29.1", "FI_EFA_SET_CUDA_SYNC_MEMOPS=0"],
    ),
    # https://github.com/ddalcu/mlx-serve/issues/44: OOM at load
    (
        "ddalcu-mlx-serve-44",
        {
            "log.txt": "Batch eval all weights: 15300ms\nMoE routing compiled / GDN gate compiled\n…\nlibc++abi: terminating due to uncaught exception of type std::runtime_error:\n[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
        },
        "MD661",
        ["while the model was loading or warming up", "not yet exited"],
    ),
    # https://github.com/exo-explore/exo/issues/2194: exo placement
    (
        "exo-explore-exo-2194",
        {
            "log.txt": 'GET /instance/previews?model_id=...\n→ "Requested RDMA (MlxJaccl) but no RDMA-connected cycles available"\n\nGET /state\n→ nodeIdentities: 5 entries          # one is the departed node\n→ topology RDMA links: 4/4 live nodes each with degree 2 (complete ring)\n',
        },
        "MD818",
        ["for a jaccl (RDMA) instance", "left the cluster but stays in exo's state"],
    ),
    # https://github.com/exo-explore/exo/issues/308: exo's own code
    (
        "exo-explore-exo-308",
        {
            "pi1.log": "Task exception was never retrieved\nfuture: <Task finished name='Task-431' coro=<UDPDiscovery.on_listen_message() done, defined at \n/home/daniel/code/exo_temp/exo-daniel/exo/networking/udp/udp_discovery.py:118> exception=KeyError('302ae018-5202-441c-bd2e-a4ba4f19ea49')>\nTraceback (most recent call last):\n  File \"/home/daniel/code/exo_temp/exo-daniel/exo/networking/udp/udp_discovery.py\", line 162, in on_listen_message\n    self.known_peers[peer_id] = (self.known_peers[peer_id][0], self.known_peers[peer_id][1], time.time(), peer_prio)\n                                 ~~~~~~~~~~~~~~~~^^^^^^^^^\nKeyError: '302ae018-5202-441c-bd2e-a4ba4f19ea49'\nError in cleanup peers: dictionary changed size during iteration\nTraceback (most recent call last):\n  File \"/home/daniel/code/exo_temp/exo-daniel/exo/networking/udp/udp_discovery.py\", line 174, in task_cleanup_peers\n    for peer_id, (peer_handle, connected_at, last_seen, prio) in self.known_peers.items():\nRuntimeError: dictionary changed size during iteration\n",
        },
        "MD663",
        ["raised in exo's own code", "udp_discovery.py"],
    ),
    # https://github.com/exo-explore/exo/pull/393: a /tmp file of another user
    (
        "exo-explore-exo-393",
        {
            "log.txt": 'Detected system: Linux\nInference engine name after selection: tinygrad\nget_inference_engine called with: tinygrad\nUsing inference engine: TinygradDynamicShardInferenceEngine with shard downloader: HFShardDownloader\nTrying to find available port host=\'0.0.0.0\' port=61382\nUnable write to file\nTraceback (most recent call last):\n  File "/home/user/exo/exo/helpers.py", line 62, in find_available_port\n    write_used_port(port, used_ports)\n  File "/home/user/exo/exo/helpers.py", line 47, in write_used_port\n    with open(used_ports_file, "w") as f:\n         ^^^^^^^^^^^^^^^^^^^^^^^^^^\nPermissionError: [Errno 13] Permission denied: \'/tmp/exo_used_ports\'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File "/home/user/exo/.venv/bin/exo", line 5, in <module>\n    from exo.main import run\n  File "/home/user/exo/exo/main.py", line 72, in <module>\n    args.node_port = find_available_port(args.node_host)\n                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/home/user/exo/exo/helpers.py", line 66, in find_available_port\n    raise RuntimeError (e)\nRuntimeError: [Errno 13] Permission denied: \'/tmp/exo_used_ports\'\n',
        },
        "MD663",
        ["/tmp's sticky bit", "Permission denied"],
    ),
    # https://github.com/exo-explore/exo/pull/684: NVRTC
    (
        "exo-explore-exo-684",
        {
            "log.txt": 'Failed to fetch completions: Error processing prompt (see logs with DEBUG>=2): Nvrtc Error 6, NVRTC_ERROR_COMPILATION\n<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half" applies:\n            function "__half::__half(float)" (declared at line 214 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(short)" (declared at line 227 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned short)" (declared at line 228 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(int)" (declared at line 229 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned int)" (declared at line 230 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(long long)" (declared at line 231 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned long long)" (declared at line 232 of /usr/include/cuda_fp16.hpp)\n    *((half4*)((data0+(alu0+(gidx1<<14)+(lidx0<<11)+alu1)))) = make_half4(((half)(val0)),((half)(val1)),((half)(val2)),((half)(val3)));\n                                                                                 ^\n\n<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half" applies:\n            function "__half::__half(float)" (declared at line 214 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(short)" (declared at line 227 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned short)" (declared at line 228 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(int)" (declared at line 229 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned int)" (declared at line 230 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(long long)" (declared at line 231 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned long long)" (declared at line 232 of /usr/include/cuda_fp16.hpp)\n    *((half4*)((data0+(alu0+(gidx1<<14)+(lidx0<<11)+alu1)))) = make_half4(((half)(val0)),((half)(val1)),((half)(val2)),((half)(val3)));\n                                                                                                ^\n\n<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half" applies:\n            function "__half::__half(float)" (declared at line 214 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(short)" (declared at line 227 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned short)" (declared at line 228 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(int)" (declared at line 229 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned int)" (declared at line 230 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(long long)" (declared at line 231 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned long long)" (declared at line 232 of /usr/include/cuda_fp16.hpp)\n    *((half4*)((data0+(alu0+(gidx1<<14)+(lidx0<<11)+alu1)))) = make_half4(((half)(val0)),((half)(val1)),((half)(val2)),((half)(val3)));\n                                                                                                               ^\n\n<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half" applies:\n            function "__half::__half(float)" (declared at line 214 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(short)" (declared at line 227 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned short)" (declared at line 228 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(int)" (declared at line 229 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned int)" (declared at line 230 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(long long)" (declared at line 231 of /usr/include/cuda_fp16.hpp)\n            function "__half::__half(unsigned long long)" (declared at line 232 of /usr/include/cuda_fp16.hpp)\n    *((half4*)((data0+(alu0+(gidx1<<14)+(lidx0<<11)+alu1)))) = make_half4(((half)(val0)),((half)(val1)),((half)(val2)),((half)(val3)));\n                                                                                                                              ^\n\n4 errors detected in the compilation of "<null>".\n',
        },
        "MD819",
        ["bfloat16 to float32 to float16", "did not compile"],
    ),
    # https://github.com/exo-explore/exo/issues/856: HTTP 401
    (
        "exo-explore-exo-856",
        {
            "log.txt": "AssertionError: Failed to download model.safetensors.index.json from \nhttps://huggingface.co/TriAiExperiments/SFR-Iterative-DPO-LLaMA-3-70B-R/resolve/\nmain/model.safetensors.index.json: 401\nError downloading shard: Failed to fetch file list: 401 \n",
        },
        "MD663",
        ["HTTP 401/403", "made private or removed"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/220: 1-D shapes
    (
        "ml-explore-mlx-swift-lm-220",
        {
            "log.txt": "Fatal error: [broadcast_shapes] Shapes (64) and (1009) cannot be broadcast.\n",
        },
        "MD804",
        ["one-dimensional", "repetition penalty"],
    ),
    # https://github.com/skypilot-org/skypilot/issues/4448: link-local peer
    (
        "skypilot-org-skypilot-4448",
        {
            "head.log": "(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO transport/net.cc:687 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef7:74b3%enP7906s1<51577> failed : Software caused connection abort\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO misc/socket.cc:567 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO misc/socket.cc:589 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO transport/net_socket.cc:339 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO transport/net.cc:687 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11241 [3] NCCL INFO transport/net.cc:306 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11241 [3] NCCL INFO transport.cc:165 -> 2\n(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:\n",
            "worker1.log": "(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef9:4aef%enP43105s1<57649> failed : Software caused connection abort\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO misc/socket.cc:567 -> 2\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO misc/socket.cc:589 -> 2\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO transport/net_socket.cc:339 -> 2\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO transport/net.cc:687 -> 2\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef9:4aef%enP43105s1<32881> failed : Software caused connection abort\n(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO misc/socket.cc:567 -> 2\n",
        },
        "MD653",
        ["link-local", "NCCL_SOCKET_IFNAME"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/619: MLX cache
    (
        "waybarrios-vllm-mlx-619",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error:\n[METAL] Command buffer execution failed: Insufficient Memory\n(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
        },
        "MD661",
        ["mx.set_cache_limit", "buffer cache"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
