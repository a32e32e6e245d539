"""meshdoctor triage without the CLI: every signature from a realistic log, records across
lines, random bytes, text and crash reports, long lines, streaming in bounded memory. Through
the CLI (exit statuses, multi-rank logs, crash reports, bad input): tests/cli/test_triage.py.

Log lines are written from the message formats MLX prints (MLX v0.30.1-v0.32.x jaccl, ring,
nccl backends and mlx.launch), NCCL and CUDA error texts, and Python's traceback format."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshdoctor import catalogue, signatures
from meshdoctor.triage import logs
from tests.helpers import validate

FIX = Path(__file__).parents[2] / "fixtures" / "triage"
TBT_IPS = FIX / "python3.12-2026-01-05-100004.ips"
REG_MR_IPS = FIX / "python3.12-2026-01-05-110200.ips"
METAL_IPS = FIX / "python3.12-2026-01-05-120000.ips"

# (the line as a rank prints it, the code it must give) -- one or more per line signature
LINES = [
    ("ValueError: [jaccl] Changing queue pair to RTR failed with errno 22", "MD601"),
    ("RuntimeError: [jaccl] No IPv4-mapped GID for this device. Assign an IPv4 address", "MD601"),
    ("RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 60", "MD602"),
    ("RuntimeError: [jaccl] Creating the queue pair failed with 'Resource busy (16)'.", "MD603"),
    ("RuntimeError: [jaccl] Couldn't allocate protection domain", "MD604"),
    ("RuntimeError: [jaccl] Register memory region failed", "MD605"),
    ("RuntimeError: [jaccl] Recv failed with errno=2", "MD606"),
    ("RuntimeError: [jaccl] Recv failed with errno=60", "MD607"),
    ("RuntimeError: [jaccl] Send failed with error code -12", "MD608"),
    ("RuntimeError: [jaccl] Could not find device rdma_en5 (3 available)", "MD609"),
    ("[jaccl] mesh all_reduce: no completion for 30001 ms", "MD610"),
    ("    frame #3: 0x0000000104a1c2d0 libjaccl.dylib`jaccl::MeshImpl::recv(...)", "MD611"),
    ("0   libthunderboltrdma.dylib   0x0000000104c0d52c tbt_post_recv + 44", "MD612"),
    ("[ring] Socket 7 was closed by the peer", "MD613"),
    ("RuntimeError: [ring] connection to a peer was lost", "MD613"),
    ("[ring] Too many send/recv errors. Aborting...", "MD614"),
    ("[ring] Receiving from socket 7 failed with errno 54", "MD615"),
    (
        "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        "MD616",
    ),
    (
        "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
        "[jaccl] Recv failed with error code -12",
        "MD617",
    ),
    ("`ibv_devinfo -v` did not finish within 3.0 s (killed)", "MD619"),
    ("RuntimeError: [ring] Couldn't bind socket (error: 48)", "MD620"),
    ("RuntimeError: [ring] Couldn't connect (error: 61)", "MD621"),
    ("RuntimeError: Cannot initialize jaccl distributed backend.", "MD623"),
    (
        "RuntimeError: [jaccl] You need to provide via environment variables a rank (MLX_RANK), "
        "a device file (MLX_IBV_DEVICES) and a coordinator ip/port (MLX_JACCL_COORDINATOR)",
        "MD630",
    ),
    (
        "RuntimeError: [jaccl] You need to provide via environment variables a rank "
        "(JACCL_RANK/MLX_RANK), a device file (JACCL_IBV_DEVICES/MLX_IBV_DEVICES) and a "
        "coordinator ip/port (JACCL_COORDINATOR/MLX_JACCL_COORDINATOR)",
        "MD630",
    ),
    ("RuntimeError: [jaccl] Malformed device file", "MD631"),
    ("ValueError: [jaccl] Device names should be null, a string or array of strings.", "MD631"),
    ("ValueError: [jaccl] The full connectivity matrix should be provided", "MD631"),
    ("ValueError: [jaccl] The device file should define a valid mesh or a valid ring.", "MD631"),
    ("ValueError: [jaccl] Invalid rank 9", "MD631"),
    ("ValueError: [jaccl] The maximum number of supported peers is 8", "MD632"),
    ("ValueError: [jaccl] The JACCL mesh supports up to 8 peers", "MD632"),
    ("ValueError: [jaccl] Up to 4 per direction supported", "MD632"),
    ("RuntimeError: [jaccl] Could not open device rdma_en3", "MD633"),
    ("RuntimeError: [jaccl] Couldn't create completion queue", "MD634"),
    ("RuntimeError: [jaccl] Couldn't create queue pair", "MD635"),
    (
        "RuntimeError: [jaccl] Creating the queue pair failed with 'Operation not supported "
        "(102)'.",
        "MD635",
    ),
    ("RuntimeError: [jaccl] Changing queue pair to RTR failed with errno 96", "MD636"),
    ("RuntimeError: [jaccl] Changing queue pair to INIT failed with errno 22", "MD636"),
    ("RuntimeError: [jaccl] Couldn't connect (error: 60)", "MD637"),
    ("RuntimeError: [jaccl] Couldn't bind socket (error: 48)", "MD638"),
    ("RuntimeError: [jaccl] Accept failed (error: 9)", "MD638"),
    ("RuntimeError: [jaccl] Send failed with errno=32", "MD639"),
    ("RuntimeError: [jaccl] sum_scatter not supported.", "MD640"),
    ("RuntimeError: [ring] sum_scatter not supported.", "MD640"),
    ("RuntimeError: dlopen(librdma.dylib, 0x0001): Symbol not found: _ibv_query_gid_ex", "MD641"),
    (
        "RuntimeError: [ring] You need to provide via environment variables both a rank "
        "(MLX_RANK) and a hostfile (MLX_HOSTFILE)",
        "MD642",
    ),
    ("RuntimeError: [ring] Rank cannot be larger than the size of the group", "MD643"),
    ("RuntimeError: [ring] Rank 2 has no sockets to the right.", "MD643"),
    (
        "RuntimeError: [ring] It is required to have as many connections to the left as to the "
        "right but rank 1 has 2 to the left and 1 to the right",
        "MD643",
    ),
    ("RuntimeError: [ring] Send only supported between direct neighbors.", "MD643"),
    (
        "RuntimeError: [json.exception.parse_error.101] parse error at line 1, column 1: "
        "syntax error while parsing value - unexpected end of input; expected '[', '{', or a "
        "literal",
        "MD644",
    ),
    ("[ring] Sending to socket 9 made no progress", "MD645"),
    ("RuntimeError: [jaccl] peer is gone (rank 2)", "MD646"),
    ("RuntimeError: [nccl] Required environment variable 'NCCL_HOST_IP' is not set.", "MD647"),
    (
        "RuntimeError: [Rank 1] connect() failed after 300000 milliseconds and 1500 retries: "
        "Connection refused",
        "MD648",
    ),
    ("RuntimeError: [nccl] bind() failed: Address already in use", "MD649"),
    ("RuntimeError: [nccl] lookup failed for host: gpu-node-7", "MD649"),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'unhandled system error (run with "
        "NCCL_DEBUG=INFO for details)'",
        "MD650",
    ),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there was a "
        "network error'",
        "MD650",
    ),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details)'",
        "MD650",
    ),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:182 'unhandled system error (run with "
        "NCCL_DEBUG=INFO for details)'",
        "MD681",
    ),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details)'",
        "MD682",
    ),
    (
        "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there was a "
        "network error'",
        "MD683",
    ),
    ("CUDA error: out of memory at /mlx/backend/cuda/allocator.cpp:88", "MD651"),
    (
        "ImportError: cudaMallocManaged(&data, size) failed: no CUDA-capable device is detected",
        "MD684",
    ),
    (
        "CUDA error: an illegal memory access was encountered at /mlx/backend/cuda/eval.cpp:61",
        "MD830",
    ),
    (
        "RuntimeError: cublasLtMatmul(handle, desc, &alpha) failed: CUBLAS_STATUS_NOT_SUPPORTED",
        "MD652",
    ),
    ("gpu: Test CUDA failure common.cu:1030 'system not yet initialized'", "MD830"),
    (
        "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective "
        "calls at and around rank 39.",
        "MD832",
    ),
    ("node1:648288:648306 [0] NCCL WARN XML Import Channel : dev 3 not found.", "MD833"),
    # NVIDIA/nccl-tests #287: NCCL 2.25.1 on an RTX 5090 printed it as INFO
    (
        "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem "
        "79856",
        "MD835",
    ),
    # PyTorch's c10d texts (torch/csrc/distributed/c10d/TCPStore.cpp, socket.cpp,
    # ProcessGroupNCCL.cpp; torch/distributed/elastic/multiprocessing/errors)
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 600s while "
        "trying to connect to (10.0.0.1, 29500).",
        "MD838",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
        "local network address. port: 29500, useIPv6: 0, code: -98, name: EADDRINUSE, message: "
        "address already in use",
        "MD839",
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. "
        "1/2 clients joined.",
        "MD840",
    ),
    (
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: Connection reset "
        "by peer",
        "MD841",
    ),
    ("RuntimeError: NCCL communicator was aborted on rank 1.", "MD842"),
    # NVIDIA/nccl #1950: the caller's own check of an AVG reduction
    ("AssertionError: Tensor-likes are not close!", "MD844"),
    # NVIDIA/nccl #1669: Open MPI's signal handler
    ("[rtptest1621:405884] *** Process received signal ***", "MD845"),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "MD843"),
    # pytorch/pytorch #186591 (nvidia-nccl-cu12 beside nvidia-nccl-cu13)
    (
        "ImportError: /venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
        "undefined symbol: ncclCommResume",
        "MD847",
    ),
    # deepseek-ai/DeepEP #316 (two hosts with the same host name)
    ("IPC failure: Sending data over socket failed: No such file or directory", "MD848"),
    (
        "RuntimeError: /te/userbuffers/userbuffers-host.cpp:208 in function "
        "create_communicator_grouped2: CUDA Error: operation not supported",
        "MD858",
    ),
    ("server22: bash: -c: line 0: syntax error near unexpected token `('", "MD859"),
    (
        "E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory "
        "0x2e1cbac200: Bad address [14]",
        "MD861",
    ),
    ("RuntimeError: Remote NIXL agent engine ID mismatch. Expected a_dp0,received b_dp0.", "MD862"),
    (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "MD863",
    ),
    (
        "nvidia-container-cli: initialization error: nvml error: driver not loaded",
        "MD864",
    ),
    ("[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1", "MD865"),
    (
        "[rank1]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/"
        "device.cc:276] ss1.ss_family == ss2.ss_family. 10 vs 2",
        "MD866",
    ),
    (
        "aiohttp.client_exceptions.ClientConnectorCertificateError: Cannot connect to host "
        "huggingface.co:443 ssl:True [SSLCertVerificationError: (1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in "
        "certificate chain (_ssl.c:1006)')]",
        "MD867",
    ),
    (
        "Function gemv_bfloat16 is using language version 4.0 which is incompatible with this OS.",
        "MD868",
    ),
    (
        "E1102 08:01:02.000001 4242 worker_pool.cpp:281] Worker: Process failed for slice "
        "(opcode: 1, local_nic: mlx5_1, peer_nic: 10.0.0.3:17001@mlx5_1): RNR retry counter "
        "exceeded",
        "MD869",
    ),
    ("Failed to modify QP 5131 to RTR", "MD880"),
    ("ValueError: No slot '3' specified on host 'worker-1'", "MD881"),
    ("ValueError: current platform cpu does not support ray.", "MD882"),
    (
        "ValueError: [broadcast_shapes] Shapes (1,8,4,39,77) and (39,39) cannot be broadcast.",
        "MD804",
    ),
    (
        "[77.123] NVRM: nvCheckOkFailedNoLog: Check failed: NVLink fabric state cached by the "
        "driver is out of sync [NV_ERR_FABRIC_STATE_OUT_OF_SYNC] (0x00000087) returned from "
        "status @ mem_multicast_fabric.c:2917",
        "MD884",
    ),
    (
        "/nvshmem/src/host/team/team_internal_nvls.cpp:254: non-zero status: 401 cuMemMap failed "
        "to map 1073741824 bytes handle at address: 0x1320000000 offset 0 on device 3",
        "MD885",
    ),
    (
        "[1760052428.331649] proto_reconfig.c:60   UCX  ERROR cannot find remote protocol for: "
        "ucp_context_0 inter-node cfg#2 | put(multi) from cuda/GPU0 to host",
        "MD886",
    ),
    ("neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.", "MD887"),
    ("Couldn't allocate MR with error=12", "MD888"),
    ("No new peers discovered in the last grace period. Ending discovery process.", "MD889"),
    ("bash: line 3: /usr/sbin/sshd: No such file or directory", "MD899"),
    ("[1700000000.1] mm_iface.c:700 UCX ERROR mm_iface failed to allocate receive FIFO", "MD805"),
    (
        'Assertion "(gdr_pin_buffer(g, d_A, size, 0, 0, &mh)) == (0)" failed at sanity.cpp:344',
        "MD806",
    ),
    (
        "fabric manager NVIDIA GPU driver interface version 570.86.15 don't match with driver "
        "version 570.124.06.",
        "MD807",
    ),
    (
        "E0101 00:00:01.000001 1 rdma_endpoint.cpp:70] Failed to create QP: Cannot allocate "
        "memory [12]",
        "MD808",
    ),
    ("ubuntu@10.0.0.2: Permission denied (publickey).", "MD809"),
    ("PTY allocation request failed on channel 0", "MD810"),
    ('Unable to load host key "/etc/ssh/ssh_host_rsa_key": bad permissions', "MD811"),
    (
        "ibgda.cpp:1393: non-zero status: 121 Error in mlx5dv_devx_obj_modify for INIT2RTR_QP "
        "with syndrome 764216",
        "MD860",
    ),
    (
        "h1:1:2 [5] NCCL INFO PROFILER/Plugin: Could not find: "
        "libnccl-profiler-./libnccl_example_profiler_plugin.so.so.",
        "MD853",
    ),
    (
        "Assertion failed: (size() > index), function operator[], file small_vector.h, line 315.",
        "MD854",
    ),
    (
        "AssertionError: no_sync context manager is incompatible with gradient partitioning "
        "logic of ZeRO stage 2",
        "MD852",
    ),
    (
        "TypeError: ArraysCache.make_mask() got an unexpected keyword argument 'return_array'",
        "MD849",
    ),
    (
        "bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : received 36 bytes instead of 1",
        "MD850",
    ),
    (
        "E0403 15:37:24.104311 3871038 pjrt_stream_executor_client.cc:2809] Execution of replica 0 "
        "failed: INTERNAL: Communicator for rank 1 not found in a NCCL clique devices=[1,5]; stream=0",
        "MD851",
    ),
    # pytorch/pytorch #139990 (a Windows build without libuv, PyTorch 2.5)
    ("RuntimeError: use_libuv was requested but PyTorch was build without libuv support", "MD846"),
    # NVIDIA/nccl #1611: glibc's heap check aborting a rank
    ("free(): corrupted unsorted chunks", "MD836"),
    # vllm-project/vllm #2770: PyTorch's NCCL watchdog
    (
        "(RayWorkerVllm pid=5085) [E ProcessGroupNCCL.cpp:475] [Rank 4] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=20518, OpType=ALLREDUCE, NumelIn=106496, "
        "NumelOut=106496, Timeout(ms)=1800000) ran for 1800270 milliseconds before timing out.",
        "MD837",
    ),
    ("Primary job  terminated normally, but 1 process returned", "MD831"),
    (
        "gpu-node-7:48213:48299 [0] NCCL WARN Error while creating shared memory segment "
        "/dev/shm/nccl-2bX0 (size 9637888)",
        "MD653",
    ),
    (
        "gpu-node-7:48213:48299 [0] NCCL WARN Net : Connection closed by remote peer "
        "10.0.0.8<40123>",
        "MD686",
    ),
    (
        "node1:2345:2400 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<55034> with "
        "status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 hca mlx5_0",
        "MD685",
    ),
    # NCCL WARN texts of 2.19-2.27 as the public reports print them (NVIDIA/nccl #1235, #2013,
    # #1589, #1267)
    (
        "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        "MD800",
    ),
    (
        "host-01:118842:119061 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 "
        "Connection timed out, on dev mlx5_5:1, curr state INIT, next state RTR, local GID index "
        "3, local GID ::ffff:10.20.5.1, remote GID ::ffff:10.20.2.7",
        "MD801",
    ),
    (
        "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared "
        "memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)",
        "MD802",
    ),
    (
        "[rank0]: ncclSocketInit: connecting to address  with family 0 is neither AF_INET(2) nor "
        "AF_INET6(10)",
        "MD803",
    ),
    ("std::runtime_error: [Fence::wait] Timed out", "MD678"),
    ("  mlx::core::Fence::wait(mlx::core::Stream, mlx::core::array const&)::$_2", "MD692"),
    ("zsh: killed     python train.py", "MD695"),
    ("OSError: [Errno 98] Address already in use", "MD679"),
    ("\x1b[31m[ERROR] Incomplete mesh, m1 is not connected to m3 \x1b[0m", "MD680"),
    ("[ERROR] Could not find a full ring.", "MD687"),
    ("mlx.launch: error: No script is provided", "MD600"),
    ("Exception: Downloaded file /tmp/exo/m/model.safetensors.index.json has", "MD812"),
    ("RuntimeError: [eval] Attempting to eval an array without a primitive.", "MD816"),
    (
        "ValueError: [matmul] Last dimension of first input with shape (1,8,4096) must match "
        "second to last dimension of second input with shape (512,4096).",
        "MD817",
    ),
    ('{"detail":"Requested RDMA (MlxJaccl) but no RDMA-connected cycles available"}', "MD818"),
    (
        '<null>(18): error: more than one user-defined conversion from "nv_bfloat16" to "half"',
        "MD819",
    ),
    ("MLX/ErrorHandler.swift:345: Fatal error: [metal::malloc] Attempting to allocate", "MD820"),
    ("Runner terminated with signal=9 (Killed: 9)", "MD821"),
    ("RuntimeError: [load_safetensors] Invalid json header length /m/w.safetensors", "MD822"),
    ("MLX error: Failed to load the default metallib. library not found", "MD823"),
    (
        "panic: mlx: There is no Stream(gpu, 1) in current thread. at "
        "/tmp/mlx-c-0.6.0/mlx/c/transforms.cpp:73",
        "MD824",
    ),
    ("failed assertion `command buffer references deallocated object which previously", "MD825"),
    (
        "ValueError: Cannot use chat template functions because tokenizer.chat_template is not "
        "set and no template argument was passed!",
        "MD826",
    ),
    ("IOConnectUnmapMemory failed: kr=0xe00002bc", "MD828"),
    (
        "[0] NCCL INFO NET/Plugin : dlerror=/opt/amazon/efa/lib/libfabric.so.1: version "
        "`FABRIC_1.7' not found (required by /venv/lib/libnccl-net.so)",
        "MD829",
    ),
    (
        "macmon preflight failed with return code -6: thread 'main' panicked at "
        "src/sources.rs:394:41",
        "MD827",
    ),
    (
        "__nv_name_map(17): error: Error in parsing name expression for lowered name lookup.",
        "MD815",
    ),
    ("[WARN] 'X' is an invalid environment variable so it is ignored", "MD600"),
    ("[ERROR] Could not ssh to the following hosts:", "MD688"),
    ("[ERROR] m2 does not seem to have RDMA enabled", "MD689"),
    ("RuntimeError: [nccl] Unknown or unsupported dtype", "MD654"),
    ("RuntimeError: [distributed] Couldn't initialize any backend", "MD655"),
    (
        "ValueError: The valid values for backend are 'any', 'mpi' and 'ring' but 'jaccl' was "
        "provided",
        "MD656",
    ),
    ("RuntimeError: Cannot initialize mpi distributed backend.", "MD623"),
    ("[WARN] Node with rank 2 exited with code 255", "MD657"),
    ("\x1b[33m[WARN] Node with rank 3 was killed\x1b[0m", "MD657"),
    ("2026-01-05 10:00:06,000 ERROR supervisor: rank 2 exited with code 255.", "MD657"),
    (
        "[METAL] Command buffer execution failed: Insufficient Memory "
        "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        "MD661",
    ),
    # MLX 0.32.x messages (mlx/distributed sources, v0.32.1; mlx.launch 0.32.4)
    (
        "RuntimeError: [jaccl] In ring mode send is only supported to direct neighbors but "
        "tried to send to 2 from 0",
        "MD624",
    ),
    ("RuntimeError: [jaccl] The devices do not form a valid mesh.", "MD625"),
    ("RuntimeError: [jaccl] Unsupported dtype for JACCL operation", "MD626"),
    ("RuntimeError: Can't parse address 10.0.0.300:5000", "MD627"),
    (
        "RuntimeError: Can't perform the ring all reduce of 3 elements with a ring of size 300",
        "MD628",
    ),
    ("RuntimeError: [ring] Couldn't create socket (error: 24)", "MD629"),
    (
        "RuntimeError: [ring] Send only supported to direct neighbors but tried to send to 2 "
        "from 0",
        "MD643",
    ),
    ("RuntimeError: [ring] Group split not supported.", "MD665"),
    ("RuntimeError: Communication not implemented in an empty distributed group.", "MD666"),
    (
        "ValueError: [distributed] The only valid values for backend are 'any', 'mpi', 'nccl', "
        "'jaccl' and 'ring' but 'jacl' was provided.",
        "MD667",
    ),
    (
        "RuntimeError: [mpi] The world has a single process. Launch with mpirun to initialize "
        "the mpi backend.",
        "MD668",
    ),
    ("RuntimeError: [mpi] MPI found but it does not appear to be Open MPI.", "MD669"),
    (
        "mlx.launch: error: The hostfile is malformed: RDMA device of self should be null",
        "MD670",
    ),
    ("RuntimeError: [nccl] Send not supported in NCCL backend.", "MD671"),
    ("RuntimeError: [metal::malloc] Resource limit (499000) exceeded.", "MD672"),
    (
        "RuntimeError: [metal::malloc] Attempting to allocate 77309411328 bytes which is "
        "greater than the maximum allowed buffer size of 57982058496 bytes.",
        "MD673",
    ),
    ("RuntimeError: [malloc] Unable to allocate 17179869184 bytes.", "MD674"),
    ("RuntimeError: [metal::Device] Unable to construct residency set.", "MD675"),
    (
        "panic(cpu 2 caller 0xfffffe002f8c1234): IOGPUMemory.cpp:550 Assertion failed: "
        "prepare count underflow",
        "MD676",
    ),
    (
        "1733050000.123 memorystatus: killing_top_process pid 4242 [python3.12] "
        "(vm-pageshortage 10) - memorystatus_available_pages: 1200",
        "MD677",
    ),
    (
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
        "Failed to open the weights file",
        "MD696",
    ),
    ("RuntimeError: [metal::Device] Unable to build metal library from source", "MD697"),
    ("Terminating due to uncaught exception: [metal::Device] Unable to load kernel x", "MD698"),
    ("*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,", "MD699"),
    (
        '{"bug_type":"284","timestamp":"2026-01-05 10:00:03.00 +0100","name":"GPURestart"}',
        "MD693",
    ),
    ("EXC_RESOURCE -> python3.12[48213] exceeded mem limit: ActiveHard 6144 MB (fatal)", "MD694"),
    ("/usr/bin/python3: No module named mlx_lm", "MD870"),
    ("ImportError: libmlx.so: cannot open shared object file: No such file or directory", "MD876"),
]

# codes recognised by other means than one line, and the test that shows each (here or in
# tests/cli/test_triage.py)
NOT_LINES = {
    "MD618": "test_exit_status_explained",
    "MD622": "test_exit_status_explained",
    "MD658": "test_exit_status_explained",
    "MD659": "test_exit_status_explained",
    "MD664": "test_exit_status_explained",
    "MD660": "test_launcher_zero_hides_a_failed_rank",
    "MD662": "test_crash_signal_without_a_known_frame_is_a_native_crash",
    "MD663": "test_traceback_without_a_signature_is_a_python_exception",
    "MD871": "test_a_rust_panic_names_the_binding_function_not_the_abort_frames",
}


def log_of(line: str, rank: int = 1) -> bytes:
    """A rank log in the shape users paste: timestamped runner lines around the failure."""
    return (
        "2026-01-05 09:59:58,120 INFO  runner: loading model shard 1/4\n"
        "2026-01-05 09:59:59,480 INFO  runner: mx.distributed.init(backend='jaccl')\n"
        f"[INFO] rank {rank} step 0 loss 2.318 lr 1.0e-04\n"
        f"{line}\n"
        "2026-01-05 10:00:05,002 INFO  runner: shutting down\n"
    ).encode()


def triage_bytes(data: bytes, name: str = "rank1.log", tmp: Path = None):
    from meshdoctor.triage.collect import Collected, read_stream
    from meshdoctor.triage.findings import Input
    from meshdoctor.triage.report import build
    from meshdoctor.model import Verdict

    col = Collected()
    read_stream(io.BytesIO(data), Input(source=name, rank=logs.rank_from_name(name)), col)
    v = build(col, Verdict(command="triage")).finish()
    doc = v.to_dict()
    validate(doc)
    return doc


def codes_of(doc):
    return [f["code"] for f in doc["triage"]["findings"]]


@pytest.mark.parametrize("line,code", LINES, ids=[f"{c}-{i}" for i, (_, c) in enumerate(LINES)])
def test_every_signature_recognised_from_a_log(line, code):
    doc = triage_bytes(log_of(line))
    assert code in codes_of(doc), (line, codes_of(doc))
    assert doc["verdict"] == "no-go" and doc["exit_code"] == 1
    f = next(f for f in doc["triage"]["findings"] if f["code"] == code)
    assert f["line_number"] == 4 and f["meaning"] and f["remedy"]
    assert "\x1b" not in f["line"]


@pytest.mark.parametrize(
    "line",
    [
        "2024-05-01 10:00:00,123 [ERROR] Failed to load model weights from /data/x",
        "worker-3 | [WARN] retrying the download of shard 2",
    ],
)
def test_a_level_tag_inside_another_programs_line_is_not_mlx_launchs(line):
    """mlx.launch's log_warning and log_error print their tag first on the line (MLX 0.32.4
    _distributed_utils/common.py): a [WARN]/[ERROR] behind a timestamp or a service name is
    another program's logger, read as an unread error line, not as mlx.launch's message."""
    doc = triage_bytes(log_of(line))
    assert "MD600" not in codes_of(doc), codes_of(doc)


def test_a_log_copied_from_a_web_pages_source_reads_its_html_references():
    """``&#39;`` and ``&quot;`` where the program printed quotes: read as the characters."""
    doc = triage_bytes(
        log_of("transport/nvls.cc:251 NCCL WARN Cuda failure 1 &#39;invalid argument&#39;")
    )
    f = doc["triage"]["findings"][0]
    assert f["code"] == "MD830" and "'invalid argument'" in f["line"] and "NVLS" in f["meaning"]


