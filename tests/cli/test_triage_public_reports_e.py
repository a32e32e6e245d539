"""Public failure reports of a blind sample, half A (the half built against): each report's
inputs verbatim, run through ``meshdoctor triage`` as a user would, asserting what they see.
Each constant names its report by repository and number."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# The inputs, verbatim from the reports:
# https://github.com/ml-explore/mlx/issues/3442, https://github.com/NVIDIA/nccl/issues/1634,
# https://github.com/NVIDIA/nccl-tests/issues/216, #200, #287,
# https://github.com/NVIDIA/nccl/issues/1996, #1611, #2101,
# https://github.com/vllm-project/vllm/issues/5484, #42354,
# https://github.com/NVIDIA-NeMo/Speech/issues/13996, https://github.com/sgl-project/sglang/issues/3424

MLX_3442_LAUNCH = "mlx.launch --backend jaccl --hostfile hosts.json -- \\\n  python3 -c \"import mlx.core as mx; g = mx.distributed.init(); print(f'rank={g.rank()} size={g.size()}')\"\n\n# Expected: size=N (number of nodes in hostfile)\n# Actual: size=1 on each rank (ring singleton)\n"

NCCL_1634_LAUNCH = 'mpirun -np 16 -N 8 \\\n  --mca btl_tcp_if_include bond0 \\\n  --mca btl tcp,self \\\n  -H HGX-H100-04:8,HGX-H100-11:8 \\\n  -x NCCL_SOCKET_IFNAME=bond0 \\\n  -x NCCL_DEBUG=INFO \\\n  -x NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING,NET \\\n  -x NCCL_IB_HCA="mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9" \\\n  -x LD_LIBRARY_PATH \\\n  /opt/nccl-tests/build/all_reduce_perf -b 8 -e 16G -f 2 -g 1\n'

NCCL_1634_NCCL = "HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\nHGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n"

NCCL_TESTS_216_NCCL = "c2ce1c877ea3:1023:1032 [0] NCCL INFO NVLS Bind mem 0xac0000000 UC handle 0x7f3310ccb240 MC handle 0x7f3310ccaa20 size 1073741824\n"

NCCL_TESTS_200_LAUNCH = "# mpirun --allow-run-as-root -np 2 -H host1,host2 -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO -x NCCL_CUMEM_ENABLE=1 -x NCCL_IB_HCA=mlx5 /nccl-tests/build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\n"

NCCL_TESTS_287_NCCL = "user@GENOA-06:~/nccl-tests$ NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2\n# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid   4766 on   GENOA-06 device  0 [0x21] NVIDIA GeForce RTX 5090\n#  Rank  1 Group  0 Pid   4766 on   GENOA-06 device  1 [0x61] NVIDIA GeForce RTX 5090\nGENOA-06:4766:4766 [0] NCCL INFO Bootstrap: Using enp227s0f0:192.168.1.250<0>\nGENOA-06:4766:4766 [0] NCCL INFO cudaDriverVersion 12080\nGENOA-06:4766:4766 [0] NCCL INFO NCCL version 2.25.1+cuda12.8\nGENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\nGENOA-06:4766:4781 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\nGENOA-06:4766:4780 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\nGENOA-06:4766:4780 [0] NCCL INFO Failed to open libibverbs.so[.1]\nGENOA-06:4766:4780 [0] NCCL INFO NET/Socket : Using [0]enp227s0f0:192.168.1.250<0> [1]enxfe1dc2e063ea:fe80::52b1:b1f3:51c0:ecca%enxfe1dc2e063ea<0>\nGENOA-06:4766:4780 [0] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so.\nGENOA-06:4766:4780 [0] NCCL INFO Using network Socket\nGENOA-06:4766:4781 [1] NCCL INFO Using network Socket\n"

NCCL_1996_STACK = "[n125-011-039:288505:0:296459] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x48)\n==== backtrace (tid: 296459) ====\n 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2d4) [0x7fedc925c274]\n 1  /usr/lib/libucs.so.0(+0x2d44c) [0x7fedc925c44c]\n 2  /usr/lib/libucs.so.0(+0x2d61a) [0x7fedc925c61a]\n 3  /opt/tiger/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]\n 4  /opt/tiger/nccl/lib/libnccl.so(+0x12209d) [0x7ff1c18c309d]\n 5  /opt/tiger/nccl/lib/libnccl.so(+0x125331) [0x7ff1c18c6331]\n 6  /opt/tiger/nccl/lib/libnccl.so(+0x122e70) [0x7ff1c18c3e70]\n 7  /usr/lib/x86_64-linux-gnu/libc.so.6(+0x89144) [0x7ff1c151e144]\n 8  /usr/lib/x86_64-linux-gnu/libc.so.6(+0x1097dc) [0x7ff1c159e7dc]\n"

NCCL_1611_RANK = "free(): corrupted unsorted chunks\n[rack1-93-slot7:186363] *** Process received signal ***\nfree(): corrupted unsorted chunks\n[rack1-93-slot7:186363] Signal: Aborted (6)\n[rack1-93-slot7:186363] Signal code:  (-6)\n"

NCCL_2101_VLLM = "[2026-04-13 19:52:24] pais-modelendpoint-c3dea45f-4e72-4a34-8888-7c855e768973-8579zt8:508:508 [0] init.cc:426 NCCL WARN Cuda failure 'operation not supported'\npais-modelendpoint-c3dea45f-4e72-4a34-8888-7c855e768973-8579zt8:508:508 [0] NCCL INFO init.cc:1437 -> 1\npais-modelendpoint-c3dea45f-4e72-4a34-8888-7c855e768973-8579zt8:508:508 [0] NCCL INFO init.cc:1832 -> 1\npais-modelendpoint-c3dea45f-4e72-4a34-8888-7c855e768973-8579zt8:508:508 [0] NCCL INFO init.cc:1858 -> 1\n(Worker pid=508) INFO 04-13 19:52:24 [multiproc_executor.py:749] Parent process exited, terminating worker\n(Worker pid=509) INFO 04-13 19:52:24 [multiproc_executor.py:749] Parent process exited, terminating worker\n(Worker pid=509) ERROR 04-13 19:52:24 [multiproc_executor.py:800] WorkerProc failed to start.\n(Worker pid=509) ERROR 04-13 19:52:24 [multiproc_executor.py:800] Traceback (most recent call last):\n(Worker pid=509) ERROR 04-13 19:52:24 [multiproc_executor.py:800]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py\", line 771, in worker_main\n(Worker pid=509) ERROR 04-13 19:52:24 [multiproc_executor.py:800]     worker = WorkerProc(*args, **kwargs)\n(Worker pid=509) ERROR 04-13 19:52:24 [multiproc_executor.py:800]              ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"

VLLM_5484_TORCHRUN = "$ NCCL_DEBUG=TRACE torchrun --nproc-per-node=2 t01_vllm_sandbox.py \nW1110 17:26:36.056000 124020523139072 torch/distributed/run.py:779] \nW1110 17:26:36.056000 124020523139072 torch/distributed/run.py:779] *****************************************\nW1110 17:26:36.056000 124020523139072 torch/distributed/run.py:779] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. \nW1110 17:26:36.056000 124020523139072 torch/distributed/run.py:779] *****************************************\nomega:53277:53277 [0] NCCL INFO Bootstrap : Using wlp38s0:192.168.1.19<0>\nomega:53277:53277 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\nomega:53277:53277 [0] NCCL INFO cudaDriverVersion 12060\nNCCL version 2.20.5+cuda12.4\nomega:53278:53278 [1] NCCL INFO cudaDriverVersion 12060\nomega:53278:53278 [1] NCCL INFO Bootstrap : Using wlp38s0:192.168.1.19<0>\nomega:53278:53278 [1] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\n"

VLLM_42354_RANK1 = "[Rank 1] Watchdog caught collective operation timeout:\nWorkNCCL(SeqNum=12590, OpType=_ALLGATHER_BASE, NumelIn=1404928, NumelOut=2809856,\n         Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"

NEMO_13996_NCCL = "graph/topo.h:230 NCCL WARN Could not find NET with id 0\n"

SGLANG_3424_CRASH = "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7effaa1d3bb3 in /home/miniconda3/envs/sglang/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)                            \nframe #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7effaa1d561d in /home/miniconda3/envs/sglang/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)                           \nframe #4: <unknown function> + 0x145c0 (0x7efff6e015c0 in /home/miniconda3/envs/sglang/lib/python3.10/site-packages/torch/lib/libtorch.so)                                                      \nframe #5: <unknown function> + 0x94ac3 (0x7f0099294ac3 in /usr/lib/x86_64-linux-gnu/libc.so.6)\nframe #6: <unknown function> + 0x126850 (0x7f0099326850 in /usr/lib/x86_64-linux-gnu/libc.so.6)\n\n[rank1]:[E210 02:06:33.347835395 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(S\neqNum=1522789, OpType=_ALLGATHER_BASE, NumelIn=298960, NumelOut=4783360, Timeout(ms)=600000) ran for 600003 milliseconds before timing out.\nException raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):\n"


def test_every_rank_size_1_under_mlx_launch_jaccl_with_init_any(tmp_path):
    # mlx #3442: "Actual: size=1 on each rank" under `mlx.launch --backend jaccl --hostfile`
    doc = triage_files(tmp_path, {"launch.log": MLX_3442_LAUNCH})
    f = first(doc)
    assert f["code"] == "MD890"
    assert (
        "--backend jaccl" in f["meaning"] and "init(backend='jaccl', strict=True)" in f["meaning"]
    )


def test_hosts_with_different_nccl_net_plugins(tmp_path):
    # NVIDIA/nccl #1634: one node loads HPC-X's plugin, the other NCCL's internal one
    doc = triage_files(tmp_path, {"launch.log": NCCL_1634_LAUNCH, "nccl.log": NCCL_1634_NCCL})
    f = first(doc)
    assert f["code"] == "MD895" and "differ in their net plugin" in f["meaning"]
    assert "internal on HGX-H100-11" in f["meaning"] and "HGX-H100-04" in f["meaning"]
    assert "NCCL_NET_PLUGIN" in f["remedy"]


def test_a_log_that_stops_in_nvls_setup(tmp_path):
    # NVIDIA/nccl-tests #216: init hangs, its last line "NVLS Bind mem ..."
    doc = triage_files(tmp_path, {"nccl.log": NCCL_TESTS_216_NCCL})
    f = first(doc)
    assert f["code"] == "MD892" and "NVLink SHARP (NVLS)" in f["meaning"]
    assert "NCCL_NVLS_ENABLE=0" in f["remedy"]


def test_a_job_that_printed_nothing_after_its_command(tmp_path):
    # NVIDIA/nccl-tests #200: mpirun with NCCL_DEBUG=INFO and no output at all
    doc = triage_files(tmp_path, {"launch.log": NCCL_TESTS_200_LAUNCH})
    f = first(doc)
    assert f["code"] == "MD892" and "only the job's command line" in f["meaning"]
    assert "before NCCL's init" in f["remedy"] and "hostname" in f["remedy"]


def test_nccl_too_old_for_the_gpu(tmp_path):
    # NVIDIA/nccl-tests #287: NCCL 2.25.1 on an RTX 5090
    doc = triage_files(tmp_path, {"nccl.log": NCCL_TESTS_287_NCCL})
    f = first(doc)
    assert f["code"] == "MD835" and "82240" in f["meaning"] and "79856" in f["meaning"]
    assert "2.26.2" in f["remedy"]


def test_a_ucx_backtrace_blames_nccl(tmp_path):
    # NVIDIA/nccl #1996: UCX's handler frames on top, libnccl.so below them
    doc = triage_files(tmp_path, {"stack.txt": NCCL_1996_STACK})
    f = first(doc)
    assert f["code"] == "MD662" and "libnccl.so" in f["meaning"]
    assert "a crash inside NCCL itself" in f["meaning"] and "NVIDIA/nccl" in f["remedy"]
    assert "DiagnosticReports" not in f["remedy"]


def test_glibc_heap_corruption_is_a_cause(tmp_path):
    # NVIDIA/nccl #1611: "free(): corrupted unsorted chunks", Open MPI's signal block
    doc = triage_files(tmp_path, {"rank.log": NCCL_1611_RANK})
    f = first(doc)
    assert f["code"] == "MD836" and "NCCL" in f["remedy"]


def test_operation_not_supported_in_nccl_init_names_a_vgpu_without_uvm(tmp_path):
    # NVIDIA/nccl #2101: vLLM in a VM on a vGPU without unified memory
    doc = triage_files(tmp_path, {"vllm.log": NCCL_2101_VLLM})
    f = first(doc)
    assert f["code"] == "MD830" and "enable_uvm" in f["remedy"]


def test_one_host_init_that_stops_names_peer_to_peer(tmp_path):
    # vllm-project/vllm #5484: two GPUs of one host, torchrun, NCCL init never completes
    doc = triage_files(tmp_path, {"torchrun.log": VLLM_5484_TORCHRUN})
    f = first(doc)
    assert f["code"] == "MD892" and "run on one host (omega)" in f["meaning"]
    assert "NCCL_P2P_DISABLE=1" in f["remedy"]


def test_pytorch_watchdog_timeout_cut_over_lines(tmp_path):
    # vllm-project/vllm #42354 (WorkNCCL on the next line), sglang #3424 (cut inside it)
    for name, text in (("rank1.log", VLLM_42354_RANK1), ("crash.log", SGLANG_3424_CRASH)):
        doc = triage_files(tmp_path, {name: text})
        f = first(doc)
        assert f["code"] == "MD837", (name, f["code"])
        assert "TORCH_NCCL_DUMP_ON_TIMEOUT=1" in f["remedy"]


def test_nccl_topology_warning_says_upgrade(tmp_path):
    # NVIDIA-NeMo/Speech #13996: "graph/topo.h:230 NCCL WARN Could not find NET with id 0"
    doc = triage_files(tmp_path, {"nccl.log": NEMO_13996_NCCL})
    f = first(doc)
    assert f["code"] == "MD653" and "topology search" in f["meaning"]
    assert f["remedy"].startswith("Upgrade NCCL")


def test_every_rank_stops_after_announcing_sum_scatter(tmp_path):
    # MLX #4285: on the ring backend each rank prints that it calls sum_scatter, then nothing
    logs = {
        f"rank{r}.log": f"[rank {r}] init ok, size=2\n[rank {r}] calling sum_scatter\n"
        for r in (0, 1)
    }
    doc = triage_files(tmp_path, logs)
    f = first(doc)
    assert f["code"] == "MD892" and "announces 'sum_scatter'" in f["meaning"]
    assert "ring and mpi backends have no sum_scatter" in f["remedy"]


def test_hosts_listing_a_different_number_of_rdma_devices(tmp_path):
    # NCCL's "NET/IB : Using [0]mlx5_0:1/IB ..." line (NCCL_DEBUG=INFO), one NIC fewer on b2
    log = (
        "a1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
        "b2:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.2<0>\n"
    )
    doc = triage_files(tmp_path, {"nccl.log": log})
    f = first(doc)
    assert f["code"] == "MD895" and "1 device(s) on b2; 2 device(s) on a1" in f["meaning"]
