"""Triage's readings of settings and addresses beside a failure: an NCCL setting NCCL does not
read (MD877), an engine's custom all-reduce in play (MD878), an address other hosts cannot
reach (MD879). Inputs in the formats NCCL, vLLM and PyTorch print (NCCL_DEBUG=INFO lines,
vLLM's engine configuration line, shell launch lines)."""

from __future__ import annotations

import pytest

from meshdoctor.triage import misspelt
from tests.helpers import first_cause as first, triage_files

WARN = (
    "node1:123:456 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.2<40123> failed : Connection refused\n"
)
CONFIG = (
    "INFO 06-12 10:00:01 llm_engine.py:100] Initializing an LLM engine (v0.5.0) with config: "
    "model='m', tensor_parallel_size={tp}, disable_custom_all_reduce={off}, enforce_eager=False\n"
)
IMA = "ERROR 06-12 10:05:01 worker.py:10] CUDA error: an illegal memory access was encountered\n"


@pytest.mark.parametrize(
    "name,meant",
    [
        ("NCCL_SOCKET_IFNAMES", "NCCL_SOCKET_IFNAME"),
        ("NCCL_IB_HCAS", "NCCL_IB_HCA"),
        ("NCCL_P2P_DISABLED", "NCCL_P2P_DISABLE"),
        ("NCCL_NVLS_DISABLE", "NCCL_NVLS_ENABLE"),  # the switch named the other way round
        ("NCCL_SOCKET_IFNAME", None),  # one NCCL reads
        ("NCCL_BLOCKING_WAIT", None),  # PyTorch's legacy name, not NCCL's
        ("NCCL_IBEXT_DISABLE", None),  # the SHARP plugin's
        ("NCCL_HOME", None),  # close to nothing NCCL reads
    ],
)
def test_a_misspelt_name_is_read_as_the_setting_it_misspells(name, meant):
    assert misspelt.meant(name) == meant


def test_a_misspelt_setting_on_the_launch_line_is_the_cause_of_the_nccl_failure(tmp_path):
    launch = "$ NCCL_SOCKET_IFNAMES=eth1 NCCL_DEBUG=WARN torchrun --nproc_per_node 8 train.py\n"
    doc = triage_files(tmp_path, {"launch.txt": launch, "rank0.log": WARN})
    f = first(doc)
    assert f["code"] == "MD877" and "NCCL reads NCCL_SOCKET_IFNAME" in f["meaning"]
    (warn,) = [x for x in doc["triage"]["findings"] if x["code"] == "MD653"]
    assert warn["consequence_of"] == f["id"]


def test_a_misspelt_setting_without_an_nccl_failure_is_no_finding(tmp_path):
    doc = triage_files(tmp_path, {"launch.txt": "export NCCL_IB_HCAS=mlx5_0\n"}, rc=0)
    assert doc["triage"]["findings"] == []


def test_a_correct_setting_is_no_finding(tmp_path):
    doc = triage_files(tmp_path, {"a.log": "export NCCL_SOCKET_IFNAME=eth1\n" + WARN})
    assert "MD877" not in {x["code"] for x in doc["triage"]["findings"]}


def test_custom_all_reduce_on_before_an_illegal_address_is_the_lead(tmp_path):
    doc = triage_files(tmp_path, {"engine.log": CONFIG.format(tp=2, off=False) + IMA})
    f = first(doc)
    assert f["code"] == "MD878" and "rule out first" in f["meaning"]
    assert "--disable-custom-all-reduce" in f["remedy"]


@pytest.mark.parametrize(
    "config",
    [
        CONFIG.format(tp=2, off=True),  # turned off
        CONFIG.format(tp=1, off=False),  # no tensor parallel group
    ],
)
def test_custom_all_reduce_off_or_without_a_group_is_no_finding(tmp_path, config):
    doc = triage_files(tmp_path, {"engine.log": config + IMA})
    assert first(doc)["code"] == "MD830"