def test_catalogue_is_covered_and_every_meaning_lists_causes():
    covered = {c for _, c in LINES} | set(NOT_LINES)
    assert set(signatures.codes()) <= covered | {"MD618", "MD622"}, (
        set(signatures.codes()) - covered
    )
    for s in signatures.CATALOGUE:
        text = catalogue.text(catalogue.entry(s.code))
        assert " ".join(s.meaning.split()) in " ".join(text.split()) and "What to do" in text
        for c in s.causes:  # each cause comes with the evidence that tells it apart
            assert c.what and c.evidence
    from meshdoctor.checker.registry import all_checks

    real = {c.code for c in all_checks()}
    assert {s.check for s in signatures.CATALOGUE if s.check} <= real
    pd = signatures.BY_CODE["MD604"]
    whats = " ".join(c.what for c in pd.causes)
    assert "PORT_DOWN" in whats and "Thunderbolt 4" in whats and "boot-time" in whats
    assert "exo PR #1467" in " ".join(c.evidence for c in pd.causes)


def test_version_wordings_map_to_one_code():
    """0.32.1 'No IPv4-mapped GID' = 0.32.0 RTR errno 22; 'Could not find device' (0.32.1+) =
    SIGSEGV in ibv_reg_mr (older); JACCL's side channel is not the ring's connect."""
    new = signatures.classify("[jaccl] No IPv4-mapped GID for this device.")
    old = signatures.classify("[jaccl] Changing queue pair to RTR failed with errno 22")
    assert [m.code for m in new] == [m.code for m in old] == ["MD601"]
    crash = (
        "Segmentation fault: 11\n"
        + "\n".join(f"noise {i}" for i in range(10))
        + "\n  frame #0: 0x00000001 librdma.dylib`ibv_reg_mr + 28\n"
    )
    assert [m.code for m in signatures.classify(crash)] == ["MD609"]
    assert [m.code for m in signatures.classify("[jaccl] Couldn't connect (error: 60)")] == [
        "MD637"
    ]
    assert "timed out" in signatures.classify("[jaccl] Couldn't connect (error: 60)")[0].meaning


