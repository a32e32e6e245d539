"""Public failure reports of the fifth blind sample's half A, the half built on: their inputs,
verbatim, with what a user sees once their kinds were read. Each constant names its report by
repository and number (the URL above it)."""

from __future__ import annotations

from tests.helpers import first_cause as first, triage_files

# https://github.com/GradientHQ/parallax/issues/439
PARALLAX_439_PARALLAX_JOIN = "RuntimeError: Unknown Apple silicon chip 'M5 Max' detected. Please add it to the _APPLE_PEAK_FP16 dictionary.\n"

# https://github.com/NVIDIA/TensorRT-LLM/issues/16899
TENSORRT_LLM_16899_ERROR = (
    "RuntimeError: CUDA Runtime API error: <cudaError_t.cudaErrorInvalidDevice: 101>\n"
)

# https://github.com/NVIDIA/enroot/issues/205
ENROOT_205_ERROR = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"

# https://github.com/NVIDIA/nccl/issues/1515
NCCL_1515_NCCL_ERROR = (
    "socketStartConnect: Connect to 10.45.234.83<47527> failed : Software caused connection abort\n"
)

# https://github.com/NVIDIA/nccl/issues/1637
NCCL_1637_NCCL_INFO = "localhost:11326:11326 [0] NCCL INFO Bootstrap: Using eno1:10.201.24.89<0>\nlocalhost:11326:11326 [0] NCCL INFO cudaDriverVersion 12080\nlocalhost:11326:11326 [0] NCCL INFO NCCL version 2.25.1+cuda12.2\nlocalhost:11344:11344 [1] NCCL INFO cudaDriverVersion 12080\nlocalhost:11344:11344 [1] NCCL INFO Bootstrap: Using eno1:10.201.24.89<0>\nlocalhost:11344:11344 [1] NCCL INFO NCCL version 2.25.1+cuda12.2\nlocalhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\nlocalhost:11344:11344 [1] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\nlocalhost:11344:11344 [1] NCCL INFO NET/IB : No device found.\nlocalhost:11344:11344 [1] NCCL INFO NET/IB : Using [RO]; OOB eno1:10.201.24.89<0>\nlocalhost:11344:11344 [1] NCCL INFO NET/Socket : Using [0]eno1:10.201.24.89<0> [1]CloudflareWARP:172.16.0.2<0>\nlocalhost:11344:11344 [1] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so.\nlocalhost:11344:11344 [1] NCCL INFO Using network Socket\n"

# https://github.com/NVIDIA/nccl/issues/2057
NCCL_2057_ERROR = "internal error - please report this issue to the NCCL developers\n"

# https://github.com/NVIDIA/nccl/issues/2057
NCCL_2057_NCCL_WARN = "misc/socket.cc:537 NCCL WARN ncclSocketInit: connecting to address  with family 1 is neither AF_INET(2) nor AF_INET6(10)\n"

# https://github.com/NVIDIA-NeMo/Gym/pull/2781
GYM_2781_ENROOT_HOOK = "nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig.real failed with error code: 1\n[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n"

# https://github.com/OpenRLHF/OpenRLHF/issues/957
OPENRLHF_957_ERROR = "RuntimeError: The kernel on this machine does not support the pidfd_open syscall needed to use IPC for CUDA tensors when expandable_segments:True is set. Consider using expandable_segments:False via torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation.\n"

# https://github.com/aws/aws-ofi-nccl/issues/663
AWS_OFI_NCCL_663_TORCHRUN_RANK1 = "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version 2.20.5\n[rank1]: ncclInternalError: Internal check failed.\n[rank1]: Last error:\n[rank1]: NET/OFI Unable to insert remote address into address vector for device 1. RC: 0\n"

# https://github.com/deepseek-ai/DeepEP/issues/150
DEEPEP_150_RANK_LOG = "[VM-12-3-centos:132060:0:132730] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000078)\n[VM-12-3-centos:132061:0:132732] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000078)\n[VM-12-3-centos:132062:0:132731] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000050)\n[VM-12-3-centos:132064:0:132727] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000060)\n[VM-12-3-centos:132063:0:132733] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000078)\n[VM-12-3-centos:132066:0:132729] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000070)\n[VM-12-3-centos:132067:0:132734] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000078)\n[VM-12-3-centos:132065:0:132728] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x11000068)\n==== backtrace (tid: 132732) ====\n"

# https://github.com/deepspeedai/DeepSpeed/issues/5818
DEEPSPEED_5818_LAUNCHER_ERROR = "ValueError: No slot '2' specified on host 'localhost'\n"

# https://github.com/exo-explore/exo/issues/1912
EXO_1912_RUNNER = "\nRuntimeError: [metal::Device] Unable to load kernel fence_update\nFunction fence_update is using language version 4.0 which is incompatible with this OS.\n"

# https://github.com/exo-explore/exo/issues/626
EXO_626_TINYCHAT_ERROR = "\"Failed to fetch completions: Error processing prompt (see logs with DEBUG>=2): Cannot connect to host huggingface.co:443 ssl:True [SSLCertVerificationError: (1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate (_ssl.c:1000)')]\"\n\n @http://192.168.0.131:52415/index.js:412:26\n"

