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