def test_crash_record_spans_lines_with_both_lines_as_context():
    text = (
        "Thread 3 Crashed:: com.apple.jaccl\n"
        "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
        + "".join(
            f"{i}   libsystem_kernel.dylib  0x0000{i:04d} __ulock_wait + 8\n" for i in range(20)
        )
        + "  frame #0: libthunderboltrdma.dylib`tbt_post_recv + 44\n"
    )
    doc = triage_bytes(text.encode(), "node2.txt")
    (f,) = doc["triage"]["findings"]
    assert f["code"] == "MD612" and f["line_number"] == 2
    assert f["context"][0].startswith("Exception Type") and "tbt_post_recv" in f["context"][1]


def test_crash_signal_without_a_known_frame_is_a_native_crash():
    text = (
        "Segmentation fault: 11\n"
        + "".join(f"line {i}\n" for i in range(100))
        + "frame tbt_post_recv far too late\n"
    )
    doc = triage_bytes(text.encode())
    assert codes_of(doc) == ["MD662"]
    assert doc["triage"]["findings"][0]["groups"]["signal"] == "Segmentation fault"
    # the probe's own classification adds no generic codes
    assert signatures.classify(text) == []


def test_traceback_without_a_signature_is_a_python_exception():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/serve.py", line 40, in <module>\n'
        "    main()\n"
        '  File "/srv/serve.py", line 31, in main\n'
        "    cfg = json.load(fh)\n"
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    )
    doc = triage_bytes(text.encode())
    (f,) = doc["triage"]["findings"]
    assert f["code"] == "MD663" and f["groups"]["type"] == "json.decoder.JSONDecodeError"
    assert f["line_number"] == 6 and any("serve.py" in c for c in f["context"])
    # a traceback ending in a known message is that signature, with the frames as context
    tb = text.replace(
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "RuntimeError: [jaccl] Couldn't allocate protection domain",
    )
    doc = triage_bytes(tb.encode())
    assert codes_of(doc) == ["MD604"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_bytes_never_crash(data):
    doc = triage_bytes(data)
    assert doc["exit_code"] in (0, 1, 3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=200),
            st.sampled_from(
                [line for line, _ in LINES]
                + [
                    "Traceback (most recent call last):",
                    "  File 'x', line 1",
                    "Segmentation fault: 11",
                    "SIGSEGV",
                    "tbt_post_recv",
                    "2026-13-45 99:99:99 bogus time",
                ]
            ),
        ),
        max_size=60,
    )
)
def test_random_text_never_crashes(lines):
    doc = triage_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    assert doc["exit_code"] in (0, 1, 3)


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=20000))
def test_random_crash_reports_never_crash(data):
    from meshdoctor.triage import ips

    summary, match, when, warnings = ips.parse(data, "x.ips")
    assert summary is None or match is not None