# https://github.com/kvcache-ai/Mooncake/pull/113
MOONCAKE_113_TRANSFER_ENGINE = "E0219 16:52:31.208603 273373 worker_pool.cpp:281] Worker: Process failed for slice (opcode: 0, source_addr: 0x7f593802c000, length: 4096, dest_addr: 140622732378112, local_nic: mlx5_bond_0, peer_nic: x.x.x.x:12345@mlx5_bond_2, dest_rkey: 1568428, retry_cnt: 0): transport retry counter exceeded\nE0219 16:52:31.208797 273373 worker_pool.cpp:281] Worker: Process failed for slice (opcode: 0, source_addr: 0x7f593800c000, length: 4096, dest_addr: 140622732247040, local_nic: mlx5_bond_0, peer_nic: x.x.x.x:12345@mlx5_bond_3, dest_rkey: 1587190, retry_cnt: 0): transport retry counter exceeded\n"

# https://github.com/kvcache-ai/Mooncake/issues/2511
MOONCAKE_2511_PREFILL = "E0819 11:21:45.193161 147554 rdma_context.cpp:588] Failed to register memory 0x12397fd5800: Invalid argument [22]\nE0819 11:21:45.193186 147554 rdma_transport.cpp:302] Failed to register memory region with context 0\nW0819 11:21:45.193463 147554 rdma_transport.cpp:481] RdmaTransport: Failed to register memory: addr 0x12397fd5800 length 1916853120\n"

# https://github.com/linux-rdma/perftest/issues/393
PERFTEST_393_IB_WRITE_BW_OUTPUT = "Failed to modify QP 122273 to RTR\n Unable to Connect the HCA's through the link\nFailed to modify QP 122272 to RTR\n Unable to Connect the HCA's through the link\n"

# https://github.com/pytorch/pytorch/issues/135355
PYTORCH_135355_RANK0 = "[rank0]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] ss1.ss_family == ss2.ss_family. 2 vs 10\n"

# https://github.com/pytorch/pytorch/issues/135355
PYTORCH_135355_RANK1 = "[rank1]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] ss1.ss_family == ss2.ss_family. 10 vs 2\n"

# https://github.com/vllm-project/vllm-metal/pull/417
VLLM_METAL_417_CONSOLE = "$ vllm serve Qwen/Qwen3-0.6B --distributed-executor-backend ray --tensor-parallel-size 1\n...\nValueError: current platform cpu does not support ray.\nRuntimeError: Engine core initialization failed. ... Failed core proc(s): {'EngineCore': 1}\n"


def test_a_message_that_states_its_own_cause_and_remedy_is_read_as_such(tmp_path):
    # GradientHQ/parallax #439, OpenRLHF #957: the raising code says what failed and what to do
    f = first(triage_files(tmp_path, {"join.log": PARALLAX_439_PARALLAX_JOIN}))
    assert f["code"] == "MD663"
    assert "own diagnosis" in f["meaning"] and "_APPLE_PEAK_FP16 dictionary'" in f["meaning"]
    f = first(triage_files(tmp_path, {"error.log": OPENRLHF_957_ERROR}))
    assert "what to do, in its words: 'Consider using expandable_segments:False" in f["meaning"]


def test_an_invalid_device_at_an_engines_start_names_the_custom_all_reduces_ipc(tmp_path):
    # NVIDIA/TensorRT-LLM #16899: CUDA IPC between PCIe-only GPUs
    f = first(triage_files(tmp_path, {"error.txt": TENSORRT_LLM_16899_ERROR}))
    assert f["code"] == "MD830" and "cudaIpcOpenMemHandle on PCIe-only GPUs" in f["meaning"]
    assert "allreduce_strategy NCCL" in f["remedy"]


def test_no_driver_in_a_container_names_nvidia_visible_devices(tmp_path):
    # NVIDIA/enroot #205
    f = first(triage_files(tmp_path, {"error.log": ENROOT_205_ERROR}))
    assert f["code"] == "MD863" and "NVIDIA_VISIBLE_DEVICES=all" in f["remedy"]


def test_a_failed_ldcache_stage_of_the_container_hook_is_the_cause_not_the_launcher(tmp_path):
    # NVIDIA-NeMo/Gym #2781: the enroot hook's line is its consequence, not mlx.launch's
    doc = triage_files(tmp_path, {"enroot-hook.log": GYM_2781_ENROOT_HOOK})
    f = first(doc)
    assert f["code"] == "MD864" and "--ldconfig" in f["meaning"]
    codes = [g["code"] for g in doc["triage"]["findings"]]
    assert "MD865" in codes and "MD600" not in codes


def test_an_aborted_connect_names_nccl_before_2_24(tmp_path):
    # NVIDIA/nccl #1515
    f = first(triage_files(tmp_path, {"nccl.log": NCCL_1515_NCCL_ERROR}))
    assert f["code"] == "MD653" and "before 2.24" in f["meaning"]
    assert f["remedy"].startswith("Upgrade NCCL to 2.24")


