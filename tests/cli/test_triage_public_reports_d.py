"""``meshdoctor triage`` on public failure reports of CUDA and NCCL on GPU hosts (each input
cites its thread): a CUDA error text is read through the CUDA runtime's own table whichever
wrapper prints it (nccl-tests, NCCL, PyTorch, MLX), NCCL's NVLS and SHM (cuMem host) sites
name their own cause, mpirun's banners are consequences, a collective mismatch is the
program's, and an injected NCCL topology or graph file is read across the lines of a log."""

from __future__ import annotations

from typing import List

from tests.helpers import first_cause as first, triage_files as triage


def findings(doc: dict) -> List[dict]:
    return doc["triage"]["findings"]


# -- CUDA error 217 in NCCL's SHM transport (cuMem host memory) on GPUs without P2P ------------

# https://github.com/NVIDIA/nccl/issues/1838 (4x L4, NCCL 2.27: NCCL_CUMEM_HOST_ENABLE=0 fixed it)
CUMEM_HOST = (
    "[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda "
    "failure 217 'peer access is not supported between these two devices'\n"
)


def test_error_217_in_the_shm_transport_names_cumem_host_memory(tmp_path):
    f = first(triage(tmp_path, {"nccl.log": CUMEM_HOST}))
    assert f["code"] == "MD830" and f["name"] == "cuda.failure"
    assert "cudaErrorPeerAccessUnsupported = 217" in f["meaning"]
    assert "shm.cc" in f["meaning"] and "cuMem" in f["meaning"]
    assert "NCCL_CUMEM_HOST_ENABLE=0" in f["meaning"]
    assert "NCCL_P2P_DISABLE does not turn this path off" in f["meaning"]
    assert f["remedy"].startswith("NCCL_CUMEM_HOST_ENABLE=0")  # what helps comes first


def test_error_217_elsewhere_is_p2p_between_the_gpus(tmp_path):
    """The same CUDA error from NCCL's P2P transport (a variant site): no P2P between the
    GPUs, `nvidia-smi topo -p2p r`, NCCL_P2P_DISABLE=1."""
    log = CUMEM_HOST.replace("transport/shm.cc:590", "transport/p2p.cc:275")
    f = first(triage(tmp_path, {"nccl.log": log}))
    assert f["code"] == "MD830" and "NCCL_P2P_DISABLE=1" in f["meaning"]
    assert "nvidia-smi topo -p2p r" in f["meaning"]


# -- CUDA "system not yet initialized": the fabric manager is not running ------------------------

# https://github.com/NVIDIA/nccl-tests/issues/338 (the log); the cause as in
# https://github.com/NVIDIA/nccl-tests/issues/264 ("resolved post enabling fabric manager service")
FABRIC = """\
# Using devices
gpu: Test CUDA failure common.cu:1030 'system not yet initialized'
 .. gpu pid 3018: Test failure common.cu:937
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
An MPI communication peer process has unexpectedly disconnected.  This
usually indicates a failure in the peer process (e.g., a crash or
otherwise exiting without calling MPI_FINALIZE first).

Although this local MPI process will likely now behave unpredictably
(it may even hang or crash), the root cause of this problem is the
failure of the peer -- that is what you need to investigate.  For
example, there may be a core file that you can examine.  More
generally: such peer hangups are frequently caused by application bugs
or other external events.

  Local host: gpu
  Local PID:  4870
  Peer host:  gpu
--------------------------------------------------------------------------
"""


def _says_fabric_manager(f: dict) -> None:
    assert f["code"] == "MD830" and "cudaErrorSystemNotReady = 802" in f["meaning"]
    assert "fabric manager" in f["meaning"]
    assert "systemctl enable --now nvidia-fabricmanager" in f["meaning"]
    assert "Fabric" in f["meaning"] and "Completed" in f["meaning"]
    assert f["remedy"].startswith("`systemctl enable --now nvidia-fabricmanager`")


def test_system_not_yet_initialized_is_the_fabric_manager_and_mpirun_its_echo(tmp_path):
    doc = triage(tmp_path, {"output.txt": FABRIC})
    assert doc["verdict"] == "no-go"  # a failed job is never a go
    f = first(doc)
    _says_fabric_manager(f)
    assert "common.cu:1030" in f["meaning"]
    rest = [g for g in findings(doc) if not g["first_cause"]]
    assert {g["code"] for g in rest} == {"MD831"}
    assert all(g["role"] == "consequence" and g["consequence_of"] == f["id"] for g in rest)


def test_system_not_yet_initialized_in_pytorch_and_nccl_wrappers(tmp_path):
    """The same CUDA error as PyTorch prints it at CUDA init and as NCCL's WARN prints it:
    the same class."""
    torch_line = (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? "
        "Error 802: system not yet initialized\n"
    )
    _says_fabric_manager(first(triage(tmp_path, {"rank0.log": torch_line})))
    nccl_line = "node1:1:2 [0] misc/cudawrap.cc:200 NCCL WARN Cuda failure 802 'system not yet initialized'\n"
    _says_fabric_manager(first(triage(tmp_path, {"rank1.log": nccl_line})))