@pytest.mark.parametrize("automaton", [True, False], ids=["aho-corasick", "bytes.find"])
def test_streaming_a_generated_log_in_bounded_memory(monkeypatch, automaton):
    """A 24 MiB log read in 64 KiB blocks: records that straddle a block boundary are still
    matched, line numbers stay exact, memory stays far below the input size; the same with
    the fallback anchor search."""
    monkeypatch.setattr(logs, "CHUNK", 64 << 10)
    if not automaton:
        monkeypatch.setattr(logs, "_AUTOMATON", None)
    normal = b"2026-01-05 10:00:00,000 INFO  runner: step 1200 loss 1.873 tok/s 1450.2\n"
    n = (24 << 20) // len(normal)

    class Gen(io.RawIOBase):
        """Yields the log without ever holding it: the failure record sits at line n - 3."""

        def __init__(self):
            self.i = 0
            self.pending = b""

        def readable(self):
            return True

        def read(self, size=-1):
            out = bytearray(self.pending)
            while len(out) < size and self.i < n:
                self.i += 1
                if self.i == n - 3:
                    out += b"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
                elif self.i == n - 1:
                    out += b"0 libthunderboltrdma.dylib 0x1 tbt_post_recv + 44\n"
                else:
                    out += normal
            self.pending = bytes(out[size:])
            return bytes(out[:size])

    from meshdoctor.triage.findings import Input

    inp = Input(source="big.log")
    tracemalloc.start()
    found = logs.scan(Gen(), inp)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert inp.lines == n and inp.bytes > (24 << 20) - 1024
    assert [(f.code, f.match.lineno) for f in found] == [("MD612", n - 3)]
    assert peak < 4 << 20, peak


