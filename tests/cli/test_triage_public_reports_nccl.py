"""``meshdoctor triage`` on public NCCL failure reports (each input cites its thread): the
NCCL WARN that explains a failure is its first cause, named with its own remedy; NCCL's and
PyTorch's summary lines (``unhandled system error``, ``internal error``), the proxy's failed
operation and the peers' closed sockets are its consequences. The inputs are the reports' lines
(NCCL 2.19-2.27, as NCCL_DEBUG=INFO prints them, with the PyTorch error lines that follow)."""

from __future__ import annotations

import re
from typing import List

from tests.helpers import run_cli
from tests.helpers import triage_files as triage


def findings(doc: dict) -> List[dict]:
    return doc["triage"]["findings"]


def firsts(doc: dict) -> List[dict]:
    return [f for f in findings(doc) if f["first_cause"]]


# https://github.com/NVIDIA/nccl/issues/1235 (NCCL 2.19.3: GPU 3 out of memory in the proxy's
# Setup; rank 0 reports the closed socket first)
CUDA_OOM = """\
ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer ng30903-ib.narval.calcul.quebec<51159>
ng30903:3063025:3066048 [0] NCCL INFO misc/socket.cc:749 -> 6

ng30903:3063025:3066048 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x55a51966cc80
ng30903:3063025:3066048 [0] NCCL INFO transport/p2p.cc:438 -> 3
ng30903:3063025:3066048 [0] NCCL INFO transport.cc:33 -> 3
ng30903:3063025:3066048 [0] NCCL INFO transport.cc:97 -> 3
ng30903:3063025:3066048 [0] NCCL INFO init.cc:1079 -> 3
ng30903:3063025:3066048 [0] NCCL INFO init.cc:1358 -> 3
ng30903:3063025:3066048 [0] NCCL INFO group.cc:65 -> 3 [Async thread]
ng30903:3063025:3066031 [0] NCCL INFO group.cc:406 -> 3
ng30903:3063025:3066031 [0] NCCL INFO group.cc:96 -> 3

ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'

ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:605 -> 1
ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1303 -> 1
ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1377 -> 1

ng30903:3063028:3066152 [3] proxy.cc:1519 NCCL WARN [Proxy Service 3] Failed to execute operation Setup from rank 3, retcode 1
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3
[rank0]: ncclInternalError: Internal check failed.
[rank0]: Last error:
[rank0]: Socket recv failed while polling for opId=0x55a51966cc80
"""


def test_a_cuda_allocation_that_ran_out_of_gpu_memory_is_the_first_cause(tmp_path):
    doc = triage(tmp_path, {"node-ng30903.log": CUDA_OOM})
    (f,) = firsts(doc)
    assert f["code"] == "MD800" and "Cuda failure 'out of memory'" in f["line"]
    assert f["count"] == 2  # its "Failed to CUDA calloc 6291456 bytes" line with it
    assert "GPU memory" in f["meaning"] and "CUDA device 3" in f["meaning"]
    assert "NCCL_BUFFSIZE" in f["remedy"] and "before loading the model" in f["remedy"]
    rest = {g["code"]: g for g in findings(doc) if not g["first_cause"]}
    # the proxy's Setup, the peer's closed socket and rank 0's internal error follow from it
    assert {"MD686", "MD653", "MD650"} <= set(rest)
    assert all(g["consequence_of"] == f["id"] for g in rest.values())
    proxy = next(g for g in findings(doc) if "operation Setup" in g["line"])
    assert proxy["consequence_of"] == f["id"]
    assert "github.com/NVIDIA/nccl/issues/1235" not in f["remedy"]
    assert "NVIDIA/nccl #1235" in run_cli("explain", "MD800").out


