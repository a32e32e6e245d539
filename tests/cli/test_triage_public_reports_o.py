"""Public failure reports of half A of a blind sample (failures of NCCL, MLX, exo and
oMLX), each rebuilt from the report's own posted output, run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/MiaAI-Lab/DeepSeek-v4.1-Flash-DGX-Sparks/issues/14: ibv_reg_mr ENOMEM with the limit unlimited: the 7.0 kernel's page pinning
    (
        "MiaAI-Lab-DeepSeek-v4.1-Flash-DGX-Sparks-14",
        {
            "log.txt": "Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n",
        },
        "MD653",
        ["Kexec HandOver", "kho=off"],
    ),
    # https://github.com/NVIDIA/nccl/issues/1657: ibv_modify_qp errno 19: a link-local GID index forced
    (
        "NVIDIA-nccl-1657",
        {
            "log.txt": "aigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1040 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0} GID 0 (80FE/1A8A41FEFF21A75E) fifoRkey=0x15d3b2 fifoLkey=0x15d3b2\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:1077 Ib Alloc Size 3336 pointer 0x7f1cd4097000\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO Received and initiated operation=Connect res=0\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:1191 Ib Alloc Size 164448 pointer 0x7f1cd409e000\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:1204 Ib Alloc Size 3336 pointer 0x7f1cd40c8000\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO Call to ibv_set_ece failed with error Operation not supported errno 95\n\naigc-maas-instance-leader-0:1639:1915 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error No such device errno 19\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:937 -> 2\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:1280 -> 2\naigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net.cc:837 -> 2\n",
        },
        "MD801",
        ["ENODEV", "NCCL_IB_GID_INDEX"],
    ),
    # https://github.com/NVIDIA/nccl/issues/2190: a size-0 segment: cuMem host and /dev/shm descriptors mixed
    (
        "NVIDIA-nccl-2190",
        {
            "log.txt": "[2026-05-22 10:26:17] d4fde3314201:13740:13740 [7] misc/shmutils.cc:132 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 0), error: No such file or directory (2)\nd4fde3314201:13740:13740 [7] NCCL INFO transport/shm.cc:634 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO transport/shm.cc:169 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO transport.cc:212 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO transport/generic.cc:25 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO group.cc:149 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO group.cc:209 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO group.cc:76 -> 2 [Async thread]\nd4fde3314201:13740:13740 [7] NCCL INFO group.cc:587 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO group.cc:743 -> 2\nd4fde3314201:13740:13740 [7] NCCL INFO enqueue.cc:2655 -> 2\nd4fde3314201:13736:13736 [3] NCCL INFO CUMEM imported shareable host buffer from proxyRank 2 size 4096 ptr 0x7f6e33400000, granularity 2097152\nd4fde3314201:13739:13739 [6] NCCL INFO MMAP imported shareable host buffer /dev/shm/nccl-I9oUed size 13832192 ptr 0x7f802659c000\nd4fde3314201:13738:13738 [5] NCCL INFO MMAP imported shareable host buffer /dev/shm/nccl-7uoCFt size 13832192 ptr 0x7f91d659c000\nd4fde3314201:13736:13736 [3] NCCL INFO MMAP imported shareable host buffer /dev/shm/nccl-6L5T3m size 13832192 ptr 0x7f6df0f9b000\n",
        },
        "MD802",
        ["NCCL_CUMEM_HOST_ENABLE=0", "not a missing or full /dev/shm"],
    ),
    # https://github.com/NVIDIA/nccl-tests/issues/219: one NCCL_SOCKET_IFNAME on the command line, an init internal error
    (
        "NVIDIA-nccl-tests-219",
        {
            "log.txt": "# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 0 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid 3740409 on fengyun416 device  0 [0x01] NVIDIA RTX A6000\n#  Rank  1 Group  0 Pid 3740409 on fengyun416 device  1 [0x07] NVIDIA RTX A6000\n#  Rank  2 Group  0 Pid 3164639 on    fengyun device  0 [0x01] NVIDIA RTX A6000\n#  Rank  3 Group  0 Pid 3164639 on    fengyun device  1 [0x05] NVIDIA RTX A6000\nfengyun: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers / '\n .. fengyun pid 3164639: Test failure common.cu:844\n--------------------------------------------------------------------------\nPrimary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n",
            "command.txt": "mpirun -np 2 -pernode --allow-run-as-root -hostfile host.txt -mca btl_tcp_if_include 192.168.0.0/24 -x NCCL_SOCKET_IFNAME=enp6s0 ./nccl-tests/build/all_reduce_perf -b 8 -e 128M -f 2 -g 2 -c 0\n",
        },
        "MD894",
        ["'enp6s0'", "list each host's name"],
    ),
    # https://github.com/NVIDIA/nccl-tests/issues/276: an NVLS CUDA failure: the fabric manager
    (
        "NVIDIA-nccl-tests-276",
        {
            "log.txt": "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error\n",
        },
        "MD830",
        ["fabric manager"],
    ),
    # https://github.com/aws/aws-ofi-nccl/issues/982: aws-ofi-nccl's tuner refused with NCCL_PROTO set
    (
        "aws-aws-ofi-nccl-982",
        {
            "error.txt": "a100-st-p4de24xlarge-668:789818:790167 [6] ncclResult_t nccl_ofi_tuner_init_v1(size_t, size_t, ncclDebugLogger_t):270 NCCL WARN NET/OFI The tuner plugin can not be loaded when explicitly choosing an algorithm or protocol with NCCL_ALGO/NCCL_PROTO\nRuntimeError: NCCL Error 4: invalid argument (run with NCCL_DEBUG=WARN for details)\n",
            "plugin_env.txt": "a100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Need to force simple protocol: byte delivery ordering not supported\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Support for global registrations: false\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Support for DMA-BUF registrations: false\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Adding FI_EFA_FORK_SAFE=1 to environment\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Adding NCCL_BUFFSIZE=8388608 to environment\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Adding NCCL_P2P_NET_CHUNKSIZE=524288 to environment\na100-st-p4de24xlarge-591:1754318:1754443 [1] NCCL INFO NET/OFI Adding NCCL_PROTO=simple to environment\n",
        },
        "MD653",
        ["tuner", "NCCL_PROTO=simple"],
    ),
    # https://github.com/exo-explore/exo/issues/1117: asyncio's accept out of system resource above a cut traceback
    (
        "exo-explore-exo-1117",
        {
            "exo.log": "[ 12:05:20.6448PM | ERROR   ] socket.accept() out of system resource\nsocket: <asyncio.TransportSocket fd=55, family=2, type=1, proto=0, laddr=('0.0.0.0', 52415)>\nTraceback (most recent call last):\n\n  File \"/Users/s13/exo/.venv/bin/exo\", line 10, in <module>\n    sys.exit(main())\n    │   │    └ <function main at 0x100f3de40>\n    │   └ <built-in function exit>\n    └ <module 'sys' (built-in)>\n\n  File \"/Users/s13/exo/src/exo/main.py\", line 206, in main\n    anyio.run(node.run)\n    │     │   │    └ <function Node.run at 0x10937a980>\n    │     │   └ Node(router=<exo.routing.router.Router object at 0x109434830>, worker=<exo.worker.main.Worker object at 0x1094acf50>, electio...\n    │     └ <function run at 0x101234b80>\n",
        },
        "MD663",
        ["EMFILE", "ulimit -n"],
    ),
    # https://github.com/exo-explore/exo/issues/1390: RTR errno 22: ports not addressed one by one
    (
        "exo-explore-exo-1390",
        {
            "node1.log": '[ 05:21:08.2128AM | INFO    ] Starting task ConnectToGroup(task_id=\'54553283-d358-4436-b93e-78404dbc0fe1\' task_status=<TaskStatus.Pending: \'Pending\'> instance_id=\'c8f49d49-1fbc-4490-a066-7d1f04a5885d\')\n[ 05:21:08.2154AM | INFO    ] runner connecting\n[ 05:21:08.2164AM | INFO    ] Starting initialization for rank 1\n[ 05:21:08.2178AM | INFO    ] rank 1 MLX_IBV_DEVICES: ./hosts_c8f49d49-1fbc-4490-a066-7d1f04a5885d_1.json with devices: [[null, "rdma_en4"], ["rdma_en5", null]]\n[ 05:21:08.2181AM | INFO    ] rank 1 MLX_JACCL_COORDINATOR: 192.168.1.52:54364\n[ 05:21:08.2359AM | WARNING ] Runner 66b6189d-8142-48d8-9f1f-3fb17097533d crashed with critical exception [jaccl] Changing queue pair to RTR failed with errno 22\nTraceback (most recent call last):\n\n  File "<string>", line 1, in <module>\n  File "/Users/mihay42/.local/share/uv/python/cpython-3.13.11-macos-aarch64-none/lib/python3.13/multiprocessing/spawn.py", line 122, in spawn_main\n    exitcode = _main(fd, parent_sentinel)\n               │     │   └ 5\n               │     └ 115\n               └ <function _main at 0x10198a980>\n  File "/Users/mihay42/.local/share/uv/python/cpython-3.13.11-macos-aarch64-none/lib/python3.13/multiprocessing/spawn.py", line 135, in _main\n    return self._bootstrap(parent_sentinel)\n',
        },
        "MD601",
        ["Thunderbolt Bridge"],
    ),
    # https://github.com/exo-explore/exo/issues/738: exo's download hash check and a -gzip ETag
    (
        "exo-explore-exo-738",
        {
            "log.txt": "Received request: GET /v1/download/progress\nReceived request: GET /v1/download/progress\nDownload error on attempt 5/30 for repo_id='mlabonne/Meta-Llama-3.1-8B-Instruct-abliterated' revision='main'\npath='model.safetensors.index.json' target_dir=PosixPath('/tmp/exo/mlabonne--Meta-Llama-3.1-8B-Instruct-abliterated')\nTraceback (most recent call last):\n  File \"/home/imaginemiracle/Downloads/exo/exo/download/new_shard_download.py\", line 134, in download_file_with_retry\n    try: return await _download_file(repo_id, revision, path, target_dir, on_progress)\n                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/home/imaginemiracle/Downloads/exo/exo/download/new_shard_download.py\", line 164, in _download_file\n    raise Exception(f\"Downloaded file {target_dir/path} has hash {final_hash} but remote hash is {remote_hash}\")\nException: Downloaded file /tmp/exo/mlabonne--Meta-Llama-3.1-8B-Instruct-abliterated/model.safetensors.index.json has\nhash 0fd8120f1c6acddc268ebc2583058efaf699a771 but remote hash is 0fd8120f1c6acddc268ebc2583058efaf699a771-gzip\nReceived request: GET /v1/download/progress\n",
        },
        "MD812",
        ["-gzip", "upgrade exo"],
    ),
    # https://github.com/fal-ai-community/video-diffusion-speedrun/issues/2: NCCL shared memory in a container
    (
        "fal-ai-community-video-diffusion-speedrun-2",
        {
            "log.txt": "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n",
        },
        "MD653",
        ["/dev/shm", "--shm-size"],
    ),
    # https://github.com/jundot/omlx/issues/1387: Metal's Impacting Interactivity
    (
        "jundot-omlx-1387",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error:\n[METAL] Command buffer execution failed: Impacting Interactivity\n(0000000e: kIOGPUCommandBufferCallbackErrorImpactingInteractivity)\n",
        },
        "MD661",
        ["watchdog", "Not memory"],
    ),
    # https://github.com/jundot/omlx/issues/2521: an engine's preflight memory estimate
    (
        "jundot-omlx-2521",
        {
            "log.txt": "Prefill would require ~237.30 GB peak (current 156.05 GB + KV+SDPA 81.25 GB) but dynamic ceiling is 235.96 GB. Raise custom_ceiling_bytes in admin Memory settings (currently pinned at 249.00 GB), or reduce context length.\n",
        },
        "MD883",
        ["preflight", "estimate"],
    ),
    # https://github.com/kserve/kserve/issues/3791: NCCL shared memory in a Kubernetes pod
    (
        "kserve-kserve-3791",
        {
            "log.txt": "hugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-H1dBqY to 9637892 bytes\n\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-H1dBqY (size 9637888)\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO transport/shm.cc:114 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO transport.cc:33 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO transport.cc:113 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO init.cc:1263 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO init.cc:1548 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO init.cc:1799 -> 2\nhugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] NCCL INFO init.cc:1837 -> 2\n(RayWorkerWrapper pid=1148) 06 Cuda Alloc Size 4194304 pointer 0x7f18f0e00000\n(RayWorkerWrapper pid=1148) hugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1148:1247 [1] NCCL INFO proxyProgressAsync opId=0x7f18ff66c450 op.type=2 op.reqBuff=0x7f18e8008e90 op.respSize=0 done\n",
        },
        "MD653",
        ["emptyDir", "/dev/shm"],
    ),
    # https://github.com/pie-project/pie/issues/500: an NVLS CUDA failure in a container
    (
        "pie-project-pie-500",
        {
            "pie.log": "[pie-driver-cuda] fatal: NCCL async error at driver/cuda/src/distributed.cpp:100\n    (ncclCommInitRankConfig(&comm_, world_size, uid, rank, &config)): unhandled cuda error\n",
            "nccl_debug.log": "transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'\ntransport/nvls.cc:401 -> 1\ninit.cc:1138 -> 1\ninit.cc:1407 -> 1\ngroup.cc:75 -> 1 [Async thread]\n",
        },
        "MD830",
        ["container", "NCCL_NVLS_ENABLE=0"],
    ),
    # https://github.com/sgl-project/sglang/issues/4259: NCCL shared memory in a container
    (
        "sgl-project-sglang-4259",
        {
            "log.txt": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:81, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\nLast error:\nError while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)\n",
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


def test_an_init_error_with_a_warn_line_is_not_read_as_the_interface_setting(tmp_path):
    """The one-name NCCL_SOCKET_IFNAME reading of an init internal error yields to an NCCL WARN
    line, which names the call that failed (here two ranks on one GPU)."""
    from tests.helpers import triage_files

    log = (
        "mpirun -np 2 -x NCCL_SOCKET_IFNAME=eth0 ./all_reduce_perf -b 8 -e 128M\n"
        "h1:1:1 [0] init.cc:1 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
        "device 1000\n"
        "h1: Test NCCL failure common.cu:959 'invalid usage (run with NCCL_DEBUG=WARN for "
        "details)'\n"
    )
    codes = [f["code"] for f in triage_files(tmp_path, {"log.txt": log})["triage"]["findings"]]
    assert "MD894" not in codes