def _progress_bar(nbytes: int) -> str:
    """tqdm-style progress redrawn with carriage returns, as mlx-lm prints it, ``nbytes`` long."""
    one = "".join(
        f"\r{i:3d}%|{'#' * (i // 5):<20}| {i * 15}/1500 [00:{i:02d}<00:00]" for i in range(100)
    )
    return (one * (nbytes // len(one) + 1))[:nbytes]


@pytest.mark.parametrize("chunk", [4 << 20, 48 << 10], ids=["one-block", "blocks-of-48KiB"])
def test_error_at_the_end_of_a_200KB_line_is_found(monkeypatch, chunk):
    """A 200 KB line without \\r, the error at its end: matched in overlapping windows, also
    when the line spans several read blocks; the line shown starts near the error."""
    monkeypatch.setattr(logs, "CHUNK", chunk)
    data = b"x" * 200_000 + b" RuntimeError: [jaccl] Recv failed with errno=2\nnext line\n"
    doc = triage_bytes(data)
    assert doc["verdict"] == "no-go" and codes_of(doc) == ["MD606"]
    f = doc["triage"]["findings"][0]
    assert f["line_number"] == 1 and f["line"].endswith("[jaccl] Recv failed with errno=2")
    assert len(f["line"]) <= signatures.LINE_CHARS
    assert doc["triage"]["inputs"][0]["lines"] == 2


@pytest.mark.parametrize("chunk", [4 << 20, 70 << 10], ids=["one-block", "blocks-of-70KiB"])
def test_error_straddling_a_window_edge_is_found_once(monkeypatch, chunk):
    """An error that sits across the edge of two windows of a long line is found once."""
    monkeypatch.setattr(logs, "CHUNK", chunk)
    err = b"RuntimeError: [jaccl] Recv failed with errno=2"
    edge = logs.MAX_LINE - logs.OVERLAP // 2
    data = b"y" * (edge - len(err) // 2) + err + b" " + b"z" * 100_000 + b"\n"
    doc = triage_bytes(data)
    assert codes_of(doc) == ["MD606"]
    assert doc["triage"]["findings"][0]["count"] == 1


def test_crlf_stays_one_line_end():
    doc = triage_bytes(
        log_of("RuntimeError: [jaccl] Recv failed with errno=2").replace(b"\n", b"\r\n")
    )
    assert doc["triage"]["findings"][0]["line_number"] == 4
