"""MD813: NCCL between hosts over TCP sockets on hosts that have an RDMA network."""

from __future__ import annotations

from tests.helpers import triage_files

INIT = (
    "gpu1:2001:2001 [0] NCCL INFO Bootstrap : Using {ifc}:10.0.0.1<0>\n"
    "gpu1:2001:2001 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
    "gpu1:2001:2001 [0] NCCL INFO NET/Socket : Using [0]{ifc}:10.0.0.1<0>\n"
    "gpu1:2001:2040 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n"
    "# Avg bus bandwidth    : 1.05\n"
)


def codes(doc):
    return [f["code"] for f in doc["triage"]["findings"]]


def test_sockets_over_an_ipoib_interface_name_the_missing_verbs_library(tmp_path):
    doc = triage_files(tmp_path, {"rank0.log": INIT.format(ifc="ib0")})
    (f,) = doc["triage"]["findings"]
    assert f["code"] == "MD813" and f["line_number"] == 2
    assert "libibverbs" in f["meaning"] and "bandwidth table" in f["meaning"]
    assert "rdma-core" in f["remedy"]


def test_an_ethernet_only_cluster_on_sockets_is_not_a_finding(tmp_path):
    """Sockets are NCCL's transport by design where the hosts have no RDMA network."""
    doc = triage_files(tmp_path, {"rank0.log": INIT.format(ifc="eth0")}, rc=0)
    assert "MD813" not in codes(doc) and doc["verdict"] == "go"


def test_infiniband_turned_off_by_a_setting_is_the_reason_named(tmp_path):
    log = (
        "h1:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
        "h1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n"
        "h1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    )
    (f,) = triage_files(tmp_path, {"rank0.log": log})["triage"]["findings"]
    assert f["code"] == "MD813" and "remove it" in f["meaning"] and f["line_number"] == 1


def test_a_job_that_failed_keeps_its_own_cause(tmp_path):
    log = INIT.format(ifc="ib0") + (
        "h1:1:1 [0] init.cc:1 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on "
        "CUDA device 1000\n"
    )
    assert "MD813" not in codes(triage_files(tmp_path, {"rank0.log": log}))


# https://github.com/NVIDIA/nccl/issues/1676: GPUDirect RDMA off after nvidia-peermem replaced
# nv_peer_mem, under an NCCL (2.22.3 and older) that looked only for the legacy module
GDR_OFF = (
    "NCCL version 2.21.5+cuda12.4\n"
    "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n"
    "learn01:2228637:2230195 [3] NCCL INFO comm 0x1 rank 3 nranks 16 cudaDev 3 busId 1000 - "
    "Init COMPLETE\n"
)


def test_gpudirect_rdma_disabled_names_the_peer_memory_module_and_the_old_nccl(tmp_path):
    (f,) = triage_files(tmp_path, {"rank3.log": GDR_OFF})["triage"]["findings"]
    assert f["code"] == "MD814" and f["line_number"] == 2
    assert "mlx5_0, mlx5_1" in f["meaning"] and "2.21.5" in f["meaning"]
    assert "2.23.4" in f["meaning"] and "nvidia-peermem" in f["remedy"]


def test_gpudirect_rdma_disabled_under_a_newer_nccl_names_the_module_only(tmp_path):
    log = GDR_OFF.replace("2.21.5", "2.27.3")
    (f,) = triage_files(tmp_path, {"rank3.log": log})["triage"]["findings"]
    assert f["code"] == "MD814" and "2.27.3" not in f["meaning"]
