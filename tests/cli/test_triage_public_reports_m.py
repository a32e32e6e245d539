"""Public failure reports of the fifth blind sample's half B, added after it was graded blind:
their inputs, verbatim, with what a user sees once their kinds were read. Each constant names
its report by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/cloudai/issues/720
CLOUDAI_720_CLOUDAI = "[ERROR] Job nccl-test failed: Missing success indicators in stdout.txt: \n'# Out of bounds values', '# Avg bus bandwidth'\n"

# https://github.com/NVIDIA/cloudai/issues/720
CLOUDAI_720_WORKER = "/bin/bash: line 1: /usr/sbin/sshd: No such file or directory\n"

# https://github.com/NVIDIA/gpu-operator/pull/1017
GPU_OPERATOR_1017_POD = "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!\n[Vector addition of 50000 elements]\n"

# https://github.com/NVIDIA/nccl-tests/issues/291
NCCL_TESTS_291_ALLTOALL_PERF = "#nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 1048576(bytes) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#Using devices\n#Rank 0 Group 0 Pid 12225 on node device 0 [0000:16:00] NVIDIA GeForce RTX 5090\nnode:12225:12225 [0] NCCL INFO Bootstrap: Using ens49f1np1:192.168.30.122<0>\nnode:12225:12225 [0] NCCL INFO cudaDriverVersion 12080\nnode:12225:12225 [0] NCCL INFO NCCL version 2.25.1+cuda12.4\nnode:12225:12255 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\nnode:12225:12255 [0] NCCL INFO Failed to open libibverbs.so[.1]\nnode:12225:12255 [0] NCCL INFO NET/Socket : Using [0]ens49f1np1:192.168.30.122<0>\nnode:12225:12255 [0] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so.\nnode:12225:12255 [0] NCCL INFO Using network Socket\nnode:12225:12255 [0] NCCL INFO ncclCommInitAll comm 0x55cc27005c20 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 16000 commId 0x1c3170e2c1182784 - Init START\nnode:12225:12255 [0] NCCL INFO RAS client listening socket at 127.0.0.1<28028>\n"

# https://github.com/NVIDIA/nvshmem/issues/40
NVSHMEM_40_DMESG = "[1891044.581319] NVRM: nvCheckOkFailedNoLog: Check failed: NVLink fabric state cached by the driver is out of sync [NV_ERR_FABRIC_STATE_OUT_OF_SYNC] (0x00000087) returned from status @ mem_multicast_fabric.c:2917`\n"

# https://github.com/NVIDIA/nvshmem/issues/40
NVSHMEM_40_NVSHMEM_ERROR = "/home/szegel/Nvshmem/src/host/team/team_internal_nvls.cpp:254: non-zero status: 401 cuMemMap failed to map 274877906944 bytes handle at address: 0x1320000000 offset 0 on device 7\n/home/szegel/Nvshmem/src/host/mem/mem_heap.cpp:1573: non-zero status: 7 Mapping mem size 274877906944 to MC group 101602722380032 failed \n/home/szegel/Nvshmem/src/host/team/team_internal.cpp:786: non-zero status: 7 Mapping multicast groups for UC heap failed for pe 7 team ID 1\n"

# https://github.com/NVIDIA-NeMo/Run/issues/266
RUN_266_CRASH = "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3376, internal error - please report this issue to the NCCL developers, NCCL version 2.25.1\n"

# https://github.com/NVIDIA-NeMo/Run/issues/266
RUN_266_NCCL_WARNINGS = "graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order\ngraph/topo.h:230 NCCL WARN Could not find NET with id 0\n"

# https://github.com/ai-dynamo/nixl/pull/927
NIXL_927_UCX_READ = "[1760048752.141287] proto_reconfig.c:60   UCX  ERROR cannot find remote protocol for: ucp_context_0 inter-node cfg#2 | get(multi) into cuda/GPU0 from host\nNIXL Xfer failed with status: NIXL_ERR_CANCELED\n"

# https://github.com/ai-dynamo/nixl/pull/927
NIXL_927_UCX_WRITE = "[1760052428.331649] proto_reconfig.c:60   UCX  ERROR cannot find remote protocol for: ucp_context_0 inter-node cfg#2 | put(multi) from cuda/GPU0 to host\nNIXL Xfer failed with status: NIXL_ERR_CANCELED\n"

# https://github.com/aws/aws-ofi-nccl/issues/1020
AWS_OFI_NCCL_1020_FI_INFO = "$ fi_info -p efa\n-61\n"

# https://github.com/aws/aws-ofi-nccl/issues/1020
AWS_OFI_NCCL_1020_NCCL_TESTS = "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available\n"

# https://github.com/deepseek-ai/DeepEP/pull/151
DEEPEP_151_NVSHMEM_WARN = "neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.\n"

# https://github.com/exo-explore/exo/issues/130
EXO_130_NODE = 'Waiting for response to finish. timeout=90s\n[93fe91cb-af5c-415d-b219-bf8d24c33958] process_tensor: tensor.size=159744 tensor.shape=(1, 39, 4096)\nError processing tensor for shard Shard(model_id=\'mlx-community/Meta-Llama-3.1-8B-Instruct-4bit\', start_layer=16, end_layer=31, n_layers=32): Shapes (1,8,4,39,77) and (39,39) cannot be broadcast.\nTraceback (most recent call last):\n  File "/Users/justing/Documents/LLMProject/exo/exo/orchestration/standard_node.py", line 217, in _process_tensor\n    result, inference_state, is_finished = await self.inference_engine.infer_tensor(request_id, shard, tensor, inference_state=inference_state)\n                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/justing/Documents/LLMProject/exo/exo/inference/mlx/sharded_inference_engine.py", line 29, in infer_tensor\n    output_data: np.ndarray = np.array(self.stateful_sharded_model.step(request_id, mx.array(input_data)))\n'

# https://github.com/exo-explore/exo/issues/187
EXO_187_NODE = "Detected system: Linux\nUsing inference engine: TinygradDynamicShardInferenceEngine with shard downloader: HFShardDownloader\nTrying to find available port port=60439\n[55750, 53702, 58236, 60403, 56807, 55655, 56261, 63656, 64548, 52168, 53646, 49910, 61021, 63850, 65285, 60222, 56650, 56276, 57157]\nUsing available port: 60439\nRetrieved existing node ID: fff5b2ef-1d4d-4170-93ab-8f748d777492\nChat interface started:\n - http://10.128.0.18:9999\n - http://127.0.0.1:9999\nChatGPT API endpoint served at:\n - http://10.128.0.18:9999/v1/chat/completions\n - http://127.0.0.1:9999/v1/chat/completions\ntinygrad Device.DEFAULT='CLANG'\nServer started, listening on 0.0.0.0:60439\ntinygrad Device.DEFAULT='CLANG'\nStarting peer discovery process...\nCurrent number of known peers: 0. Waiting 5 seconds to discover more...\nNo new peers discovered in the last grace period. Ending discovery process.\nCollecting topology max_depth=4 visited=set()\n"

# https://github.com/exo-explore/exo/issues/274
EXO_274_NODE = "Peer 191cdd5d-a67f-4cf3-b257-b39540056034 at 192.168.193.72:50051 is not healthy. Skipping.\nPeer 187b3c4f-9521-40ec-9c0c-9ef0740dbf26 at 192.168.193.62:50051 is not healthy. Skipping.\nPeer 41db25f4-a09a-4062-9680-805be7b81758 at 192.168.193.52:50051 is not healthy. Skipping.\nPeer 31a53c7b-ce99-42f0-b6dc-0627ac245a6e at 192.168.193.22:50051 is not healthy. Skipping.\nPeer 9ce039ff-dcf2-4cef-bccc-c0a4953be3cd at 192.168.193.42:50051 is not healthy. Skipping.\n"

# https://github.com/linux-rdma/perftest/issues/346
PERFTEST_346_PERFTEST_OUTPUT = "creating CUDA Ctx\nmaking it the current CUDA Ctx\nCUDA device integrated: 0\nallocated GPU buffer of a 16777216 address at 0x594ca786d9b0 for type CUDA_MEM_DEVICE\nCouldn't allocate MR with error=14\nfailed to create mr\nFailed to create MR\n Couldn't create IB resources\ndestroying current CUDA Ctx\n"

# https://github.com/ml-explore/mlx/issues/2538
MLX_2538_DISTRIBUTED_CONFIG = "[INFO] Preparing a thunderbolt ring for 192.168.68.53, 192.168.68.80 \n[INFO] Getting connectivity from 192.168.68.53 \n[INFO] Getting connectivity from 192.168.68.80 \n[INFO] Getting interface names from 192.168.68.53 \n[INFO] Getting interface names from 192.168.68.80 \n{'_name': 'Mac Studio', 'device_id_key': '0xA', 'device_name_key': 'Mac15,14', 'domain_uuid_key': '25C26CAB-7A82-49BA-BCB1-BD06ADFA7742', 'services_title': [{'_name': 'service_ip', 'protocol_id_key': 1, 'protocol_revision_key': 1, 'protocol_version_key': 1, 'service_uuid_key': '963C371F-A241-F22E-F29F-F99E6EF58EE0'}], 'vendor_id_key': '0xA27', 'vendor_name_key': 'Apple Inc.'}\n"

# https://github.com/ml-explore/mlx/issues/4280
MLX_4280_RANK = "[ring] Sending to socket 3 failed with errno 22\n[ring] Sending to socket 3 failed with errno 22\n... x10\n[ring] Too many send/recv errors. Aborting...\n"

# https://github.com/ml-explore/mlx-lm/pull/1748
MLX_LM_1748_RANK0 = "libc++abi: terminating due to uncaught exception of type std::invalid_argument: [jaccl] Recv failed with error code -12\n[WARN] Node with rank 0 exited with code 255\n"

# https://github.com/ml-explore/mlx-lm/issues/1763
MLX_LM_1763_RANK0 = (
    "ValueError: The model does not support pipelining but a pipeline_group was provided\n"
)

# https://github.com/vllm-project/vllm/issues/26922
VLLM_26922_WORKER_TRACEBACK = 'ERROR 10-15 09:00:49 [multiproc_executor.py:628]   File "/home/wentao/vllm-source/vllm/distributed/parallel_state.py", line 363, in __init__\nERROR 10-15 09:00:49 [multiproc_executor.py:628]     self.device_communicator = device_comm_cls(\nERROR 10-15 09:00:49 [multiproc_executor.py:628]                                ^^^^^^^^^^^^^^^^\nERROR 10-15 09:00:49 [multiproc_executor.py:628]   File "/home/wentao/vllm-source/vllm/distributed/device_communicators/cuda_communicator.py", line 70, in __init__\nERROR 10-15 09:00:49 [multiproc_executor.py:628]     self.symm_mem_comm = SymmMemCommunicator(\nERROR 10-15 09:00:49 [multiproc_executor.py:628]                          ^^^^^^^^^^^^^^^^^^^^\nERROR 10-15 09:00:49 [multiproc_executor.py:628]   File "/home/wentao/vllm-source/vllm/distributed/device_communicators/symm_mem.py", line 94, in __init__\nERROR 10-15 09:00:49 [multiproc_executor.py:628]     handle = torch_symm_mem.rendezvous(self.buffer, self.group.group_name)\n'

# https://github.com/vllm-project/vllm/issues/9920
VLLM_9920_NCCL_INFO = "HP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23541 [1] NCCL INFO Channel 01 : 1[1] -> 0[0] via SHM/direct/direct\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO Channel 01 : 0[0] -> 1[1] via SHM/direct/direct\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO Connected all rings\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO Connected all trees\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23541 [1] NCCL INFO Connected all rings\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23541 [1] NCCL INFO Connected all trees\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23541 [1] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 512 | 512\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23541 [1] NCCL INFO 2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 512 | 512\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23458 [0] NCCL INFO 2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer\n"

# https://github.com/vllm-project/vllm/issues/9920
VLLM_9920_VLLM_TAIL = "HP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23665 [0] NCCL INFO comm 0x23ba7ea0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 47000 commId 0x47dc53f08cbcda96 - Init COMPLETE\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\nHP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 01 : 1[1] -> 0[0] via SHM/direct/direct\nINFO 11-01 23:16:33 distributed_gpu_executor.py:56] # GPU blocks: 185231, # CPU blocks: 18724\n<vllm.entrypoints.llm.LLM object at 0x72c46e351a50>\nProcessed prompts:   0%|          | 0/16 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s]\n"


def _firsts(doc):
    return [f for f in doc["triage"]["findings"] if f["first_cause"]]


def test_a_worker_image_without_sshd_is_the_cause_not_the_harness_line(tmp_path):
    # NVIDIA/cloudai #720: the harness's [ERROR] is not mlx.launch's
    doc = triage_files(
        tmp_path, {"cloudai.log": CLOUDAI_720_CLOUDAI, "worker.log": CLOUDAI_720_WORKER}
    )
    (f,) = _firsts(doc)
    assert f["code"] == "MD899" and "openssh-server" in f["remedy"]


def test_the_cuda_samples_insufficient_driver_names_the_runtime_class(tmp_path):
    # NVIDIA/gpu-operator #1017
    f = first(triage_files(tmp_path, {"pod.log": GPU_OPERATOR_1017_POD}))
    assert f["code"] == "MD830" and "runtimeClassName: nvidia" in f["meaning"]


def test_a_stop_after_init_of_nccl_2_25_on_an_rtx_5090_names_2_26_2(tmp_path):
    # NVIDIA/nccl-tests #291
    f = first(triage_files(tmp_path, {"alltoall_perf.log": NCCL_TESTS_291_ALLTOALL_PERF}))
    assert f["code"] == "MD892" and "NCCL 2.25.1 on a GeForce RTX 5090" in f["meaning"]
    assert f["remedy"].startswith("Upgrade NCCL to 2.26.2")


def test_the_nvlink_fabric_out_of_sync_names_nvshmem_disable_nvls(tmp_path):
    # NVIDIA/nvshmem #40
    doc = triage_files(
        tmp_path, {"dmesg.txt": NVSHMEM_40_DMESG, "nvshmem.log": NVSHMEM_40_NVSHMEM_ERROR}
    )
    (f,) = _firsts(doc)
    assert f["code"] == "MD884" and "NVSHMEM_DISABLE_NVLS=1" in f["remedy"]
    assert "MD885" in [g["code"] for g in doc["triage"]["findings"]]


def test_ucx_finding_no_remote_protocol_names_the_ucx_release(tmp_path):
    # ai-dynamo/nixl #927
    doc = triage_files(tmp_path, {"read.log": NIXL_927_UCX_READ, "write.log": NIXL_927_UCX_WRITE})
    assert {f["code"] for f in _firsts(doc)} == {"MD886"}
    assert "ucx_info -v" in _firsts(doc)[0]["remedy"]


def test_ofi_finding_no_provider_names_the_devices_of_the_container(tmp_path):
    # aws/aws-ofi-nccl #1020
    f = first(triage_files(tmp_path, {"nccl-tests.log": AWS_OFI_NCCL_1020_NCCL_TESTS}))
    assert f["code"] == "MD653" and "/dev/infiniband/uverbs" in f["meaning"]


def test_nvshmems_peermem_check_names_where_it_looks(tmp_path):
    # deepseek-ai/DeepEP #151
    f = first(triage_files(tmp_path, {"nvshmem.txt": DEEPEP_151_NVSHMEM_WARN}))
    assert f["code"] == "MD887" and "/sys/module/nvidia_peermem" in f["meaning"]


def test_shapes_that_do_not_broadcast_in_a_shard_name_a_reused_cache(tmp_path):
    # exo-explore/exo #130
    f = first(triage_files(tmp_path, {"node.log": EXO_130_NODE}))
    assert f["code"] == "MD804" and "prefix cache" in f["meaning"]


def test_exo_finding_no_peers_names_broadcast_on_a_cloud_network(tmp_path):
    # exo-explore/exo #187
    f = first(triage_files(tmp_path, {"node.log": EXO_187_NODE}))
    assert f["code"] == "MD889" and "VPCs" in f["meaning"]


def test_an_error_line_no_signature_reads_is_no_go(tmp_path):
    # exo-explore/exo #274: exo's own words, not in the catalogue
    f = first(triage_files(tmp_path, {"node.log": EXO_274_NODE}))
    assert f["code"] == "MD883" and "is not healthy. Skipping." in f["meaning"]
    assert f["count"] == 5


def test_perftests_mr_error_14_names_dmabuf(tmp_path):
    # linux-rdma/perftest #346
    f = first(triage_files(tmp_path, {"perftest.txt": PERFTEST_346_PERFTEST_OUTPUT}))
    assert f["code"] == "MD888" and "--use_cuda_dmabuf" in f["remedy"]


def test_jaccls_full_queue_lists_ranks_out_of_step(tmp_path):
    # ml-explore/mlx-lm #1748
    f = first(triage_files(tmp_path, {"rank0.log": MLX_LM_1748_RANK0}))
    assert f["code"] == "MD608"
    assert any("switches models per request" in c["cause"] for c in f["causes"])


def test_a_logged_traceback_cut_in_symmetric_memory_names_vllms_switch(tmp_path):
    # vllm-project/vllm #26922: each line behind vLLM's logger prefix, no exception line
    f = first(triage_files(tmp_path, {"worker.log": VLLM_26922_WORKER_TRACEBACK}))
    assert f["code"] == "MD883" and "symm_mem.py:94" in f["meaning"]
    assert "VLLM_ALLREDUCE_USE_SYMM_MEM=0" in f["meaning"]


def test_a_hang_on_one_host_lists_pcie_acs(tmp_path):
    # vllm-project/vllm #9920
    f = first(
        triage_files(tmp_path, {"nccl.log": VLLM_9920_NCCL_INFO, "tail.log": VLLM_9920_VLLM_TAIL})
    )
    assert f["code"] == "MD892"
    assert (
        "PCIe ACS" in f["causes"][1]["cause"] and "NCCL_P2P_DISABLE=1" in f["causes"][1]["evidence"]
    )
