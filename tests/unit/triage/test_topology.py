"""MD897: a GPU topology matrix (``nvidia-smi topo -m``, the layout nvidia-smi prints with its
own legend) read for the paths NCCL's traffic takes. Through the CLI, as a user pastes it."""

from __future__ import annotations

from tests.helpers import triage_files

LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""

PCIE_ONLY = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tPIX\tSYS\tSYS\tPIX\t0-23\t0\t\tN/A\n"
    "GPU1\tPIX\t X \tSYS\tSYS\tPIX\t0-23\t0\t\tN/A\n"
    "GPU2\tSYS\tSYS\t X \tNODE\tSYS\t24-47\t1\t\tN/A\n"
    "GPU3\tSYS\tSYS\tNODE\t X \tSYS\t24-47\t1\t\tN/A\n"
    "NIC0\tPIX\tPIX\tSYS\tSYS\t X \t\t\t\t\n" + LEGEND + "\nNIC Legend:\n\n  NIC0: mlx5_0\n"
)

NVLINK = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\t56-111\t1\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\tPIX\t56-111\t1\t\tN/A\n"
    "NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\t\t\t\t\n"
    "NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \t\t\t\t\n" + LEGEND
)

FAR_NIC = (
    "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\n"
    "GPU0\t X \tNV4\tSYS\t0-15\n"
    "GPU1\tNV4\t X \tSYS\t0-15\n"
    "mlx5_0\tSYS\tSYS\t X \t\n" + LEGEND
)


def _md897(doc):
    return [f for f in doc["triage"]["findings"] if f["code"] == "MD897"]


def test_gpu_pairs_across_the_cpu_are_named_with_their_path(tmp_path):
    doc = triage_files(tmp_path, {"topo.txt": PCIE_ONLY})
    (f,) = _md897(doc)
    assert f["first_cause"]
    assert "SYS: GPU0-GPU2, GPU0-GPU3, GPU1-GPU2, GPU1-GPU3" in f["meaning"]
    assert "NODE: GPU2-GPU3" in f["meaning"] and "no NVLink in the matrix" in f["meaning"]
    # NIC0 sits on GPU0's and GPU1's switch
    assert "NICs with no GPU" not in f["meaning"].split("Here:")[1]
    assert "nvidia-smi topo -p2p r" in f["remedy"] and "ACS" in f["remedy"]


def test_an_nvlink_matrix_with_a_nic_beside_each_gpu_needs_nothing(tmp_path):
    doc = triage_files(tmp_path, {"topo.txt": NVLINK}, rc=0)
    assert not _md897(doc)


def test_an_older_matrix_names_a_nic_far_from_every_gpu(tmp_path):
    """Older nvidia-smi rows name the NIC by its device (``mlx5_0``), with no NIC legend."""
    doc = triage_files(tmp_path, {"topo.txt": FAR_NIC})
    (f,) = _md897(doc)
    assert "NICs with no GPU on their PCIe switch: mlx5_0" in f["meaning"]
    assert "GPU pairs through the CPU" not in f["meaning"].split("Here:")[1]
