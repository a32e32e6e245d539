"""Public failure reports of a blind sample, half B: graded blind through the CLI first (0 of
12 correct, 7 partly, 5 wrong), then kept here as inputs, verbatim, with what a user sees once
their kinds were read. Each constant names its report by repository and number."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/nccl/issues/1524, #1669, #1950, #2059;
# https://github.com/NVIDIA/nccl-tests/issues/213; https://github.com/pytorch/pytorch/issues/149153;
# https://github.com/vllm-project/vllm/issues/16978, #19613, #3069;
# https://github.com/NVIDIA/TensorRT-LLM/issues/4238, #9263; https://github.com/ml-explore/mlx-lm/pull/801

NCCL_1524_NCCL = "ubuntu20-server-2:94639:94647 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error\n\nubuntu20-server-2:94639:94647 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error\n\nubuntu20-server-2:94639:94652 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 192.168.1.2<57888> with status=5 opcode=1 len=0 vendor err 249 (Recv) localGid fe80::e61d:2dff:fef2:9c94 remoteGidsfe80::e61d:2dff:fef2:9fa0\nubuntu20-server-2:94639:94652 [0] NCCL INFO transport/net.cc:1298 -> 6\nubuntu20-server-2:94639:94652 [0] NCCL INFO proxy.cc:694 -> 6\nubuntu20-server-2:94639:94652 [0] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]\n"

NCCL_1669_NCCL = "rtptest1621:405884:407462 [0] NCCL INFO NCCL_IB_FIFO_TC set by environment to 224.\nrtptest1625:1886888:1890510 [7] NCCL INFO NET/IB: IbDev 4 Port 1 qpn 103534 set_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}\nrtptest1625:1886888:1890510 [7] NCCL INFO NET/IB: IbDev 4 Port 1 qpn 103554 set_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}\nrtptest1625:1886888:1890510 [7] NCCL INFO NET/IB: IbDev 4 Port 1 qpn 103555 set_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}\nrtptest1625:1886888:1890510 [7] NCCL INFO NET/IB: IbDev 4 Port 1 qpn 103556 set_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}\nrtptest1620:935572:937467 [0] NCCL INFO RAS client listening socket at ::1<28028>\nrtptest1625:1886882:1890516 [6] NCCL INFO RAS client listening socket at ::1<28028>\nrtptest1625:1886888:1890510 [7] NCCL INFO RAS client listening socket at ::1<28028>\nrtptest1621:405884:407462 [0] NCCL INFO RAS client listening socket at ::1<28028>\n[rtptest1621:405884] *** Process received signal ***\n"

NCCL_1950_RANK0 = "msg=f\"Last entries are: {output[-10:]} vs {input_tensor[-10:]}\",\n\nAssertionError: Last entries are: tensor([-1.1953,  0.2295,  0.0000,  0.0000,  0.0000,  0.0000,  0.0000,  0.0000,\n         0.0000,  0.0000], device='cuda:0', dtype=torch.bfloat16) vs tensor([-1.1953,  0.2295,  1.6016,  0.2891,  1.9844, -0.5703, -0.1904,  0.6172,\n         1.4141,  1.2578], device='cuda:0', dtype=torch.bfloat16)\n"

NCCL_2059_RANK1 = "[rank1]: Error while attaching to shared memory segment /dev/shm/nccl-Ќ (size 0), error: No such file or directory (2)\n"

NCCL_TESTS_213_COMMAND = 'mpirun --allow-run-as-root -np 2 -H 10.0.0.15,10.0.0.16 -mca plm_rsh_args "-p 9001" -x NCCL_DEBUG=TRACE -x NCCL_DEBUG_FILE=debug.log -x NCCL_TOPO_DUMP_FILE=topo-file-1 -x NCCL_IB_HCA=mlx5_0,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_10,mlx5_11,mlx5_12 -x NCCL_SOCKET_IFNAME=bond0 --bind-to numa /opt/nccl-tests/build/all_reduce_perf -b 1G -e 8G -f 2 -g 8\n'

NCCL_TESTS_213_LAUNCH = "Warning: Permanently added '[10.0.0.15]:9001' (ED25519) to the list of known hosts.\n# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid    798 on       hw14 device  0 [0x0f] NVIDIA H800\n#  Rank  1 Group  0 Pid    798 on       hw14 device  1 [0x34] NVIDIA H800\n#  Rank  2 Group  0 Pid    798 on       hw14 device  2 [0x48] NVIDIA H800\n#  Rank  3 Group  0 Pid    798 on       hw14 device  3 [0x5a] NVIDIA H800\n"

PYTORCH_149153_STACK = "  thread #16, name = 'python', stop reason = signal SIGSTOP\n    frame #0: 0x00007fb0b7f0792d libc.so.6`syscall + 29\n    frame #1: 0x00007fb08faef142 libstdc++.so.6`std::__atomic_futex_unsigned_base::_M_futex_wait_until_steady(this=<unavailable>, __addr=0x00007fac98000b00, __val=2147483648, __has_timeout=true, __s=<unavailable>, __ns=(__r = 711393434)) at futex.cc:217:18\n    frame #2: 0x00007fb090db0b85 libtorch_cuda.so`c10d::ProcessGroupNCCL::waitForFutureOrTimeout(std::future<bool>&, std::chrono::duration<long, std::ratio<1l, 1000l>> const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char>> const&, c10d::C10dLoggingData&, bool) + 725\n    frame #3: 0x00007fb090db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664\n"

VLLM_16978_DP_RUN = '    self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),\n  File "/mnt/workspace/zhr/vllm_official/vllm/distributed/device_communicators/pynccl_wrapper.py", line 256, in NCCL_CHECK\n    raise RuntimeError(f"NCCL error: {error_str}")\nRuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\nINFO 04-22 18:37:21 [multiproc_worker_utils.py:124] Killing local vLLM worker processes\nProcess Process-1:\nTraceback (most recent call last):\n  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap\n    self.run()\n  File "/usr/lib/python3.12/multiprocessing/process.py", line 108, in run\n    self._target(*self._args, **self._kwargs)\n  File "/mnt/workspace/zhr/test/test_data_parallel_official.py", line 119, in main\n    llm = LLM(model=model,\n          ^^^^^^^^^^^^^^^^\n  File "/mnt/workspace/zhr/vllm_official/vllm/utils.py", line 1149, in inner\n    return fn(*args, **kwargs)\n           ^^^^^^^^^^^^^^^^^^^\n  File "/mnt/workspace/zhr/vllm_official/vllm/entrypoints/llm.py", line 249, in __init__\n    self.llm_engine = LLMEngine.from_engine_args(\n                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'

VLLM_19613_NCCL = "[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory\n"

VLLM_19613_VLLM_SERVE = "INFO:     Application startup complete.\nINFO 06-13 07:35:57 [chat_utils.py:420] Detected the chat template content format to be 'string'. You can set `--chat-template-content-format` to override this.\nERROR 06-13 07:35:59 [core.py:517]   File \"cupy_backends/cuda/libs/nccl.pyx\", line 129, in cupy_backends.cuda.libs.nccl.check_status\nERROR 06-13 07:35:59 [core.py:517] cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"

VLLM_3069_COMMAND = "python -m vllm.entrypoints.openai.api_server --model models/Qwen-14B-Chat --trust-remote-code --port 8509 --served-model-name qwen-14b-chat --dtype float16 --tensor-parallel-size 2\n"

VLLM_3069_SERVER = "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.\n"

VLLM_3069_VERSIONS = "NCCL：NCCL version 2.19.3+cuda11.0\nCUDA：11.6\n"

TENSORRT_LLM_4238_LAUNCH = "NCCL_DEBUG=INFO python examples/pytorch/quickstart_advanced.py \\\n--model_dir llama-3.1-model/Meta-Llama-3.1-70B-Instruct \\\n--tp 2 \n"

TENSORRT_LLM_4238_NCCL = "[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n[1] NCCL INFO group.cc:242 -> 1\n[1] NCCL INFO group.cc:470 -> 1\n[1] NCCL INFO group.cc:573 -> 1\n[1] NCCL INFO enqueue.cc:2229 -> 1\nFailed, NCCL error /home/jenkins/agent/workspace/LLM/main/L0_Test-x86_64/tensorrt_llm/cpp/tensorrt_llm/thop/allreduceOp.cpp:308 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\n\n[0] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n"

TENSORRT_LLM_9263_TRACEBACK = "    self.nccl_comm = torch.classes.trtllm.NcclCommunicatorOp(\n                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nRuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed, NCCL error ../tensorrt_llm/runtime/ncclCommunicator.cpp:90 'invalid usage (run with NCCL_DEBUG=WARN for details)'\n"

TENSORRT_LLM_9263_WORKER_0_0 = "test-trt-prefill-worker-0-0:42:982 [0] NCCL INFO Using network Socket\ntest-trt-prefill-worker-0-0:42:982 [0] NCCL INFO ncclCommInitRank comm 0x7a12257c8780 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xaa9becea043c4e6c - Init START\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so.\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO NET/IB : No device found.\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:10.0.133.59<0>\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.133.59<0>\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO Initialized NET plugin Socket\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO Assigned NET plugin Socket to comm\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO Using network Socket\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO ncclCommInitRank comm 0x397e3800 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0xaa9becea043c4e6c - Init START\ntest-trt-prefill-worker-0-0:43:43 [0] NCCL INFO RAS client listening socket at ::1<28028>\n"

MLX_LM_801_LAUNCH = "mlx.launch --verbose --backend jaccl --hostfile hosts-jaccl.json --env MLX_METAL_FAST_SYNCH=1 -- /Users/optimus/repo/mlx-lm/.venv/bin/mlx_lm.chat --model mlx-community/Qwen3-4B-Instruct-2507-8bit --temp 1.0\n[INFO] Running /Users/optimus/repo/mlx-lm/.venv/bin/python /Users/optimus/repo/mlx-lm/.venv/bin/mlx_lm.chat --model mlx-community/Qwen3-4B-Instruct-2507-8bit --temp 1.0 \nFetching 10 files: 100% 10/10 [00:00<00:00, 106184.91it/s]\nDownload complete: : 0.00B [00:00, ?B/s]              \nFetching 11 files: 100% 11/11 [00:00<00:00, 38067.12it/s]\nDownload complete: : 0.00B [00:00, ?B/s]              \nFetching 10 files: 100% 10/10 [00:02<00:00,  4.07it/s]MB/s]                \nFetching 11 files: 100% 11/11 [00:49<00:00,  4.46s/it]     \nDownload complete: 100% 4.27G/4.27G [00:49<00:00, 86.9MB/s]00:00, 152MB/s]  \nDownload complete: : 15.9MB [00:52, 306kB/s] :00, 152MB/s]                \n[INFO] Starting chat session with mlx-community/Qwen3-4B-Instruct-2507\n"


def test_ib_queue_pair_error_names_the_mtu_and_the_flush_is_its_echo(tmp_path):
    # NVIDIA/nccl #1524: ports of different MTUs, async "local access violation work queue error"
    doc = triage_files(tmp_path, {"nccl.log": NCCL_1524_NCCL})
    f = first(doc)
    assert f["code"] == "MD653" and "active_mtu" in f["remedy"]
    flushed = next(x for x in doc["triage"]["findings"] if x["code"] == "MD685")
    assert "IBV_WC_WR_FLUSH_ERR" in flushed["meaning"] and not flushed["first_cause"]


def test_open_mpi_signal_banner_alone_is_a_crash(tmp_path):
    # NVIDIA/nccl #1669: a rank crashes right after NCCL's RAS lines, no error line before it
    f = first(triage_files(tmp_path, {"nccl.log": NCCL_1669_NCCL}))
    assert f["code"] == "MD845" and "coredumpctl" in f["remedy"]


def test_a_failed_result_check_is_wrong_data(tmp_path):
    # NVIDIA/nccl #1950: the caller's own check finds zeros in the reduced output
    f = first(triage_files(tmp_path, {"rank0.log": NCCL_1950_RANK0}))
    assert f["code"] == "MD844" and "NCCL_PROTO=Simple" in f["remedy"]


def test_shm_attach_of_a_garbage_segment_is_not_blamed_on_containers(tmp_path):
    # NVIDIA/nccl #2059: a segment of size 0 with a name of garbage bytes
    f = first(triage_files(tmp_path, {"rank1.log": NCCL_2059_RANK1}))
    assert f["code"] == "MD802" and "NCCL_CUMEM_HOST_ENABLE=0" in f["meaning"]
    assert "descriptor" in f["meaning"]


def test_nccl_tests_processes_that_each_ran_alone(tmp_path):
    # NVIDIA/nccl-tests #213: mpirun -np 2, each process printed its own header
    files = {"command.txt": NCCL_TESTS_213_COMMAND, "launch.log": NCCL_TESTS_213_LAUNCH}
    f = first(triage_files(tmp_path, files))
    assert f["code"] == "MD890" and "MPI=1" in f["remedy"]


def test_a_stack_blocked_in_the_communicators_abort(tmp_path):
    # pytorch/pytorch #149153: ProcessGroupNCCL::abort never returns (NCCL 2.25.1)
    f = first(triage_files(tmp_path, {"stack.txt": PYTORCH_149153_STACK}))
    assert f["code"] == "MD873" and "ProcessGroupNCCL::abort" in f["meaning"]
    assert f["remedy"].startswith("A communicator's abort or destroy")


def test_vllm_pynccl_invalid_usage_names_two_ranks_on_one_gpu(tmp_path):
    # vllm-project/vllm #16978: "RuntimeError: NCCL error: invalid usage" from pynccl_wrapper
    f = first(triage_files(tmp_path, {"dp_run.log": VLLM_16978_DP_RUN}))
    assert f["code"] == "MD650" and "CUDA_VISIBLE_DEVICES" in f["meaning"]


def test_dmabuf_registration_enomem_names_the_buffer_size(tmp_path):
    # vllm-project/vllm #19613: ibv_reg_dmabuf_mr "Cannot allocate memory"
    files = {"nccl.log": VLLM_19613_NCCL, "vllm_serve.log": VLLM_19613_VLLM_SERVE}
    f = first(triage_files(tmp_path, files))
    assert f["code"] == "MD653" and "NCCL_BUFFSIZE" in f["remedy"]


def test_nccl_that_cannot_be_graph_captured_names_its_cuda_build(tmp_path):
    # vllm-project/vllm #3069: NCCL 2.19.3+cuda11.0 under CUDA graphs
    files = {"server.log": VLLM_3069_SERVER, "versions.txt": VLLM_3069_VERSIONS}
    f = first(triage_files(tmp_path, files))
    assert f["code"] == "MD653" and "+cudaY" in f["remedy"] and "enforce-eager" in f["remedy"]


def test_invalid_argument_where_nccl_launches_kernels_says_upgrade(tmp_path):
    # NVIDIA/TensorRT-LLM #4238: enqueue.cc "Cuda failure 1 'invalid argument'" on both ranks
    f = first(triage_files(tmp_path, {"nccl.log": TENSORRT_LLM_4238_NCCL}))
    assert f["code"] == "MD830" and "upgrade (or change) NCCL" in f["meaning"]


def test_two_ranks_of_one_communicator_on_one_gpu(tmp_path):
    # NVIDIA/TensorRT-LLM #9263: both ranks cudaDev 0 busId 100000 in one pod
    files = {
        "traceback.txt": TENSORRT_LLM_9263_TRACEBACK,
        "worker.log": TENSORRT_LLM_9263_WORKER_0_0,
    }
    doc = triage_files(tmp_path, files)
    f = first(doc)
    assert f["code"] == "MD896" and "bus id 100000" in f["meaning"]
    err = next(x for x in doc["triage"]["findings"] if x["code"] == "MD650")
    assert err["consequence_of"] == f["id"]


def test_a_chat_session_that_waits_for_input_is_not_called_a_hang(tmp_path):
    # ml-explore/mlx-lm #801: the log ends at "Starting chat session" (a prompt waiting for
    # input); its real fault (ranks sampling with unsynchronised random state) prints nothing
    # and is not read yet, but a prompt is no hang
    doc = triage_files(tmp_path, {"launch.log": MLX_LM_801_LAUNCH}, rc=0)
    assert "MD892" not in {f["code"] for f in doc["triage"]["findings"]}