# https://github.com/NVIDIA/nccl/issues/2013 (RoCE v2, 8 nodes: the Gather of a distributed
# checkpoint pairs NICs of different rails; the maintainer's NCCL_CROSS_NIC=0 fixed it)
RAIL = """\
[2026-03-13 22:25:58] host-01:118842:118842 [5] NCCL INFO Bootstrap: Using bond0:10.20.1.1<0>
NCCL version 2.27.3+cuda12.9
[2026-03-13 22:25:59] host-01:118842:119020 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE [4]mlx5_4:1/RoCE [5]mlx5_5:1/RoCE [6]mlx5_6:1/RoCE [7]mlx5_7:1/RoCE [RO]; OOB bond0:10.20.1.1<0>
[2026-03-13 22:26:01] host-01:118842:119020 [5] NCCL INFO ncclCommInitRank comm 0x5632b1c0 rank 5 nranks 64 cudaDev 5 nvmlDev 5 busId b8000 commId 0x91d2 - Init COMPLETE
[2026-03-13 22:26:02] host-01:118842:119061 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_5:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.20.5.1, remote GID ::ffff:10.20.2.7
[2026-03-13 22:26:02] host-01:118842:119061 [5] NCCL INFO transport/net_ib.cc:1181 -> 2
[2026-03-13 22:26:02] host-01:118842:119061 [5] NCCL INFO transport/net.cc:887 -> 2
[2026-03-13 22:26:02] host-01:118842:119061 [5] NCCL INFO proxy.cc:1557 -> 2
[2026-03-13 22:26:02] host-01:118842:119061 [5] proxy.cc:1736 NCCL WARN [Proxy Service 5] Failed to execute operation Connect from rank 5, retcode 2
[rank5]: Traceback (most recent call last):
[rank5]:   File "/workspace/train.py", line 402, in save_checkpoint
[rank5]:     dcp.save(state_dict, checkpoint_id=path)
[rank5]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)
"""


def test_a_queue_pair_timeout_between_rails_names_cross_nic_not_dev_shm(tmp_path):
    doc = triage(tmp_path, {"host-01.log": RAIL})
    (f,) = firsts(doc)
    assert f["code"] == "MD801" and f["groups"]["errno"] == "110"
    assert "10.20.5.1" in f["meaning"] and "10.20.2.7" in f["meaning"]
    assert "different subnets" in f["meaning"] and "rail" in f["meaning"]
    assert "NCCL_CROSS_NIC=0" in f["remedy"] and "/dev/shm" not in f["remedy"]
    # the summary line outranks nothing: it is the WARN's consequence
    (summary,) = [g for g in findings(doc) if g["code"] == "MD681"]
    assert summary["role"] == "either" and summary["consequence_of"] == f["id"]


def test_a_generic_summary_never_outranks_the_warn_that_explains_it(tmp_path):
    """Whatever the order of the lines: the summary first, the WARN after it."""
    lines = RAIL.splitlines()
    summary = [ln for ln in lines if "unhandled system error" in ln]
    rest = [ln for ln in lines if ln not in summary]
    doc = triage(tmp_path, {"host-01.log": "\n".join(summary + rest) + "\n"})
    assert [f["code"] for f in firsts(doc)] == ["MD801"]


# https://github.com/NVIDIA/nccl/issues/1589 (NCCL 2.23: "Error while attaching to shared memory
# segment", ENOENT; the reporter went back to 2.21.5)
SHM_ATTACH = """\
g148:14937:69361 [0] NCCL INFO Channel 00/1 : 0[0] -> 7[7] via P2P/CUMEM
g148:14937:69361 [0] NCCL INFO Channel 01/1 : 0[0] -> 8[0] [send] via NET/IB/9/GDRDMA/Shared

g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory

g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)
g148:14937:69361 [0] NCCL INFO transport/shm.cc:634 -> 2
g148:14937:69361 [0] NCCL INFO transport/shm.cc:169 -> 2
g148:14937:69361 [0] NCCL INFO transport.cc:212 -> 2
g148:14937:69361 [0] NCCL INFO group.cc:149 -> 2
g148:14937:69361 [0] NCCL INFO group.cc:76 -> 2 [Async thread]
[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.23.4
[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
[rank0]: Last error:
[rank0]: Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)
"""