def test_a_gpu_fault_in_mlx_and_pytorch_wrappers_names_ecc_and_xid(tmp_path):
    """The table's other classes, in MLX's and PyTorch's wrappers: a GPU fault names
    `nvidia-smi -q -d ECC` and the Xid in dmesg; a driver older than the runtime says so."""
    mlx = (
        "RuntimeError: cudaStreamSynchronize(stream) failed: uncorrectable ECC error encountered\n"
    )
    f = first(triage(tmp_path, {"mlx.log": mlx}))
    assert f["code"] == "MD830" and "nvidia-smi -q -d ECC" in f["meaning"]
    assert "xid" in f["meaning"].lower()
    torch = (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
    )
    f = first(triage(tmp_path, {"torch.log": torch}))
    assert f["code"] == "MD830" and "cudaErrorInsufficientDriver = 35" in f["meaning"]
    assert "driver" in f["meaning"] and "nvidia-smi" in f["meaning"]


# -- NVLS init failure (NVLink SHARP): the fabric manager restarted while GPUs were held --------

# https://github.com/NVIDIA/nccl/issues/976 (maintainer: the fabric manager restarted while
# processes held GPU resources; reboot)
NVLS = """\
NCCL version 2.18.5+cuda12.2
...
transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'
NCCL INFO transport/nvls.cc:324 -> 1
NCCL INFO init.cc:1093 -> 1
NCCL INFO init.cc:1358 -> 1
NCCL INFO init.cc:1598 -> 1
"""


def test_a_cuda_failure_in_nvls_names_nvlink_multicast_and_the_fabric_manager(tmp_path):
    doc = triage(tmp_path, {"nccl.log": NVLS})
    f = first(doc)
    assert f["code"] == "MD830" and "nvls.cc:165" in f["meaning"]
    assert "NVLS" in f["meaning"] and "multicast" in f["meaning"]
    assert "fabric manager" in f["meaning"] and "reboot" in f["meaning"]
    assert "NCCL_NVLS_ENABLE=0" in f["meaning"]
    assert "reboot the node" in f["remedy"] and f["remedy"].startswith("Set NCCL_NVLS_ENABLE=0")
    traces = [g for g in findings(doc) if g["code"] == "MD653"]
    assert traces and all(g["consequence_of"] == f["id"] for g in traces)


def test_nvls_failure_with_nccl_2_19_numbered_wording(tmp_path):
    """NCCL 2.19+ prints the CUDA error number (cudawrap.h's CUCHECK) and its host prefix."""
    log = (
        "node7:2211:2290 [3] transport/nvls.cc:191 NCCL WARN Cuda failure 1 'invalid argument'\n"
        "node7:2211:2290 [3] NCCL INFO transport/nvls.cc:330 -> 1\n"
    )
    f = first(triage(tmp_path, {"node7.log": log}))
    assert f["code"] == "MD830" and "NVLS" in f["meaning"] and "NCCL_NVLS_ENABLE=0" in f["meaning"]


# -- NCCL "Mismatched collective detected": the program's collectives differ --------------------

# https://github.com/NVIDIA/nccl/issues/296 (maintainer: tensors of different sizes, or
# collectives enqueued in different orders, at different ranks)
MISMATCH = (
    "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective "
    "calls at and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to "
    "see the collective logs\n"
)


def test_a_mismatched_collective_is_the_programs_and_names_the_rank(tmp_path):
    f = first(triage(tmp_path, {"nccl.log": MISMATCH}))
    assert f["code"] == "MD832" and f["rank"] == 39
    assert "rank 39" in f["meaning"] and "not of the network" in f["meaning"]
    assert "same order" in f["remedy"] and "NCCL_DEBUG_SUBSYS=COLL" in f["remedy"]
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in f["remedy"]


def test_pytorchs_collective_fingerprint_mismatch_is_the_same_kind(tmp_path):
    """PyTorch's own check (TORCH_DISTRIBUTED_DEBUG=DETAIL, ProcessGroupWrapper) of the same
    kind of failure."""
    log = (
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is "
        "running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE, "
        "TensorShape=[4096], TensorDtypes=Float), but Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=7, OpType=BROADCAST, TensorShape=[4096], "
        "TensorDtypes=Float).\n"
    )
    f = first(triage(tmp_path, {"rank1.log": log}))
    assert f["code"] == "MD832" and "rank 1 runs" in f["meaning"]
    assert "same order" in f["remedy"]


# -- an injected NCCL graph/topology file that does not match the GPUs in use -------------------

