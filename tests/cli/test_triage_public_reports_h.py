"""Public failure reports of a blind sample's half B, kept as inputs after it was graded blind
(2 of 18 correct): the kinds of its misses read since, with what a user sees. Each constant
names its report by repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/NVIDIA/nccl/issues/1573
NCCL_1573_NCCL_WARN = "WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument\n"

# https://github.com/NVIDIA/nccl/issues/1573
NCCL_1573_SHOW_GIDS = "root@test-macvlan-pod-2:/# show_gids \nDEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\nmlx5_0\t1\t4\tfe80:0000:0000:0000:a4ed:ccff:fe8b:1994\t\t\tv1\tnet1\nmlx5_0\t1\t5\tfe80:0000:0000:0000:a4ed:ccff:fe8b:1994\t\t\tv2\tnet1\nmlx5_0\t1\t6\t0000:0000:0000:0000:0000:ffff:0a98:000c\t10.152.0.12  \tv1\tnet1\nmlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a98:000c\t10.152.0.12  \tv2\tnet1\nmlx5_1\t1\t4\tfe80:0000:0000:0000:9459:9bff:fe54:7704\t\t\tv1\tnet2\nmlx5_1\t1\t5\tfe80:0000:0000:0000:9459:9bff:fe54:7704\t\t\tv2\tnet2\nmlx5_1\t1\t6\t0000:0000:0000:0000:0000:ffff:0a98:040c\t10.152.4.12  \tv1\tnet2\nmlx5_1\t1\t7\t0000:0000:0000:0000:0000:ffff:0a98:040c\t10.152.4.12  \tv2\tnet2\n"

# https://github.com/sgl-project/sglang/issues/3794
SGLANG_3794_HEAD_NODE = "[2025-02-23 06:02:12 TP1] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP3] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP5] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP6] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP4] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP7] sglang is using nccl==2.21.5\n[2025-02-23 06:02:12 TP2] sglang is using nccl==2.21.5\n[2025-02-23 06:04:22 TP7] Scheduler hit an exception: Traceback (most recent call last):\n"

# https://github.com/deepspeedai/DeepSpeed/issues/8248
DEEPSPEED_8248_ENV = "PyTorch: 2.13.0+cu129\nCUDA: 12.9\nNCCL: 2.29.7\nGPU: NVIDIA GeForce RTX 3060 Laptop GPU\nGPU capability: 8.6\nPython: 3.12\n"

# https://github.com/deepspeedai/DeepSpeed/issues/8248
DEEPSPEED_8248_LAUNCH = "deepspeed --module jllm.train_pipe \\\n    --model Qwen3.5-27B \\\n    --num_train_epochs 1 \\\n    --gradient_accumulation_steps 1 \\\n    --train_data s10_Qwen3.5-27B/ \\\n    --init \\\n    --partition_method '0,6'\n"

# https://github.com/deepspeedai/DeepSpeed/issues/8248
DEEPSPEED_8248_LAUNCHER_ENV = "world_size=1\nlocal_rank=0\nCUDA_VISIBLE_DEVICES=0\n"

# https://github.com/deepspeedai/DeepSpeed/issues/8248
DEEPSPEED_8248_NCCL = "DESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 45/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 46/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 47/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 48/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 49/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 50/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 51/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 52/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 53/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 54/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 55/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 56/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 57/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 58/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 59/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 60/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 61/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 62/64 : 0\nDESKTOP-NJJ0SFQ:574:574 [0] NCCL INFO Channel 63/64 : 0\nDESKTOP-NJJ0SFQ:574:719 [0] NCCL INFO comm 0x5a3404663cb0 rank 0 nranks 1 cudaDev 0 busId 1000 - Abort COMPLETE\nDESKTOP-NJJ0SFQ:574:720 [0] NCCL INFO comm 0x5a340490ede0 rank 0 nRanks 1 cudaDev 0 busId 1000 - Abort START\nDESKTOP-NJJ0SFQ:574:720 [0] NCCL INFO comm 0x5a340490ede0 rank 0 nranks 1 cudaDev 0 busId 1000 - Abort COMPLETE\nDESKTOP-NJJ0SFQ:574:721 [0] NCCL INFO comm 0x5a3404bbd7e0 rank 0 nRanks 1 cudaDev 0 busId 1000 - Abort START\nDESKTOP-NJJ0SFQ:574:721 [0] NCCL INFO comm 0x5a3404bbd7e0 rank 0 nranks 1 cudaDev 0 busId 1000 - Abort COMPLETE\nDESKTOP-NJJ0SFQ:574:722 [0] NCCL INFO comm 0x5a3404e735b0 rank 0 nRanks 1 cudaDev 0 busId 1000 - Abort START\nDESKTOP-NJJ0SFQ:574:722 [0] NCCL INFO comm 0x5a3404e735b0 rank 0 nranks 1 cudaDev 0 busId 1000 - Abort COMPLETE\nDESKTOP-NJJ0SFQ:574:723 [0] NCCL INFO comm 0x5a3405120320 rank 0 nRanks 1 cudaDev 0 busId 1000 - Abort START\nDESKTOP-NJJ0SFQ:574:723 [0] NCCL INFO comm 0x5a3405120320 rank 0 nranks 1 cudaDev 0 busId 1000 - Abort COMPLETE\n"

# https://github.com/deepspeedai/DeepSpeed/issues/8248
DEEPSPEED_8248_RANK0_TRACEBACK = '[rank0]: Traceback (most recent call last):\n[rank0]:   File "<frozen runpy>", line 198, in _run_module_as_main\n[rank0]:   File "<frozen runpy>", line 88, in _run_code\n[rank0]:   File "/mnt/e/nlp/jllm/train_pipe.py", line 761, in <module>\n[rank0]:     main(args)\n[rank0]:   File "/mnt/e/nlp/jllm/train_pipe.py", line 658, in main\n[rank0]:     parallel_state.initialize_model_parallel(args.tensor_parallel_size,\n[rank0]:   File "/mnt/e/nlp/jllm/core/parallel_state.py", line 1151, in initialize_model_parallel\n[rank0]:     group = create_group(\n[rank0]:             ^^^^^^^^^^^^^\n[rank0]:   File "/mnt/e/nlp/jllm/core/parallel_state.py", line 183, in create_group\n[rank0]:     return torch.distributed.new_group(**kwargs,device_id=torch.device("cuda", 0))\n[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'

# https://github.com/deepspeedai/DeepSpeed/issues/4889
DEEPSPEED_4889_ENV = "export NCCL_IB_DISABLE=1\nexport NCCL_SOCKET_IFNAME=eno1\nexport NCCL_P2P_DISABLE=1\nexport NCCL_DEBUG=INFO\n"

# https://github.com/deepspeedai/DeepSpeed/issues/4889
DEEPSPEED_4889_HOSTFILE = "192.168.3.100 slots=2\n192.168.3.101 slots=2\n"

# https://github.com/deepspeedai/DeepSpeed/issues/4889
DEEPSPEED_4889_LAUNCH = "deepspeed --num_gpus 2 --num_nodes 2 --master_addr 192.168.3.100 --hostfile hostfile cifar10_deepspeed.py --deepspeed_config ds_config.json\n"

# https://github.com/deepspeedai/DeepSpeed/issues/4889
DEEPSPEED_4889_LAUNCHER = "[2024-01-08 16:13:55,768] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n[2024-01-08 16:13:56,462] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: 192.168.3.100,192.168.3.101\n"


def test_a_warn_without_nccls_prefix_names_the_gid_selection(tmp_path):
    # NVIDIA/nccl #1573: a pod that sees only some GID indices; NCCL's GID auto-selection fails
    doc = triage_files(
        tmp_path, {"nccl_warn.txt": NCCL_1573_NCCL_WARN, "show_gids.txt": NCCL_1573_SHOW_GIDS}
    )
    f = first(doc)
    assert f["code"] == "MD653" and "GID selection" in f["meaning"]
    assert f["remedy"].startswith("Give the GID yourself on every rank: NCCL_IB_GID_INDEX=N")


def test_a_log_cut_where_its_traceback_begins_says_the_error_is_missing(tmp_path):
    # sgl-project/sglang #3794: the head node's log ends at "Traceback (most recent call last):"
    doc = triage_files(tmp_path, {"head_node.log": SGLANG_3794_HEAD_NODE})
    f = first(doc)
    assert f["code"] == "MD663" and "cut before its exception line" in f["meaning"]


def test_a_traceback_cut_before_its_exception_names_its_innermost_call(tmp_path):
    # deepspeedai/DeepSpeed #8248: new_group(device_id=...) in a one-rank job; the NCCL log
    # ends in communicator aborts, not in a hang
    doc = triage_files(
        tmp_path,
        {
            "env.txt": DEEPSPEED_8248_ENV,
            "launch.txt": DEEPSPEED_8248_LAUNCH,
            "launcher_env.txt": DEEPSPEED_8248_LAUNCHER_ENV,
            "nccl.log": DEEPSPEED_8248_NCCL,
            "rank0_traceback.log": DEEPSPEED_8248_RANK0_TRACEBACK,
        },
    )
    f = first(doc)
    assert f["code"] == "MD663" and "cut before its exception line" in f["meaning"]
    assert "torch.distributed.new_group(" in f["meaning"] and "^^^" not in f["meaning"]


def test_inputs_that_hold_no_error_say_so(tmp_path):
    # deepspeedai/DeepSpeed #4889: settings, a hostfile and two launcher lines, no error
    doc = triage_files(
        tmp_path,
        {
            "env.txt": DEEPSPEED_4889_ENV,
            "hostfile.txt": DEEPSPEED_4889_HOSTFILE,
            "launch.txt": DEEPSPEED_4889_LAUNCH,
            "launcher.log": DEEPSPEED_4889_LAUNCHER,
        },
        rc=0,
    )
    (ok,) = [r for r in doc["results"] if r["code"] == "MD690"]
    assert "nothing in them reads as a failure" in ok["summary"]
    assert "each rank's own whole output" in ok["summary"]