def test_a_peer_segment_that_is_not_there_is_an_attach_failure_not_a_small_dev_shm(tmp_path):
    doc = triage(tmp_path, {"g148.log": SHM_ATTACH})
    (f,) = firsts(doc)
    assert f["code"] == "MD802" and "shmutils.cc:129" in f["line"]
    assert "ENOENT" in f["meaning"] and "/dev/shm/nccl-glnlGK" in f["meaning"]
    assert "--ipc=host" in f["remedy"] and "--shm-size" not in f["remedy"]
    # the failed open of the segment before it is a file's open, not a socket call
    (opened,) = [g for g in findings(doc) if "Call to open failed" in g["line"]]
    assert "socket" not in opened["meaning"].split("Here:")[1]
    assert "/dev/shm" in opened["meaning"] and opened["consequence_of"] == f["id"]
    assert all(g["consequence_of"] == f["id"] for g in findings(doc) if g is not f)


# https://github.com/NVIDIA/nccl/issues/1267 (two of four nodes: node1 loads nvidia-nccl-cu12
# 2.20.5, the others 2.19.3; the same NCCL on every machine fixed it)
NODE1 = """\
instance-8g-96c-1:2711408:2711408 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>
instance-8g-96c-1:2711408:2711408 [0] NCCL INFO cudaDriverVersion 12000
NCCL version 2.20.5+cuda12.4
instance-8g-96c-1:2711408:2711590 [0] NCCL INFO NET/Socket : Using [0]ens7:10.128.0.30<0>
instance-8g-96c-1:2711408:2711590 [0] NCCL INFO Using network Socket
instance-8g-96c-1:2711408:2711590 [0] NCCL INFO comm 0x5588f6e1c3d0 rank 0 nranks 32 cudaDev 0 nvmlDev 0 busId 30 commId 0x438c8edb9fb0064f - Init START
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version 2.20.5
[rank0]: ncclInternalError: Internal check failed.
[rank0]: Last error:
[rank0]: ncclSocketInit: connecting to address  with family 0 is neither AF_INET(2) nor AF_INET6(10)
"""
NODE3 = """\
instance-8g-96c-3:2744870:2744870 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.32<0>
instance-8g-96c-3:2744870:2744870 [0] NCCL INFO cudaDriverVersion 12000
NCCL version 2.19.3+cuda12.3
instance-8g-96c-3:2744870:2745046 [0] NCCL INFO NET/IB : No device found.
instance-8g-96c-3:2744870:2745046 [0] NCCL INFO NET/Socket : Using [0]ens7:10.128.0.32<0>
instance-8g-96c-3:2744870:2745046 [0] NCCL INFO Using network Socket
instance-8g-96c-3:2744870:2745046 [0] NCCL INFO comm 0x55f08a1c83d0 rank 16 nranks 32 cudaDev 0 nvmlDev 0 busId 30 commId 0x438c8edb9fb0064f - Init START
"""


def test_ranks_that_run_different_nccl_versions_are_the_first_cause(tmp_path):
    for files in (
        {"node1.log": NODE1, "node3.log": NODE3},
        {"node3.log": NODE3, "node1.log": NODE1},
    ):
        doc = triage(tmp_path, files)
        (f,) = firsts(doc)
        assert f["code"] == "MD893" and f["role"] == "cause"
        assert re.search(r"2\.20\.5 in \S*/node1\.log; 2\.19\.3 in \S*/node3\.log", f["meaning"])
        assert "same NCCL on every host" in f["remedy"]
        rest = {g["code"]: g for g in findings(doc) if g is not f}
        # rank 0's internal error and its "family 0" address are what the mismatch caused
        assert set(rest) == {"MD650", "MD803"}
        assert all(g["consequence_of"] == f["id"] for g in rest.values())
        assert "ranks running different NCCL versions" in rest["MD803"]["meaning"]
    assert "NVIDIA/nccl #1267" in run_cli("explain", "MD893").out


def test_one_nccl_version_everywhere_or_two_runs_in_one_log_are_no_mismatch(tmp_path):
    same = NODE3.replace("instance-8g-96c-3", "instance-8g-96c-2")
    doc = triage(tmp_path, {"node1.log": NODE1.replace("2.20.5", "2.19.3"), "node2.log": same})
    assert "MD893" not in [f["code"] for f in findings(doc)]
    # one log that holds an upgrade (2.19.3 then 2.20.5) beside a log of 2.20.5: not compared
    (tmp_path / "again").mkdir()
    doc = triage(tmp_path / "again", {"node1.log": NODE3 + NODE1, "node2.log": NODE1})
    assert "MD893" not in [f["code"] for f in findings(doc)]