def test_the_shared_memory_of_nccl_2_25_on_rtx_50_names_2_26_2(tmp_path):
    # NVIDIA/nccl #1637
    f = first(triage_files(tmp_path, {"nccl-info.log": NCCL_1637_NCCL_INFO}))
    assert f["code"] == "MD835" and "2.26.2" in f["remedy"]


def test_address_family_1_names_ungrouped_send_and_recv(tmp_path):
    # NVIDIA/nccl #2057
    f = first(
        triage_files(tmp_path, {"error.txt": NCCL_2057_ERROR, "warn.log": NCCL_2057_NCCL_WARN})
    )
    assert f["code"] == "MD803" and "AF_UNIX" in f["meaning"]
    assert "outside ncclGroupStart/ncclGroupEnd" in f["meaning"]


def test_an_efa_address_vector_insert_names_the_security_group(tmp_path):
    # aws/aws-ofi-nccl #663
    f = first(triage_files(tmp_path, {"rank1.log": AWS_OFI_NCCL_663_TORCHRUN_RANK1}))
    assert f["code"] == "MD653" and f["rank"] == 1
    assert "security group" in f["meaning"] and "outbound" in f["remedy"]


def test_ucx_crash_lines_on_every_rank_name_the_hosts_nvshmem(tmp_path):
    # deepseek-ai/DeepEP #150
    f = first(triage_files(tmp_path, {"rank-log.txt": DEEPEP_150_RANK_LOG}))
    assert f["code"] == "MD662" and "nvshmem-info -a" in f["meaning"]


def test_deepspeeds_missing_slot_names_cuda_visible_devices(tmp_path):
    # deepspeedai/DeepSpeed #5818
    f = first(triage_files(tmp_path, {"launcher.log": DEEPSPEED_5818_LAUNCHER_ERROR}))
    assert f["code"] == "MD881" and "0.15.2" in f["remedy"]


def test_a_metal_language_too_new_for_the_os_is_the_cause_of_the_missing_kernel(tmp_path):
    # exo-explore/exo #1912
    doc = triage_files(tmp_path, {"runner.log": EXO_1912_RUNNER})
    f = first(doc)
    assert f["code"] == "MD868" and "macOS 26" in f["meaning"]
    (k,) = [g for g in doc["triage"]["findings"] if g["code"] == "MD698"]
    assert k["consequence_of"] == f["id"]


def test_a_tls_verify_failure_names_the_missing_ca_bundle(tmp_path):
    # exo-explore/exo #626
    f = first(triage_files(tmp_path, {"tinychat.txt": EXO_626_TINYCHAT_ERROR}))
    assert f["code"] == "MD867" and "Install Certificates.command" in f["remedy"]


def test_a_retry_counter_exceeded_names_a_roce_v1_gid(tmp_path):
    # kvcache-ai/Mooncake #113
    f = first(triage_files(tmp_path, {"engine.log": MOONCAKE_113_TRANSFER_ENGINE}))
    assert f["code"] == "MD869" and "RoCE v1 GID" in f["meaning"]
    assert "MC_GID_INDEX" in f["remedy"]


def test_an_invalid_argument_registering_names_expandable_segments(tmp_path):
    # kvcache-ai/Mooncake #2511
    f = first(triage_files(tmp_path, {"prefill.log": MOONCAKE_2511_PREFILL}))
    assert f["code"] == "MD861" and "expandable_segments" in f["meaning"]


def test_perftests_rtr_refusal_names_the_grh_and_the_gid_index(tmp_path):
    # linux-rdma/perftest #393
    f = first(triage_files(tmp_path, {"ib_write_bw.txt": PERFTEST_393_IB_WRITE_BW_OUTPUT}))
    assert f["code"] == "MD880" and "IBV_QPF_GRH_REQUIRED" in f["meaning"]
    assert f["remedy"].startswith("Pass a GID index")


def test_glooss_family_mismatch_names_both_families_on_each_rank(tmp_path):
    # pytorch/pytorch #135355
    doc = triage_files(
        tmp_path, {"rank0.log": PYTORCH_135355_RANK0, "rank1.log": PYTORCH_135355_RANK1}
    )
    firsts = [f for f in doc["triage"]["findings"] if f["first_cause"]]
    assert sorted(f["rank"] for f in firsts) == [0, 1]
    assert all(f["code"] == "MD866" and "MASTER_ADDR" in f["remedy"] for f in firsts)
    (r0,) = [f for f in firsts if f["rank"] == 0]
    assert "this rank's socket is IPv4 (AF_INET), its peer's IPv6 (AF_INET6)" in r0["meaning"]


def test_a_platform_without_ray_is_the_cause_of_the_engine_core_failing(tmp_path):
    # vllm-project/vllm-metal #417
    doc = triage_files(tmp_path, {"console.log": VLLM_METAL_417_CONSOLE})
    f = first(doc)
    assert f["code"] == "MD882" and "--distributed-executor-backend mp" in f["remedy"]
