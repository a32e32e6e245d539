"""Public failure reports of half B of a blind sample (failures of NCCL, MLX and exo),
added after its blind grade, each rebuilt from the report's own posted output and run
through the public CLI. exo-explore/exo #2136 (an exo download loop over state of retired
nodes, printed as INFO/WARN lines) has no reading yet and is left out."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Azure/azhpc-images/issues/327: an injected NCCL graph file for more GPUs than the VM has
    (
        "Azure-azhpc-images-327",
        {
            "log.txt": "::16674:16674 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.4<0>\n::16674:16674 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\n::16674:16674 [0] NCCL INFO NET/Plugin : No plugin found, using internal implementation\n::16674:16674 [0] NCCL INFO cudaDriverVersion 12020\nNCCL version 2.18.6+cuda11.8\n::16674:17023 [0] NCCL INFO NET/IB : Using [0]mlx5_an0:1/RoCE [RO]; OOB eth0:10.1.0.4<0>\n::16674:17023 [0] NCCL INFO Using network IB\n::16674:17023 [0] NCCL INFO comm 0x5640f24752d0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 100000 commId 0x2064c00fc2f91516 - Init START\n::16674:17023 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml\n::16674:17023 [0] NCCL INFO Setting affinity for GPU 0 to ffffff\n::16674:17023 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n\n::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.\n::16674:17023 [0] NCCL INFO graph/search.cc:733 -> 2\n::16674:17023 [0] NCCL INFO graph/search.cc:740 -> 2\n::16674:17023 [0] NCCL INFO graph/search.cc:840 -> 2\n",
        },
        "MD833",
        ["NCCL_GRAPH_FILE"],
    ),
    # https://github.com/NVIDIA/nccl/issues/1240: a preset NCCL graph file on a 1-GPU VM
    (
        "NVIDIA-nccl-1240",
        {
            "log.txt": "Spotllm:73025:73025 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.4<0>\nSpotllm:73025:73025 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\nSpotllm:73025:73025 [0] NCCL INFO cudaDriverVersion 12020\nNCCL version 2.19.3+cuda12.3\nSpotllm:73025:73112 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\nSpotllm:73025:73112 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.4<0>\nSpotllm:73025:73112 [0] NCCL INFO Using non-device net plugin version 0\nSpotllm:73025:73112 [0] NCCL INFO Using network Socket\nSpotllm:73025:73112 [0] NCCL INFO comm 0x2012b5e0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 100000 commId 0x151ada46fe52b960 - Init START\nSpotllm:73025:73112 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml\nSpotllm:73025:73112 [0] NCCL INFO Setting affinity for GPU 0 to ffffff\nSpotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n\nSpotllm:73025:73112 [0] graph/search.cc:719 NCCL WARN XML Import Channel : dev 1 not found.\nSpotllm:73025:73112 [0] NCCL INFO graph/search.cc:749 -> 2\n",
        },
        "MD833",
        ["NCCL_GRAPH_FILE"],
    ),
    # https://github.com/NVIDIA/nccl/issues/1372: NCCL built without the GPU's compute capability
    (
        "NVIDIA-nccl-1372",
        {
            "log.txt": "gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n",
        },
        "MD830",
        ["architecture"],
    ),
    # https://github.com/NVIDIA/nccl/issues/1676: GPUDirect RDMA off (an excerpt of init lines: read as a stop in init)
    (
        "NVIDIA-nccl-1676",
        {
            "log.txt": "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\nlearn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\nlearn01:2228640:2230192 [4] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\nlearn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 2 'mlx5_2'\n",
        },
        "MD892",
        ["NCCL"],
    ),
    # https://github.com/NVIDIA/nccl/issues/2076: an IB fault resetting peer connections
    (
        "NVIDIA-nccl-2076",
        {
            "log.txt": "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\nsocketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer\n",
        },
        "MD650",
        ["the network between the ranks failed", "ncclRemoteError"],
    ),
    # https://github.com/Peterande/D-FINE/issues/289: two ranks on one GPU
    (
        "Peterande-D-FINE-289",
        {
            "log.txt": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n",
        },
        "MD653",
        ["two ranks on one GPU", "its own device"],
    ),
    # https://github.com/aws/aws-ofi-nccl/issues/785: the OFI plugin's static topology XML
    (
        "aws-aws-ofi-nccl-785",
        {
            "log.txt": '2a8874e7d1e6:281:281 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^docker,lo,veth_def_agent\n2a8874e7d1e6:281:281 [0] NCCL INFO NCCL_SOCKET_IFNAME set to ^docker,lo,veth_def_agent\n2a8874e7d1e6:281:281 [0] NCCL INFO Bootstrap : Using eth0:172.20.0.2<0>\n2a8874e7d1e6:281:281 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.\n2a8874e7d1e6:281:281 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v7)\n2a8874e7d1e6:281:281 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v8 symbol.\n2a8874e7d1e6:281:281 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin symbol (>= v5). ncclCollNetPlugin symbols v4 and lower are not supported.\n2a8874e7d1e6:281:281 NCCL CALL ncclGetUniqueId(0x7de6c0998b0f6a4)\n2a8874e7d1e6:281:281 [0] NCCL INFO cudaDriverVersion 12040\nNCCL version 2.21.5+cuda12.4\nTraceback (most recent call last):\n  File "/__w/process_group.py", line 42, in __init__\n    torch.distributed.init_process_group(\n  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper\n',
            "warn_quoted.txt": "2a8874e7d1e6:2196:2275 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found\n2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:493 -> 3\n2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:623 -> 3\n2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:773 -> 3\n",
        },
        "MD653",
        ["NCCL_TOPO_FILE", "aws-ofi-nccl"],
    ),
    # https://github.com/exo-explore/exo/issues/2182: Metal OOM in prefill from a growing KV prefix cache
    (
        "exo-explore-exo-2182",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
        },
        "MD661",
        ["prefix", "before each prefill"],
    ),
    # https://github.com/exo-explore/exo/issues/441: an exo NameError in a debug print
    (
        "exo-explore-exo-441",
        {
            "log.txt": "[22afe857-180d-48a8-8d9c-72b8af4d0ad0] result size: 88064, is finished: False, buffered tokens: 0\nNext partition index: 1\nTask exception was never retrieved\nfuture: <Task finished name='Task-152' coro=<StandardNode.forward_to_next_shard() done, defined at \n/Users/llmserver/Documents/Projects/exo/exo/orchestration/standard_node.py:273> exception=NameError(\"name 'shard' is not \ndefined\")>\nTraceback (most recent call last):\n  File \"/Users/llmserver/Documents/Projects/exo/exo/orchestration/standard_node.py\", line 289, in forward_to_next_shard\n    if DEBUG >= 2: print(f\"Computed next from: {shard}, {self.topology}. Next partition: {next_partition}\")\nNameError: name 'shard' is not defined. Did you mean: 'Shard'?\n",
        },
        "MD663",
        ["debug output", "DEBUG=0"],
    ),
    # https://github.com/llm-d/llm-d/issues/191 (the log is from the comment by markmc, 2025-09-17): an RDMA port link flap
    (
        "llm-d-llm-d-191",
        {
            "log.txt": "ms-pd-llm-d-modelservice-prefill-2.log:[2025-09-17 15:16:23] ms-pd-llm-d-modelservice-prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error\nms-pd-llm-d-modelservice-prefill-2.log:[2025-09-17 15:16:31] ms-pd-llm-d-modelservice-prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port active\nms-pd-llm-d-modelservice-prefill-2.log:[2025-09-17 15:23:34] ms-pd-llm-d-modelservice-prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error\n",
        },
        "MD653",
        ["switch port fault", "PORT_ACTIVE"],
    ),
    # https://github.com/ml-explore/mlx/pull/2775: MLX's CUDA JIT name lookup for complex64 gather
    (
        "ml-explore-mlx-2775",
        {
            "log.txt": '__nv_name_map(17): error: Error in parsing name expression for lowered name lookup. Input name expression was: " mlx :: core :: cu :: gather < complex64_t, uint32_t, 1, 6, int64_t >"\n  #pragma nv_mangled_name mlx::core::cu::gather<complex64_t, uint32_t, 1, 6, int64_t>\n',
        },
        "MD815",
        ["NVRTC", "Upgrade MLX"],
    ),
    # https://github.com/pytorch/ci-infra/pull/490: a pod /dev/shm too small for NCCL
    (
        "pytorch-ci-infra-490",
        {
            "log.txt": "NCCL_DEBUG=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=1 pytest distributed/test_data_parallel.py::TestDataParallel::test_autocast -v\n=========================================================== test session starts ===========================================================\nplatform linux -- Python 3.10.20, pytest-7.3.2, pluggy-1.6.0 -- /opt/conda/envs/py_3.10/bin/python3.10\ncachedir: .pytest_cache\nhypothesis profile 'pytorch_ci' -> database=None, max_examples=50, derandomize=True, suppress_health_check=[HealthCheck.too_slow]\nrootdir: /__w/pytorch/pytorch\nconfigfile: pytest.ini\nplugins: hypothesis-6.56.4, cpp-2.3.0, flakefinder-1.1.0, rerunfailures-14.0, subtests-0.13.1, xdist-3.3.1, xdoctest-1.3.0\ncollected 1 item\nRunning 1 items in this shard\n\n[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)\n\n[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] NCCL INFO transport/shm.cc:551 -> 2\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] NCCL INFO transport/shm.cc:493 -> 2\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202240 [0] NCCL INFO misc/socket.cc:28 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202240 [0] NCCL INFO misc/socket.cc:561 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] NCCL INFO misc/socket.cc:28 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202238 [2] NCCL INFO misc/socket.cc:28 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202238 [2] NCCL INFO misc/socket.cc:561 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202238 [2] NCCL INFO group.cc:80 -> 3 [Async thread]\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202016 [0] NCCL INFO group.cc:650 -> 2\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202016 [0] NCCL INFO group.cc:833 -> 2\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202016 [0] NCCL INFO group.cc:111 -> 2\nFAILED [0.7708s]                                                 [100%]mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202231 [2] NCCL INFO misc/socket.cc:28 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202231 [2] NCCL INFO misc/socket.cc:45 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202231 [2] NCCL INFO misc/socket.cc:584 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202231 [2] NCCL INFO proxy.cc:1542 -> 3\nmt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202231 [2] NCCL INFO proxy.cc:1584 -> 3\n\n\n================================================================ FAILURES =================================================================\n_____________________________________________________ TestDataParallel.test_autocast ______________________________________________________\n",
        },
        "MD653",
        ["/dev/shm", "emptyDir"],
    ),
    # https://github.com/pytorch/torchtitan/issues/853: a container /dev/shm too small for NCCL
    (
        "pytorch-torchtitan-853",
        {
            "log.txt": "  torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n  ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n  Last error:\n  Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)\n  Exception raised from create at /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268 (most recent call first):\n  C++ CapturedTraceback:\n",
        },
        "MD653",
        ["/dev/shm", "--shm-size"],
    ),
    # https://github.com/vllm-project/vllm/issues/6689 (the comment by nani1149 on 2024-07-23 and the reply by youkaichao the same day): a container /dev/shm too small for NCCL
    (
        "vllm-project-vllm-6689",
        {
            "log.txt": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n[rank0]: Last error:\n[rank0]: Error while creating shared memory segment /dev/shm/nccl-eQz2sT (size 5767520)\nERROR 07-23 22:46:18 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 82 died, exit code: -15\nINFO 07-23 22:46:18 multiproc_worker_utils.py:123] Killing local vLLM worker processes\n[rank0]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]\n/usr/local/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be 1 leaked shared_memory objects to clean up at shutdown\n  warnings.warn('resource_tracker: There appear to be %d '\n",
        },
        "MD653",
        ["/dev/shm", "--shm-size"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause, in words an operator
    acts on."""
    assert_read_for(tmp_path, files, code, says)
