"""Public failure reports of a sixth blind sample (D), held out whole and added after it was
graded blind: their inputs, verbatim, with what a user sees once their kinds were read. Each
constant names its report by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/ai-cloud-validation/issues/643
AI_CLOUD_VALIDATION_643_JOB = "mm_iface failed to allocate receive FIFO\n...\n[ucp_address_unpack] Caught signal 11 (Segmentation fault)\n"

# https://github.com/NVIDIA/gdrcopy/issues/305
GDRCOPY_305_GDRCOPY_SANITY = 'gdrcopy_sanity\nAssertion "(gdr_pin_buffer(g, d_A[0], buffer_size, 0, 0, &A_mh[0])) == (0)" failed at sanity.cpp:435\nAssertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at sanity.cpp:344\nTotal: 28, Passed: 24, Failed: 2, Waived: 2\n'

# https://github.com/NVIDIA/gpu-driver-container/issues/735
GPU_DRIVER_CONTAINER_735_FABRICMANAGER = "fabric manager NVIDIA GPU driver interface version 590.48.01 don't match with driver version 580.126.09.\nPlease update with matching NVIDIA driver package.\n"

# https://github.com/NVIDIA/nccl/issues/1405
NCCL_1405_WORKER_0_NCCL_WARN = "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:698 -> 6\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\n\nkp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=32616 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff21 remoteGidsfd00:1148:9000:5000:4:200:3:ff20\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:698 -> 6\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\n\nkp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<49892> with status=12 opcode=32616 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:698 -> 6\n"

# https://github.com/NVIDIA/nvidia-container-toolkit/issues/1093
NVIDIA_CONTAINER_TOOLKIT_1093_SLURMD = "[2025-05-19T09:38:16.163] [1848523.0] pyxis: starting container: pyxis_1848523.0\n[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: container start failed with error code: 1\n[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: printing enroot log file:\n[2025-05-19T09:38:16.462] [1848523.0] error: pyxis:     nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device filters attached to the cgroup: bpf_prog_query(B\nPF_CGROUP_DEVICE) failed: operation not permitted\n[2025-05-19T09:38:16.462] [1848523.0] error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: couldn't start container\n[2025-05-19T09:38:16.462] [1848523.0] error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n[2025-05-19T09:38:16.462] [1848523.0] error: Failed to invoke spank plugin stack\n[2025-05-19T09:38:16.463] [1848523.0] pyxis: removing container filesystem: pyxis_1848523.0\n"

# https://github.com/jundot/omlx/issues/2763
OMLX_2763_COORDINATOR_CLUSTER_PAGE = "SSH connected but the peer would not accept this Mac's key.\n<MS identifier>.local has no Python interpreter for hardware discovery\nRDMA device probe failed for <worker hostname>.local: <username>@<worker hostname>.local: Permission denied (publickey,password,keyboard-interactive)\n"

# https://github.com/jundot/omlx/pull/3517
OMLX_3517_LAUNCHER = (
    "[WARN] Node with rank 1 exited with code 255\n[WARN] Node with rank 0 exited with code -15\n"
)

# https://github.com/jundot/omlx/pull/3517
OMLX_3517_SSH_STDERR = "PTY allocation request failed on channel 0\n"

# https://github.com/kubeflow/trainer/pull/2716
TRAINER_2716_WORKER_SSHD = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n@         WARNING: UNPROTECTED PRIVATE KEY FILE!          @\n@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\nPermissions 0644 for '/root/.ssh/id_rsa' are too open.\nIt is required that your private key files are NOT accessible by others.\nThis private key will be ignored.\nUnable to load host key \"/root/.ssh/id_rsa\": bad permissions\nUnable to load host key: /root/.ssh/id_rsa\nsshd: no hostkeys available -- exiting.\n"

# https://github.com/kvcache-ai/Mooncake/issues/691
MOONCAKE_691_DECODE = 'E0729 05:04:30.527725 14093 rdma_endpoint.cpp:70] Failed to create QP: Cannot allocate memory [12]\nFatal Python error: Segmentation fault\n\nThread 0x00007f2a3ffff640 (most recent call first):\n  File "/usr/lib/python3.10/threading.py", line 324 in wait\n  File "/usr/lib/python3.10/threading.py", line 607 in wait\n  File "/usr/local/lib/python3.10/dist-packages/tqdm/_monitor.py", line 60 in run\n  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner\n  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap\n\nThread 0x00007f2a53fff640 (most recent call first):\n  File "/sgl-workspace/sglang/python/sglang/srt/disaggregation/mooncake/conn.py", line 697 in heartbeat_checker\n  File "/usr/lib/python3.10/threading.py", line 953 in run\n  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner\n  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap\n\nThread 0x00007f2a5fffc640 (most recent call first):\n  File "/usr/local/lib/python3.10/dist-packages/zmq/sugar/socket.py", line 799 in recv_multipart\n  File "/sgl-workspace/sglang/python/sglang/srt/disaggregation/mooncake/conn.py", line 668 in decode_thread\n  File "/usr/lib/python3.10/threading.py", line 953 in run\n  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner\n'

# https://github.com/meta-pytorch/torchft/issues/30
TORCHFT_30_LIGHTHOUSE = '$ RUST_BACKTRACE=1 torchft_lighthouse --min_replicas 1 --quorum_tick_ms 100 --join_timeout_ms 1000\nTraceback (most recent call last):\n  File "/home/tiger/.local/bin/torchft_lighthouse", line 8, in <module>\n    sys.exit(lighthouse_main())\n             ^^^^^^^^^^^^^^^^^\nRuntimeError: Address already in use (os error 98)\n'

# https://github.com/meta-pytorch/torchrec/pull/4666
TORCHREC_4666_TEST_RUN_DEFAULT = "AssertionError: 4 != 0: Detected at least one unsuccessful run\nRuntimeError: Failed to initialize NCCL communicator: invalid usage\nNCCL Last Error: Failed to initialize any NET plugin\n"

# https://github.com/meta-pytorch/torchrec/pull/4666
TORCHREC_4666_TEST_RUN_SOCKET_TRANSPORT = (
    "NCCL Last Error: Duplicate GPU detected: rank 2 and rank 0 both on CUDA device 1b000\n"
)

# https://github.com/pytorch/pytorch/issues/135352
PYTORCH_135352_RANK5 = "[rank5]:[E906 12:16:32.611181197 ProcessGroupNCCL.cpp:607] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6336650, OpType=_ALLGATHER_BASE, NumelIn=32834048, NumelOut=262672384, Timeout(ms)=600000) ran for 600083 \nmilliseconds before timing out.\n"

# https://github.com/sgl-project/sglang/issues/4814
SGLANG_4814_SERVER = (
    "RuntimeError: CUDART error: peer access is not supported between these two devices\n"
)

# https://github.com/vllm-project/vllm/issues/15098
VLLM_15098_RAY_WORKER = '(RayWorkerWrapper pid=246, ip=10.99.48.141) *** SIGSEGV received at time=1742365186 on cpu 33 ***\n(RayWorkerWrapper pid=246, ip=10.99.48.141) PC: @     0x7f32d184f03d  (unknown)  ncclLaunchPrepare()\n(RayWorkerWrapper pid=246, ip=10.99.48.141)     @     0x7f62fb1b8520  (unknown)  (unknown)\n(RayWorkerWrapper pid=246, ip=10.99.48.141) [2025-03-19 06:19:46,956 E 246 246] logging.cc:484: *** SIGSEGV received at time=1742365186 on cpu 33 ***\n(RayWorkerWrapper pid=246, ip=10.99.48.141) [2025-03-19 06:19:46,956 E 246 246] logging.cc:484: PC: @     0x7f32d184f03d  (unknown)  ncclLaunchPrepare()\n(RayWorkerWrapper pid=246, ip=10.99.48.141) [2025-03-19 06:19:46,956 E 246 246] logging.cc:484:     @     0x7f62fb1b8520  (unknown)  (unknown)\n(RayWorkerWrapper pid=246, ip=10.99.48.141) Fatal Python error: Segmentation fault\n(RayWorkerWrapper pid=246, ip=10.99.48.141)\n(RayWorkerWrapper pid=246, ip=10.99.48.141) Stack (most recent call first):\n(RayWorkerWrapper pid=246, ip=10.99.48.141)   File "/opt/venv/lib/python3.12/site-packages/vllm/distributed/device_communicators/pynccl_wrapper.py", line 290 in ncclAllReduce\n(RayWorkerWrapper pid=246, ip=10.99.48.141)   File "/opt/venv/lib/python3.12/site-packages/vllm/distributed/device_communicators/pynccl.py", line 126 in all_reduce\n'


# https://github.com/kvcache-ai/Mooncake/issues/1986
MOONCAKE_1986_GDB_BACKTRACE = "#0  __memcpy_avx512_unaligned_erms ()\n    at ../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:265\n#1  mooncake::MemcpyWorkerPool::workerThread ()\n    from .../site-packages/mooncake/store.so\n#2  std::execute_native_thread_routine\n#3  start_thread\n#4  clone3\n"


def _firsts(doc):
    return [f for f in doc["triage"]["findings"] if f["first_cause"]]


def test_ucx_without_room_for_its_fifo_names_dev_shm_and_the_crash_follows(tmp_path):
    # NVIDIA/ai-cloud-validation #643
    doc = triage_files(tmp_path, {"job.log": AI_CLOUD_VALIDATION_643_JOB})
    (f,) = _firsts(doc)
    assert f["code"] == "MD805" and "medium: Memory" in f["remedy"]


def test_gdrcopys_pin_assertions_name_gdrdrv_2_4_2(tmp_path):
    # NVIDIA/gdrcopy #305
    f = first(triage_files(tmp_path, {"sanity.txt": GDRCOPY_305_GDRCOPY_SANITY}))
    assert f["code"] == "MD806" and "2.4.2" in f["remedy"] and f["count"] == 2


def test_fabric_manager_of_another_driver_version_is_named(tmp_path):
    # NVIDIA/gpu-driver-container #735
    f = first(triage_files(tmp_path, {"fm.log": GPU_DRIVER_CONTAINER_735_FABRICMANAGER}))
    assert f["code"] == "MD807" and "exact" in f["remedy"]


def test_a_retry_exceeded_between_nics_lists_same_host_traffic(tmp_path):
    # NVIDIA/nccl #1405
    f = first(triage_files(tmp_path, {"worker-0.log": NCCL_1405_WORKER_0_NCCL_WARN}))
    assert f["code"] == "MD685"
    assert any("NCCL_NET_DISABLE_INTRA=1" in c["evidence"] for c in f["causes"])


def test_the_device_rules_of_the_container_hook_name_the_toolkit_release(tmp_path):
    # NVIDIA/nvidia-container-toolkit #1093
    f = first(triage_files(tmp_path, {"slurmd.log": NVIDIA_CONTAINER_TOOLKIT_1093_SLURMD}))
    assert f["code"] == "MD864" and "1.17.6" in f["meaning"]


def test_ssh_refusing_the_key_is_the_cause_behind_another_message(tmp_path):
    # jundot/omlx #2763
    f = first(triage_files(tmp_path, {"page.txt": OMLX_2763_COORDINATOR_CLUSTER_PAGE}))
    assert f["code"] == "MD809" and "both directions" in f["remedy"]


def test_a_refused_pty_is_the_cause_of_the_remote_ranks_255(tmp_path):
    # jundot/omlx #3517
    doc = triage_files(
        tmp_path, {"launcher.log": OMLX_3517_LAUNCHER, "ssh-stderr.txt": OMLX_3517_SSH_STDERR}
    )
    (f,) = _firsts(doc)
    assert f["code"] == "MD810" and "restrict,pty" in f["remedy"]


def test_sshd_ignoring_an_open_key_names_the_secrets_mode(tmp_path):
    # kubeflow/trainer #2716
    f = first(triage_files(tmp_path, {"sshd.log": TRAINER_2716_WORKER_SSHD}))
    assert f["code"] == "MD811" and "defaultMode: 0600" in f["remedy"]


def test_a_qp_refused_for_memory_is_the_cause_of_the_segfault(tmp_path):
    # kvcache-ai/Mooncake #691
    doc = triage_files(tmp_path, {"decode.log": MOONCAKE_691_DECODE})
    (f,) = _firsts(doc)
    assert f["code"] == "MD808" and "MC_ENABLE_DEST_DEVICE_AFFINITY=1" in f["remedy"]


def test_rusts_address_in_use_is_a_port_taken(tmp_path):
    # meta-pytorch/torchft #30
    f = first(triage_files(tmp_path, {"lighthouse.log": TORCHFT_30_LIGHTHOUSE}))
    assert f["code"] == "MD679"


def test_pytorchs_nccl_last_error_line_is_read_as_nccls_warn(tmp_path):
    # meta-pytorch/torchrec #4666: "NCCL Last Error: Duplicate GPU detected: rank 2 ..."
    doc = triage_files(tmp_path, {"socket.log": TORCHREC_4666_TEST_RUN_SOCKET_TRANSPORT})
    f = first(doc)
    assert f["code"] == "MD653" and f["remedy"].startswith("Run one rank per GPU")


def test_a_timeout_of_600_s_names_a_group_without_the_jobs_timeout(tmp_path):
    # pytorch/pytorch #135352
    f = first(triage_files(tmp_path, {"rank5.log": PYTORCH_135352_RANK5}))
    assert f["code"] == "MD837" and "HYBRID_SHARD" in f["meaning"]


def test_cudarts_peer_access_names_the_custom_all_reduce(tmp_path):
    # sgl-project/sglang #4814
    f = first(triage_files(tmp_path, {"server.log": SGLANG_4814_SERVER}))
    assert f["code"] == "MD830" and "custom all-reduce" in f["remedy"]


def test_an_abseil_crash_frame_in_nccl_names_nccl(tmp_path):
    # vllm-project/vllm #15098
    f = first(triage_files(tmp_path, {"ray-worker.log": VLLM_15098_RAY_WORKER}))
    assert f["code"] == "MD662" and "ncclLaunchPrepare(), in NCCL" in f["meaning"]


def test_a_bare_gdb_backtrace_names_mooncakes_copy_worker(tmp_path):
    # kvcache-ai/Mooncake #1986: no signal line, no error line; memcpy is the system's
    f = first(triage_files(tmp_path, {"gdb.txt": MOONCAKE_1986_GDB_BACKTRACE}))
    assert f["code"] == "MD883"
    assert "mooncake::MemcpyWorkerPool::workerThread (in store.so)" in f["meaning"]
