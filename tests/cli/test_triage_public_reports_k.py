"""Public failure reports of the third blind sample's half B and of a fourth, wholly held-out
sample, added after they were graded blind: their inputs, verbatim, with what a user sees once
their kinds were read. Each constant names its report by repository and number (the URL above
it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/google/flax/issues/4942
FLAX_4942_TRAIN = "INFO:absl:JAX devices: [CudaDevice(id=0), CudaDevice(id=1)]\nINFO:absl:JAX device count: 2\nINFO:absl:JAX local device count: 2\nINFO:absl:JAX process index: 0\nINFO:absl:JAX process count: 1\nINFO:absl:Initializing optimizer...\nINFO:absl:Sharding model and optimizer state...\nINFO:absl:Getting first training batch...\nINFO:absl:Got first training batch.\nINFO:absl:Calling first `train_step`.\n...\n...\nE0912 23:44:51.552719 2536982 pjrt_stream_executor_client.cc:3008] Execution of replica 0 failed: INTERNAL: NCCL operation ncclAllReduce( send_buffer.opaque(), recv_buffer.opaque(), ToNcclCount(dtype, count), nccl_dtype, ToNcclReduction(reduction_kind), comm_, se::gpu::AsGpuStreamValue(stream)) failed: invalid argument (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) ''.\nE0912 23:44:51.552720 2536985 pjrt_stream_executor_client.cc:3008] Execution of replica 0 failed: INTERNAL: NCCL operation ncclAllReduce( send_buffer.opaque(), recv_buffer.opaque(), ToNcclCount(dtype, count), nccl_dtype, ToNcclReduction(reduction_kind), comm_, se::gpu::AsGpuStreamValue(stream)) failed: invalid argument (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) ''.\n"

# https://github.com/jax-ml/jax/issues/34918
JAX_34918_ERROR = "jax.errors.JaxRuntimeError: INTERNAL: NCCL operation ncclAllReduce( send_buffer.opaque(), recv_buffer.opaque(), ToNcclCount(dtype, count), nccl_dtype, ToNcclReduction(reduction_kind), comm_, AsCudaStream(stream)) failed: invalid argument (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) ''.: while running replica 0 and partition 0 of a replicated computation (other replicas may have failed as well).\n"

# https://github.com/sgl-project/sglang/issues/3932
SGLANG_3932_NODE0 = "[2025-02-27T16:30:43.48675097Z] [rank3]:[E227 16:30:43.526290891 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 3 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31.\n [rank3]:[E227 16:30:43.526301625 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 Rank 3] Timeout at NCCL work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31.\n [rank3]:[E227 16:30:43.526306740 ProcessGroupNCCL.cpp:630] [Rank 3] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"

# https://github.com/NVIDIA/nccl/issues/1732
NCCL_1732_RUN1 = "rtptest1621:268329:272115 [5] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler-./libnccl_example_profiler_plugin.so.so.\n"

# https://github.com/NVIDIA/nccl/issues/1732
NCCL_1732_RUN2 = "rtptest1621:2617175:2618957 [6] NCCL INFO PROFILER/Plugin: Could not find: libnccl_example_profiler_plugin.so.\n"

# https://github.com/ml-explore/mlx/issues/4070
MLX_4070_RANK_STDERR = (
    "Assertion failed: (size() > index), function operator[], file small_vector.h, line 315.\n"
)

# https://github.com/huggingface/accelerate/issues/2468
ACCELERATE_2468_ACCELERATE_ENV = "- `Accelerate` version: 0.25.0\n- Platform: Linux-5.15.0-86-generic-x86_64-with-glibc2.35\n- Python version: 3.10.12\n- Numpy version: 1.26.4\n- PyTorch version (GPU?): 2.2.0+cu121 (True)\n- PyTorch XPU available: False\n- PyTorch NPU available: False\n- System RAM: 110.32 GB\n- GPU type: NVIDIA L4\n- `Accelerate` default config:\n        - compute_environment: LOCAL_MACHINE\n        - distributed_type: DEEPSPEED\n        - mixed_precision: bf16\n        - use_cpu: False\n        - debug: False\n        - num_processes: 8\n        - machine_rank: 0\n        - num_machines: 2\n        - main_process_ip: 192.168.10.161\n        - main_process_port: 1040\n        - rdzv_backend: static\n        - same_network: True\n        - main_training_function: main\n        - deepspeed_config: {'deepspeed_hostfile': '/root/hostfile', 'deepspeed_multinode_launcher': 'pdsh', 'gradient_accumulation_steps': 1, 'gradient_clipping': 1.0, 'offload_optimizer_device': 'none', 'offload_param_device': 'cpu', 'zero3_init_flag': True, 'zero3_save_16bit_model': True, 'zero_stage': 3}\n        - downcast_bf16: no\n        - tpu_use_cluster: False\n        - tpu_use_sudo: False\n        - tpu_env: []\n"

# https://github.com/huggingface/accelerate/issues/2468
ACCELERATE_2468_LAUNCH = "trainer-2:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py\", line 246, in _env_rendezvous_handler\ntrainer-2:     store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)\ntrainer-2:   File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py\", line 174, in _create_c10d_store\ntrainer-2:     return TCPStore(\ntrainer-2: torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of (192.168.121.122, 1040). The client socket has failed to connect to 192.168.121.122:1040 (errno: 113 - No route to host).\ntrainer-2: [2024-02-24 04:37:50,964] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 18507\ntrainer-2: [2024-02-24 04:37:50,993] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 18508\ntrainer-2: [2024-02-24 04:37:51,021] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 18509\ntrainer-2: [2024-02-24 04:37:51,021] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 18510\ntrainer-2: [2024-02-24 04:37:51,021] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '-b', '1', '-m', 'Llama-2-7b-chat-hf', '-o', 'sgd', '-t'] exits with return code = 1\npdsh@vnode1: trainer-2: ssh exited with exit code 1\n"

# https://github.com/NVIDIA/nccl/pull/2047
NCCL_2047_RANK0_CONSOLE = "ubuntu@VM-16-2-ubuntu:~/tmp$\xa0NCCL_SOCKET_IFNAME=eth0\xa0NCCL_COMM_ID=172.17.16.2:12340\xa0NCCL_DEBUG=INFO\xa0./a.out\xa00\xa02\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0ENV/Plugin:\xa0Could\xa0not\xa0find:\xa0libnccl-env.so\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Bootstrap:\xa0Using\xa0lo:127.0.0.1<0>\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NCCL_COMM_ID\xa0set\xa0by\xa0environment\xa0to\xa0172.17.16.2:12340\nRank\xa00/2\xa0initializing\xa0NCCL...\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0cudaDriverVersion\xa012080\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NCCL\xa0version\xa02.29.2+cuda12.8\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NCCL\xa0git\xa0version\xa0unknown\xa0unknown\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NCCL_COMM_ID\xa0set\xa0by\xa0environment\xa0to\xa0172.17.16.2:12340\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NET/Plugin:\xa0Could\xa0not\xa0find:\xa0libnccl-net.so\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Failed\xa0to\xa0open\xa0libibverbs.so[.1]\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0transport/net_ib/init.cc:370\xa0->\xa03\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Failed\xa0to\xa0initialize\xa0NET\xa0plugin\xa0IB\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NCCL_SOCKET_IFNAME\xa0set\xa0by\xa0environment\xa0to\xa0eth0\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0NET/Socket\xa0:\xa0Using\xa0[0]eth0:172.17.16.2<0>\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Initialized\xa0NET\xa0plugin\xa0Socket\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Assigned\xa0NET\xa0plugin\xa0Socket\xa0to\xa0comm\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0Using\xa0network\xa0Socket\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0[Rank\xa00]\xa0ncclCommInitRank\xa0comm\xa00x55913df16380\xa0rank\xa00\xa0nranks\xa02\xa0cudaDev\xa00\xa0nvmlDev\xa00\xa0busId\xa080\xa0commId\xa00xa3f68e0e3a1c36c0\xa0-\xa0Init\xa0START\nVM-16-2-ubuntu:6682:6688\xa0[0]\xa0NCCL\xa0INFO\xa0ncclOsSocketStartConnect:\xa0connect\xa0to\xa0127.0.0.1<52243>\xa0returned\xa0Connection\xa0refused,\xa0retrying\xa0(1/34)\xa0after\xa0sleep\xa0for\xa0100\xa0msec\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0ncclOsSocketPollConnect:\xa0connect\xa0to\xa0127.0.0.1<56395>\xa0returned\xa0Connection\xa0refused,\xa0retrying\xa0(1/34)\xa0after\xa0sleep\xa0for\xa0100\xa0msec\nVM-16-2-ubuntu:6682:6682\xa0[0]\xa0NCCL\xa0INFO\xa0ncclOsSocketPollConnect:\xa0connect\xa0to\xa0127.0.0.1<56395>\xa0returned\xa0Connection\xa0refused,\xa0retrying\xa0(2/34)\xa0after\xa0sleep\xa0for\xa0200\xa0msec\n...\n"

# https://github.com/pytorch/pytorch/pull/177472
PYTORCH_177472_TEST_ERROR = "torch.distributed.DistBackendError: NCCL error in: /var/lib/jenkins/workspace/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.29.3 \nncclUnhandledCudaError: Call to CUDA function failed. \nLast error: \nFailed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'. \nThis is usually caused by a system or configuration error in the Fabric Manager or NVSwitches. \nDisable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future. \n"

# https://github.com/ml-explore/mlx/pull/4039
MLX_4039_HOSTFILE_PARSE = "ValueError: Failed to parse hostfile /tmp/hf_min.json ('backend')\n"

# https://github.com/ml-explore/mlx/pull/4039
MLX_4039_HOSTFILE = '{"hosts": [{"ssh": "host1", "ips": ["10.0.0.1"]}]}\n'

# https://github.com/NVIDIA/nccl-tests/issues/252
NCCL_TESTS_252_ALL_REDUCE_PERF_OUTPUT = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid 203082 on    kolyoz1 device  0 [0x42] NVIDIA H100 80GB HBM3\n#  Rank  1 Group  0 Pid 203083 on    kolyoz1 device  1 [0x55] NVIDIA H100 80GB HBM3\n#  Rank  2 Group  0 Pid 203084 on    kolyoz1 device  2 [0xd4] NVIDIA H100 80GB HBM3\n#  Rank  3 Group  0 Pid 203085 on    kolyoz1 device  3 [0xe6] NVIDIA H100 80GB HBM3\n#  Rank  4 Group  0 Pid 153049 on    kolyoz2 device  0 [0x42] NVIDIA H100 80GB HBM3\n#  Rank  5 Group  0 Pid 153050 on    kolyoz2 device  1 [0x55] NVIDIA H100 80GB HBM3\n#  Rank  6 Group  0 Pid 153051 on    kolyoz2 device  2 [0xd4] NVIDIA H100 80GB HBM3\n"

# https://github.com/NVIDIA/nccl-tests/issues/252
NCCL_TESTS_252_NCCL_DEBUG = "kolyoz1:27255:27934 [0] NCCL INFO proxy.cc:698 -> 6\nkolyoz1:27255:27934 [0] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\n\nkolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)\nkolyoz2:25146:25854 [0] NCCL INFO transport/net.cc:1137 -> 6\nkolyoz2:25146:25854 [0] NCCL INFO proxy.cc:698 -> 6\nkolyoz2:25146:25854 [0] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\nkolyoz2:25146:25852 [0] NCCL INFO [Service thread] Connection closed by localRank 0\nkolyoz2:25172:25848 [1] NCCL INFO [Service thread] Connection closed by localRank 0\nkolyoz2:25148:25846 [3] NCCL INFO [Service thread] Connection closed by localRank 0\nkolyoz2:25169:25849 [2] NCCL INFO [Service thread] Connection closed by localRank 0\nkolyoz1:27255:27930 [0] NCCL INFO [Service thread] Connection closed by localRank 2\nkolyoz1:27223:27927 [1] NCCL INFO [Service thread] Connection closed by localRank 2\nkolyoz1:27225:27928 [3] NCCL INFO [Service thread] Connection closed by localRank 2\nkolyoz1:27224:27926 [2] NCCL INFO [Service thread] Connection closed by localRank 2\nkolyoz1:27255:27930 [0] NCCL INFO [Service thread] Connection closed by localRank 3\nkolyoz1:27223:27927 [1] NCCL INFO [Service thread] Connection closed by localRank 3\n"

# https://github.com/NVIDIA/nccl/issues/1538
NCCL_1538_SHOW_GIDS = "root@job-d01a8e06-2079-4ec3-a2fb-337517d5f9c7-master-0:/share/project# tools/show_gids\nDEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\nmlx5_0\t1\t4\tfe80:0000:0000:0000:c025:a1ff:fe31:2e81\t\t\tv1\tnet1\nmlx5_0\t1\t5\tfe80:0000:0000:0000:c025:a1ff:fe31:2e81\t\t\tv2\tnet1\nmlx5_0\t1\t6\t0000:0000:0000:0000:0000:ffff:0a9c:8184\t10.156.129.132  \tv1\tnet1\nmlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a9c:8184\t10.156.129.132  \tv2\tnet1\nmlx5_1\t1\t4\tfe80:0000:0000:0000:58f6:6bff:fe9a:8027\t\t\tv1\tnet2\nmlx5_1\t1\t5\tfe80:0000:0000:0000:58f6:6bff:fe9a:8027\t\t\tv2\tnet2\nmlx5_1\t1\t6\t0000:0000:0000:0000:0000:ffff:0a9c:8584\t10.156.133.132  \tv1\tnet2\nmlx5_1\t1\t7\t0000:0000:0000:0000:0000:ffff:0a9c:8584\t10.156.133.132  \tv2\tnet2\nmlx5_2\t1\t4\tfe80:0000:0000:0000:c417:79ff:fe88:9ece\t\t\tv1\tnet3\nmlx5_2\t1\t5\tfe80:0000:0000:0000:c417:79ff:fe88:9ece\t\t\tv2\tnet3\nmlx5_2\t1\t6\t0000:0000:0000:0000:0000:ffff:0a9c:8984\t10.156.137.132  \tv1\tnet3\nmlx5_2\t1\t7\t0000:0000:0000:0000:0000:ffff:0a9c:8984\t10.156.137.132  \tv2\tnet3\nmlx5_3\t1\t4\tfe80:0000:0000:0000:98ff:16ff:fe64:3a6d\t\t\tv1\tnet4\nmlx5_3\t1\t5\tfe80:0000:0000:0000:98ff:16ff:fe64:3a6d\t\t\tv2\tnet4\nmlx5_3\t1\t6\t0000:0000:0000:0000:0000:ffff:0a9c:8d84\t10.156.141.132  \tv1\tnet4\n"

# https://github.com/NVIDIA/nccl/issues/1538
NCCL_1538_WORKER_0_CRASH = "[job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:4682 :0:4682] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))\n==== backtrace (tid:   4677) ====\n==== backtrace (tid:   4678) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n 0 0x0000000000042520 __sigaction()  ???:0\n 1 0x0000000000050dc2 pncclRedOpDestroy()  ???:0\n==== backtrace (tid:   4676) ====\n 1 0x0000000000050dc2 pncclRedOpDestroy()  ???:0\n 2 0x0000000000051527 pncclRedOpDestroy()  ???:0\n 3 0x0000000000052703 pncclRedOpDestroy()  ???:0\n 0 0x0000000000042520 __sigaction()  ???:0\n 2 0x0000000000051527 pncclRedOpDestroy()  ???:0\n 4 0x000000000004c818 ncclRecv()  ???:0\n 1 0x0000000000050dc2 pncclRedOpDestroy()  ???:0\n"

# https://github.com/NVIDIA/nccl/issues/1538
NCCL_1538_WORKER_0_DEBUG_LOG_PART1 = "W1212 04:06:59.300000 5597 torch/distributed/run.py:793]\nW1212 04:06:59.300000 5597 torch/distributed/run.py:793] *****************************************\nW1212 04:06:59.300000 5597 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.\nW1212 04:06:59.300000 5597 torch/distributed/run.py:793] *****************************************\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5663:5663 [0] NCCL INFO Bootstrap : Using eth0:172.24.180.73<0>\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5663:5663 [0] NCCL INFO cudaDriverVersion 12060\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5663:5663 [0] NCCL INFO NCCL version 2.22.3+cuda12.6\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5663:5712 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5663:5712 [0] NCCL INFO P2P plugin v8 IBext_v8\n"

# https://github.com/NVIDIA/nccl/issues/1538
NCCL_1538_WORKER_0_DEBUG_LOG_PART2 = "job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5811 [2] NCCL INFO transport.cc:166 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5811 [2] NCCL INFO transport/generic.cc:29 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5811 [2] NCCL INFO group.cc:147 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5811 [2] NCCL INFO group.cc:70 -> 2 [Async thread]\n\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5801 [2] proxy.cc:1487 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665:5801 [2] proxy.cc:1521 NCCL WARN [Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3\n[job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5665 :0:5665] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5667:5814 [4] NCCL INFO transport.cc:166 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5667:5814 [4] NCCL INFO transport/generic.cc:29 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5667:5814 [4] NCCL INFO group.cc:147 -> 2\njob-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5667:5814 [4] NCCL INFO group.cc:70 -> 2 [Async thread]\n"

# https://github.com/meta-pytorch/torchtune/issues/1165
TORCHTUNE_1165_TRAIN = "1|16|Loss: 2.572175979614258: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████████████| 16/16 [00:25<00:00,  1.48s/it]\n[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeo\nut(ms)=600000) ran for 600055 milliseconds before timing out.\n[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeo\nut(ms)=600000) ran for 600059 milliseconds before timing out.\n[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeo\nut(ms)=600000) ran for 600086 milliseconds before timing out.\n[rank2]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 2] Timeout at NCCL work: 15037, last enqueued NCCL work: 15042, last completed NCCL work: 15036.\n"

# https://github.com/NVIDIA/nccl/pull/1618
NCCL_1618_JOB_ERROR_LOG = "rank_604.s12gn3064.4031852.log:[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\nrank_607.s12gn3064.4031852.log:[0607/1024][2025-02-16 22:31:34,418] [misc/socket.cc:586] [s12gn3064:pid=3942411] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n"

# https://github.com/aws/aws-ofi-nccl/issues/584
AWS_OFI_NCCL_584_FI_INFO = "(base) ubuntu@ip-172-31-36-110:~$ fi_info -p efa -t FI_EP_RDM\nprovider: efa\n    fabric: efa\n    domain: rdmap16s27-rdm\n    version: 118.20\n    type: FI_EP_RDM\n    protocol: FI_PROTO_EFA\n"

# https://github.com/aws/aws-ofi-nccl/issues/584
AWS_OFI_NCCL_584_LSPCI = "(base) ubuntu@ip-172-31-36-110:~$ lspci -i efa\n00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma]\n00:01.0 ISA bridge: Intel Corporation 82371SB PIIX3 ISA [Natoma/Triton II]\n00:01.3 Non-VGA unclassified device: Intel Corporation 82371AB/EB/MB PIIX4 ACPI (rev 08)\n00:03.0 VGA compatible controller: Amazon.com, Inc. Device 1111\n00:04.0 Non-Volatile memory controller: Amazon.com, Inc. Device 8061\n10:00.0 Ethernet controller: Amazon.com, Inc. Elastic Network Adapter (ENA)\n10:1b.0 Ethernet controller: Amazon.com, Inc. Elastic Fabric Adapter (EFA)\n10:1c.0 3D controller: NVIDIA Corporation Device 20b0 (rev a1)\n10:1d.0 3D controller: NVIDIA Corporation Device 20b0 (rev a1)\n"

# https://github.com/aws/aws-ofi-nccl/issues/584
AWS_OFI_NCCL_584_NCCL_WARN = "register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument\n"

# https://github.com/NVIDIA/TransformerEngine/issues/991
TRANSFORMERENGINE_991_NVIDIA_SMI = (
    "NVIDIA-SMI 525.105.17   Driver Version: 525.105.17   CUDA Version: 12.2\n"
)

# https://github.com/NVIDIA/TransformerEngine/issues/991
TRANSFORMERENGINE_991_PIP_LIST = (
    "torch                   2.1.1\ntransformer-engine      1.9.0.dev0+56e0b35\n"
)

# https://github.com/NVIDIA/TransformerEngine/issues/991
TRANSFORMERENGINE_991_TRACEBACK = 'Traceback (most recent call last):\n  File "examples/pytorch/comm_gemm_overlap/ln_mlp_with_overlap.py", line 166, in <module>\n    train(args)  File "examples/pytorch/comm_gemm_overlap/ln_mlp_with_overlap.py", line 98, in train\n    te.initialize_ub(\n  File "/usr/local/python/lib/python3.8/site-packages/transformer_engine/pytorch/module/base.py", line 269, in initialize_ub\n    add_ub(\n  File "/usr/local/python/lib/python3.8/site-packages/transformer_engine/pytorch/module/base.py", line 181, in add_ub\n    ub_obj = tex.UbufP2PCommOverlap(\nRuntimeError: /jizhicfs/macroliu/ptm_code/tpoverlap_pai/TransformerEngine_official/transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp:208 in function create_communicator_grouped2: CUDA Error: operation not supported\n'

# https://github.com/deepspeedai/DeepSpeed/pull/5878
DEEPSPEED_5878_LAUNCHER = "[2024-08-07 16:56:24,651] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w server22,server27 export PYTHONPATH=/public/home/grzhang/code/CLIP-2;  export SLURM_JOB_CPUS_PER_NODE=64(x2); ...\nserver22: bash: -c: 行 0: 未预期的符号“(”附近有语法错误\n"

# https://github.com/deepspeedai/DeepSpeed/pull/4985
DEEPSPEED_4985_TRACEBACK = 'rogpt1: Traceback (most recent call last):      \nrogpt1:   File "/opt/conda/lib/python3.10/runpy.py", line 196, in _run_module_as_main\nrogpt1:     return _run_code(code, main_globals, None,                                                                \nrogpt1:   File "/opt/conda/lib/python3.10/runpy.py", line 86, in _run_code       \nrogpt1:     exec(code, run_globals)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/launch.py", line 355, in <module>\nrogpt1:     main()\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/launch.py", line 308, in main\nrogpt1:     agent.run()\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/metrics/api.py", line 129, in wrapper\nrogpt1:     result = f(*args, **kwargs)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 723, in run\nrogpt1:     result = self._invoke_run(role)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/deepspeed/elasticity/elastic_agent.py", line 126, in _invoke_run\nrogpt1:     self._initialize_workers(self._worker_group)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/metrics/api.py", line 129, in wrapper\nrogpt1:     result = f(*args, **kwargs)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 692, in _initialize_workers\nrogpt1:     self._rendezvous(worker_group)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/metrics/api.py", line 129, in wrapper\nrogpt1:     result = f(*args, **kwargs)\nrogpt1:   File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 556, in _rendezvous\nrogpt1:     self._set_master_addr_port(\nrogpt1: TypeError: DSElasticAgent._set_master_addr_port() takes 3 positional arguments but 4 were given\n'

# https://github.com/NVIDIA/nvshmem/issues/45
NVSHMEM_45_IBSTATUS = "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:a088:c203:0002:7710\n\tbase lid:\t 0x7db\n\tsm lid:\t\t 0x66\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 400 Gb/sec (4X NDR)\n\tlink_layer:\t InfiniBand\n\nInfiniband device 'mlx5_1' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:a088:c203:0002:703c\n\tbase lid:\t 0x7de\n\tsm lid:\t\t 0x66\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 400 Gb/sec (4X NDR)\n\tlink_layer:\t InfiniBand\n"

# https://github.com/NVIDIA/nvshmem/issues/45
NVSHMEM_45_NVSHMEM = "15:35:48.149 /opt/nvshmem/nvshmem_src/src/modules/transport/ibgda/ibgda.cpp:1393: non-zero status: 121 Error in mlx5dv_devx_obj_modify for INIT2RTR_QP with syndrome 764216\n15:35:48.149 \n15:35:48.149 /opt/nvshmem/nvshmem_src/src/modules/transport/ibgda/ibgda.cpp:3005: non-zero status: 7 ibgda_rc_init2rtr failed on RC #0.\n15:35:48.149 /opt/nvshmem/nvshmem_src/src/host/transport/transport.cpp:420: non-zero status: 7 connect EPS failed \n15:35:48.149 \n15:35:48.149 /opt/nvshmem/nvshmem_src/src/host/init/init.cu:1044: non-zero status: 7 nvshmem setup connections failed \n"

# https://github.com/deepspeedai/DeepSpeedExamples/issues/845
DEEPSPEEDEXAMPLES_845_ERROR = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, remote process exited or there was a network error, NCCL version 2.18.6\n"

# https://github.com/kvcache-ai/Mooncake/issues/351
MOONCAKE_351_CHECK_ENV = "Python: 3.10.12 (main, Feb 4 2025, 14:57:36) [GCC 11.4.0]\nCUDA available: True\nGPU 0,1,2,3,4,5,6,7: NVIDIA H800\nGPU 0,1,2,3,4,5,6,7 Compute Capability: 9.0\nCUDA_HOME: /usr/local/cuda-12.4\nNVCC: Cuda compilation tools, release 12.4, V12.4.131\nCUDA Driver Version: 535.230.02\nPyTorch: 2.6.0+cu124\nsglang: 0.4.6.post2\nsgl_kernel: 0.1.1\nflashinfer_python: 0.2.5\ntriton: 3.2.0\ntransformers: 4.51.1\ntorchao: 0.10.0\nnumpy: 1.26.4\naiohttp: 3.11.18\nfastapi: 0.115.12\nhf_transfer: 0.1.9\nhuggingface_hub: 0.31.1\ninteregular: 0.3.3\nmodelscope: 1.25.0\norjson: 3.10.18\noutlines: 0.1.11\npackaging: 25.0\npsutil: 7.0.0\npydantic: 2.11.4\npython-multipart: 0.0.20\npyzmq: 26.4.0\nuvicorn: 0.34.2\nuvloop: 0.21.0\nvllm: 0.8.2\nxgrammar: 0.1.16\nopenai: 1.75.0\ntiktoken: 0.9.0\nanthropic: 0.51.0\nlitellm: 1.68.1\ndecord: 0.6.0\nNVIDIA Topology:\nGPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7 NIC0 NIC1 NIC2 NIC3 NIC4 NIC5 NIC6 NIC7 NIC8 CPU Affinity NUMA Affinity GPU NUMA ID\nGPU0 X NV8 NV8 NV8 NV8 NV8 NV8 NV8 SYS PIX PHB PHB PHB SYS SYS SYS SYS 0-89 0 N/A\n"

# https://github.com/kvcache-ai/Mooncake/issues/351
MOONCAKE_351_SGLANG_PREFILL = 'srt/disaggregation/mooncake/transfer_engine.py line 36, in register\nraise RuntimeError("Mooncake memory registration failed.")\nE0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory 0x2e1cbac200: Bad address [14]\n'

# https://github.com/vllm-project/vllm/issues/27083
VLLM_27083_DECODE_WORKER = "(Worker_DP0_EP0 pid=2823482) ERROR 10-16 17:22:56 [nixl_connector.py:815] RuntimeError: Remote NIXL agent engine ID mismatch. Expected 46126a31-6b81\n-435d-a116-e3e34a76ded3_dp0,received 96b1c4ff-9edf-4d21-b7cf-975a5f441d03_dp0.\n(Worker_DP0_EP0 pid=2823482) ERROR 10-16 17:22:56 [nixl_connector.py:827] Handshake failed for request chatcmpl\n"

# https://github.com/deepspeedai/DeepSpeed/pull/5281
DEEPSPEED_5281_ERROR = "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3\n"


def test_xlas_nccl_operation_failure_is_read_and_names_two_nccls_in_one_process(tmp_path):
    # google/flax #4942, jax-ml/jax #34918: a GPU TensorFlow imported beside JAX
    for name, text in (("train.log", FLAX_4942_TRAIN), ("error.log", JAX_34918_ERROR)):
        f = first(triage_files(tmp_path, {name: text}))
        assert f["code"] == "MD650" and "ncclInvalidArgument" in f["meaning"]
        assert "two copies of NCCL in one process" in f["meaning"]


def test_pytorchs_newer_watchdog_lines_are_a_watchdog_timeout(tmp_path):
    # sgl-project/sglang #3932: "Timeout at NCCL work: 32, last enqueued ..." (PyTorch 2.4+)
    f = first(triage_files(tmp_path, {"node0.log": SGLANG_3932_NODE0}))
    assert f["code"] == "MD837" and f["rank"] == 3


def test_a_plugin_path_made_into_a_name_by_nccl_2_27_3_is_named(tmp_path):
    # NVIDIA/nccl #1732: NCCL_PROFILER_PLUGIN=./libx.so -> libnccl-profiler-./libx.so.so
    doc = triage_files(tmp_path, {"run1.log": NCCL_1732_RUN1, "run2.log": NCCL_1732_RUN2})
    codes = {x["code"] for x in doc["triage"]["findings"]}
    assert codes == {"MD853"}  # not a hang in init
    (f,) = [x for x in doc["triage"]["findings"] if x["source"].endswith("run1.log")]
    assert "2.27.5" in f["meaning"]


def test_a_native_assertion_abort_in_mlx_names_a_collective_of_a_scalar(tmp_path):
    # ml-explore/mlx #4070: sum_scatter of a 0-d array, small_vector's bounds assertion
    f = first(triage_files(tmp_path, {"rank-stderr.log": MLX_4070_RANK_STDERR}))
    assert f["code"] == "MD854" and "0-dimensional" in f["meaning"]


def test_a_store_dialled_at_another_address_than_configured_is_the_cause(tmp_path):
    # huggingface/accelerate #2468: main_process_ip not passed down by DeepSpeed's launcher
    doc = triage_files(
        tmp_path,
        {
            "accelerate-env.txt": ACCELERATE_2468_ACCELERATE_ENV,
            "launch.log": ACCELERATE_2468_LAUNCH,
        },
    )
    f = first(doc)
    assert f["code"] == "MD855" and "192.168.10.161" in f["meaning"]
    assert "192.168.121.122" in f["meaning"]
    codes = {x["code"] for x in doc["triage"]["findings"]}
    assert "MD838" in codes and "MD600" not in codes  # DeepSpeed's [ERROR] is not mlx.launch's


def test_bootstrap_on_loopback_against_the_settings_names_nccl_2_29(tmp_path):
    # NVIDIA/nccl #2047: NCCL_COMM_ID's subnet match inverted in 2.29 (no-break spaces pasted)
    f = first(triage_files(tmp_path, {"rank0-console.log": NCCL_2047_RANK0_CONSOLE}))
    assert f["code"] == "MD879" and "NCCL_SOCKET_IFNAME=eth0" in f["meaning"]
    assert "2.30.3" in f["meaning"]


def test_an_nvls_bind_error_401_is_the_nvswitch_fabrics_not_the_gpus(tmp_path):
    # pytorch/pytorch #177472: 'the operation cannot be performed in the present state'
    f = first(triage_files(tmp_path, {"test-error.log": PYTORCH_177472_TEST_ERROR}))
    assert f["code"] == "MD653" and "Fabric Manager" in f["meaning"]
    assert "NCCL_NVLS_ENABLE=0" in f["remedy"]


def test_a_hostfile_keyerror_names_the_missing_key(tmp_path):
    # ml-explore/mlx #4039: a dict hostfile without 'backend' and 'envs'
    doc = triage_files(
        tmp_path, {"parse.stderr": MLX_4039_HOSTFILE_PARSE, "hostfile.json": MLX_4039_HOSTFILE}
    )
    f = first(doc)
    assert "the key 'backend'" in f["meaning"] and '"envs": []' in f["meaning"]


def test_an_ib_local_protection_error_names_acs_and_gpudirect(tmp_path):
    # NVIDIA/nccl-tests #252: PCIe ACS on, GPUDirect RDMA broken
    doc = triage_files(
        tmp_path,
        {
            "perf.txt": NCCL_TESTS_252_ALL_REDUCE_PERF_OUTPUT,
            "nccl-debug.log": NCCL_TESTS_252_NCCL_DEBUG,
        },
    )
    f = first(doc)
    assert f["code"] == "MD685" and "ACS" in f["meaning"] and "NCCL_NET_GDR_LEVEL=0" in f["meaning"]


def test_a_gid_table_seen_from_index_4_names_the_index_to_set(tmp_path):
    # NVIDIA/nccl #1538: a container sees GIDs 4-7 only; NCCL_IB_GID_INDEX=7
    doc = triage_files(
        tmp_path,
        {
            "show_gids.txt": NCCL_1538_SHOW_GIDS,
            "crash.txt": NCCL_1538_WORKER_0_CRASH,
            "part1.txt": NCCL_1538_WORKER_0_DEBUG_LOG_PART1,
            "part2.txt": NCCL_1538_WORKER_0_DEBUG_LOG_PART2,
        },
    )
    f = first(doc)
    assert (
        f["code"] == "MD856" and "start at index 4" in f["meaning"] and "mlx5_0 7" in f["meaning"]
    )
    (crash,) = [
        x
        for x in doc["triage"]["findings"]
        if x["code"] == "MD662" and x["source"].endswith("part2.txt")
    ]
    assert crash["role"] == "consequence"  # the segfault after the proxy's error is its teardown


def test_the_rank_without_a_watchdog_timeout_is_named(tmp_path):
    # meta-pytorch/torchtune #1165: rank 0 failed in its checkpoint save
    f = first(triage_files(tmp_path, {"train.log": TORCHTUNE_1165_TRAIN}))
    assert f["code"] == "MD857" and f["rank"] == 0 and "rank 0 printed no timeout" in f["meaning"]


def test_a_connect_given_up_without_pollout_names_nccl_2_27_3(tmp_path):
    # NVIDIA/nccl #1618: dropped SYNs; releases before 2.27.3 did not retry
    f = first(triage_files(tmp_path, {"job-error-log.txt": NCCL_1618_JOB_ERROR_LOG}))
    assert "no POLLOUT" in f["line"] and "2.27.3" in f["meaning"]


def test_aws_ofi_nccl_registration_names_the_efa_libfabric(tmp_path):
    # aws/aws-ofi-nccl #584: NCCL 2.19+ with an EFA installer before 1.29
    doc = triage_files(
        tmp_path,
        {
            "fi_info.txt": AWS_OFI_NCCL_584_FI_INFO,
            "lspci.txt": AWS_OFI_NCCL_584_LSPCI,
            "nccl-warn.log": AWS_OFI_NCCL_584_NCCL_WARN,
        },
    )
    f = first(doc)
    assert "EFA installer" in f["meaning"] and "FI_EFA_SET_CUDA_SYNC_MEMOPS=0" in f["meaning"]


def test_userbuffers_multicast_unsupported_names_ub_skipmc(tmp_path):
    # NVIDIA/TransformerEngine #991: driver 525, CUDA multicast unsupported
    doc = triage_files(
        tmp_path,
        {
            "nvidia-smi.txt": TRANSFORMERENGINE_991_NVIDIA_SMI,
            "pip-list.txt": TRANSFORMERENGINE_991_PIP_LIST,
            "traceback.log": TRANSFORMERENGINE_991_TRACEBACK,
        },
    )
    f = first(doc)
    assert f["code"] == "MD858" and "UB_SKIPMC=1" in f["remedy"]


def test_a_remote_shells_parse_error_names_an_unquoted_export(tmp_path):
    # deepspeedai/DeepSpeed #5878: SLURM_JOB_CPUS_PER_NODE=64(x2) exported unquoted (zh_CN bash)
    f = first(triage_files(tmp_path, {"launcher.log": DEEPSPEED_5878_LAUNCHER}))
    assert f["code"] == "MD859" and "SLURM_JOB_CPUS_PER_NODE" in f["meaning"]


def test_a_positional_count_mismatch_is_an_api_mismatch(tmp_path):
    # deepspeedai/DeepSpeed #4985: DSElasticAgent against a newer PyTorch elastic agent
    f = first(triage_files(tmp_path, {"traceback.log": DEEPSPEED_4985_TRACEBACK}))
    assert f["code"] == "MD849" and "versions" in f["meaning"]


def test_an_ibgda_rtr_refusal_names_the_traffic_class_on_infiniband(tmp_path):
    # NVIDIA/nvshmem #45: NVSHMEM_IB_TRAFFIC_CLASS set on an InfiniBand fabric
    doc = triage_files(
        tmp_path, {"ibstatus.txt": NVSHMEM_45_IBSTATUS, "nvshmem.log": NVSHMEM_45_NVSHMEM}
    )
    f = first(doc)
    assert f["code"] == "MD860" and "NVSHMEM_IB_TRAFFIC_CLASS" in f["remedy"]


def test_a_remote_error_alone_names_the_socket_interface(tmp_path):
    # deepspeedai/DeepSpeedExamples #845: NCCL on an interface the nodes cannot reach
    f = first(triage_files(tmp_path, {"error.log": DEEPSPEEDEXAMPLES_845_ERROR}))
    assert f["code"] == "MD650" and "NCCL_SOCKET_IFNAME" in f["meaning"]


def test_a_bad_address_registering_gpu_memory_names_expandable_segments(tmp_path):
    # kvcache-ai/Mooncake #351: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    doc = triage_files(
        tmp_path,
        {"check_env.txt": MOONCAKE_351_CHECK_ENV, "prefill.log": MOONCAKE_351_SGLANG_PREFILL},
    )
    f = first(doc)
    assert f["code"] == "MD861" and "expandable_segments" in f["remedy"]


def test_a_nixl_engine_id_mismatch_names_the_side_channel_host(tmp_path):
    # vllm-project/vllm #27083: VLLM_NIXL_SIDE_CHANNEL_HOST not set on a multi-node setup
    f = first(triage_files(tmp_path, {"decode-worker.log": VLLM_27083_DECODE_WORKER}))
    assert f["code"] == "MD862" and "VLLM_NIXL_SIDE_CHANNEL_HOST" in f["remedy"]


def test_nccl_2_19_internal_error_names_a_group_of_one_rank(tmp_path):
    # deepspeedai/DeepSpeed #5281: an all-reduce on a size-1 model-parallel group
    f = first(triage_files(tmp_path, {"error.log": DEEPSPEED_5281_ERROR}))
    assert f["code"] == "MD650" and "size 1" in f["meaning"]