def test_custom_all_reduce_is_not_blamed_for_out_of_memory(tmp_path):
    oom = "torch.OutOfMemoryError: CUDA error: out of memory\n"
    doc = triage_files(tmp_path, {"engine.log": CONFIG.format(tp=2, off=False) + oom})
    assert "MD878" not in {x["code"] for x in doc["triage"]["findings"]}


def test_its_code_in_the_failing_line_is_the_cause_and_expandable_segments_is_named(tmp_path):
    log = (
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve m -tp 2\n"
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'\n"
    )
    f = first(triage_files(tmp_path, {"engine.log": log}))
    assert f["code"] == "MD878" and "its code is in the failing output" in f["meaning"]
    assert "expandable_segments" in f["meaning"]


@pytest.mark.parametrize(
    "line,addr",
    [
        ("node1:123:123 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>", "docker0"),
        ("node1:123:123 [0] NCCL INFO Bootstrap : Using eth0:169.254.3.1<0>", "169.254.3.1"),
        (
            "node1:123:123 [0] NCCL INFO Bootstrap : Using eth0:fe80::a00:27ff:fe4e:66a1%eth0<0>",
            "fe80::",
        ),
    ],
)
def test_bootstrap_on_an_address_other_hosts_cannot_reach_is_the_cause(tmp_path, line, addr):
    doc = triage_files(tmp_path, {"rank0.log": line + "\n" + WARN})
    f = first(doc)
    assert f["code"] == "MD879" and addr in f["meaning"]
    assert "NCCL_SOCKET_IFNAME" in f["remedy"]


def test_a_routable_bootstrap_address_is_no_finding(tmp_path):
    line = "node1:123:123 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    doc = triage_files(tmp_path, {"rank0.log": line + WARN})
    assert "MD879" not in {x["code"] for x in doc["triage"]["findings"]}


def test_a_thunderbolt_link_local_address_of_mlx_is_not_read_here(tmp_path):
    # a Mac's Thunderbolt link is 169.254.x by design: MLX's ring connects there
    log = (
        "[ring] Couldn't connect (error: 61). Retrying in 1000 ms (attempt 1 of 10). "
        "connect to 169.254.10.2:5000\n"
    )
    doc = triage_files(tmp_path, {"rank0.log": log + WARN})
    assert "MD879" not in {x["code"] for x in doc["triage"]["findings"]}


WATCHDOG = (
    "[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600055 "
    "milliseconds before timing out.\n"
)


def test_every_rank_timing_out_names_no_missing_rank(tmp_path):
    log = "".join(WATCHDOG.format(r=r) for r in range(4))
    doc = triage_files(tmp_path, {"train.log": log})
    assert "MD857" not in {x["code"] for x in doc["triage"]["findings"]}


def test_the_ranks_without_a_timeout_are_named(tmp_path):
    log = "".join(WATCHDOG.format(r=r) for r in (1, 3))
    f = first(triage_files(tmp_path, {"train.log": log}))
    assert f["code"] == "MD857" and "ranks 0, 2 printed no timeout" in f["meaning"]
    assert f["rank"] is None  # two ranks: the finding is no one rank's


STORE = (
    "torch.distributed.DistNetworkError: The client socket has failed to connect to any "
    "network address of (10.0.0.9, 29500). The client socket has failed to connect to "
    "10.0.0.9:29500 (errno: 113 - No route to host).\n"
)


def test_a_store_dialled_at_the_configured_address_is_no_mismatch(tmp_path):
    doc = triage_files(tmp_path, {"env.txt": "MASTER_ADDR=10.0.0.9\n", "rank1.log": STORE})
    f = first(doc)
    assert f["code"] == "MD838" and "no route to host" in f["meaning"]


def test_a_store_dialled_elsewhere_than_master_addr_is_named(tmp_path):
    doc = triage_files(tmp_path, {"env.txt": "export MASTER_ADDR=10.0.0.1\n", "rank1.log": STORE})
    f = first(doc)
    assert f["code"] == "MD855" and "configured 10.0.0.1" in f["meaning"]