# https://github.com/NVIDIA/nccl/issues/1008 (maintainer: a graph XML injected for 4 GPUs;
# reporter: NCCL_TOPO_FILE and NCCL_GRAPH_FILE set in /etc/nccl.conf)
GRAPH_DESCRIPTION = (
    "Hi, I have 4 GPUs and when I run NCCL test with all 4 GPUs (-g 4), it works fine. However "
    "when I set -g2 or -g3 it fails with an error:  Test NCCL failure common.cu:953 'unhandled "
    "system error.\n"
)
GRAPH_OUTPUT = """\
$ NCCL_TOPOLOGY=IGNORE NCCL_DEBUG_SUBSYS=GRAPH NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 256M -f 2 -g 2

# nThread 1 nGpus 2 minBytes 8 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 648288 on a100-4x-machines-23fsd-2-dev device  0 [0x00] NVIDIA A100 80GB PCIe
#  Rank  1 Group  0 Pid 648288 on a100-4x-machines-23fsd-2-dev device  1 [0x00] NVIDIA A100 80GB PCIe
NCCL version 2.18.5+cuda12.2
a100-4x-machines-23fsd-2-dev:648288:648307 [1] NCCL INFO Loading topology file /opt/microsoft/ncv4/topo.xml
a100-4x-machines-23fsd-2-dev:648288:648306 [0] NCCL INFO Loading topology file /opt/microsoft/ncv4/topo.xml
a100-4x-machines-23fsd-2-dev:648288:648307 [1] NCCL INFO Loading unnamed topology
a100-4x-machines-23fsd-2-dev:648288:648306 [0] NCCL INFO Loading unnamed topology
"""


def test_an_injected_topology_file_before_a_system_error_is_the_cause(tmp_path):
    doc = triage(tmp_path, {"description.txt": GRAPH_DESCRIPTION, "output.txt": GRAPH_OUTPUT})
    f = first(doc)
    assert f["code"] == "MD834" and "/opt/microsoft/ncv4/topo.xml" in f["meaning"]
    assert "NCCL_GRAPH_FILE" in f["meaning"] and "/etc/nccl.conf" in f["meaning"]
    assert "2 GPU(s) per process" in f["meaning"]
    assert "remove NCCL_GRAPH_FILE" in f["remedy"] and "~/.nccl.conf" in f["remedy"]
    rest = [g for g in findings(doc) if not g["first_cause"]]
    assert {g["code"] for g in rest} == {"MD650", "MD681"}
    assert all(g["consequence_of"] == f["id"] for g in rest)


def test_the_graph_files_own_warning_names_the_device(tmp_path):
    """With NCCL_DEBUG=WARN the graph import says which device it missed (the issue's title,
    'Dev not found'), and NCCL_DEBUG_SUBSYS=ENV prints where the graph came from."""
    log = (
        "node1:648288:648306 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /etc/nccl/graph4.xml\n"
        "node1:648288:648306 [0] graph/xml.cc:740 NCCL WARN XML Import Channel : dev 3 not found.\n"
        "node1:648288:648306 [0] NCCL INFO graph/search.cc:1006 -> 2\n"
        "node1: Test NCCL failure common.cu:953 'unhandled system error (run with NCCL_DEBUG=INFO for details)'\n"
    )
    doc = triage(tmp_path, {"node1.log": log})
    f = first(doc)
    assert f["code"] == "MD833" and "device 3" in f["meaning"]
    assert "NCCL_GRAPH_FILE" in f["meaning"] and "/etc/nccl.conf" in f["meaning"]
    assert "remove NCCL_GRAPH_FILE" in f["remedy"]
    assert all(g["consequence_of"] == f["id"] for g in findings(doc) if not g["first_cause"])


def test_a_topology_file_in_a_job_with_a_specific_cause_is_not_blamed(tmp_path):
    """A VM image's own topology file (NCCL_TOPO_FILE) beside a failure that names its own
    cause (here a CUDA out-of-memory at NCCL's allocation) is not the cause."""
    log = GRAPH_OUTPUT + (
        "a100:648288:648306 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
        "a100: Test NCCL failure common.cu:953 'unhandled cuda error'\n"
    )
    doc = triage(tmp_path, {"node.log": log})
    assert first(doc)["code"] == "MD800"
    assert "MD834" not in {g["code"] for g in findings(doc)}


def test_a_graph_file_from_nccl_conf_before_a_bare_system_error_is_named(tmp_path):
    """NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=ENV prints the graph file NCCL took (here from
    /etc/nccl.conf, which NCCL reads as environment) and the run ends with nccl-tests' bare
    system error, no WARN: the graph file is named as the cause."""
    log = (
        "node1:1:1 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/graphs/ring4.xml\n"
        "node1: Test NCCL failure common.cu:953 'unhandled system error (run with "
        "NCCL_DEBUG=INFO for details)'\n"
    )
    f = first(triage(tmp_path, {"node1.log": log}))
    assert f["code"] == "MD834" and "graph file /opt/graphs/ring4.xml" in f["meaning"]
    assert "remove NCCL_GRAPH_FILE" in f["remedy"]
