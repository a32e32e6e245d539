"""Who this rank is under srun or another launcher (meshdoctor.probe.launched), from the
variables Slurm and mlx.launch set."""

from __future__ import annotations

import json

import pytest

from meshdoctor.probe.launched import (
    LauncherError,
    from_env,
    from_srun,
    task_nodes,
    tasks_per_node,
)


def test_tasks_per_node():
    assert tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert tasks_per_node("4") == [4]
    with pytest.raises(LauncherError):
        tasks_per_node("2(3)")


def test_block_and_cyclic():
    nodes, counts = ["a", "b"], [2, 1]
    assert task_nodes(nodes, counts, "block") == ["a", "a", "b"]
    assert task_nodes(nodes, counts, "cyclic") == ["a", "b", "a"]


SRUN = {
    "SLURM_PROCID": "2",
    "SLURM_NTASKS": "4",
    "SLURM_STEP_NODELIST": "localhost,127.0.0.[1-1]",
    "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
    "SLURM_NODEID": "1",
}


def test_srun_ranks_and_ring():
    got = from_srun(SRUN, port=40000)
    assert got.rank == 2 and got.world_size == 4
    assert [h.ssh for h in got.hostfile.hosts] == [
        "localhost",
        "localhost",
        "127.0.0.1",
        "127.0.0.1",
    ]
    assert got.ring == (
        ("127.0.0.1:40000",),
        ("127.0.0.1:40001",),
        ("127.0.0.1:40002",),
        ("127.0.0.1:40003",),
    )
    assert got.control == ("127.0.0.1", 40004)


@pytest.mark.parametrize(
    "change,words",
    [
        ({"SLURM_PROCID": None}, "SLURM_PROCID is not set"),
        ({"SLURM_NODEID": "0"}, "places tasks otherwise"),
        ({"SLURM_STEP_TASKS_PER_NODE": "1(x2)"}, "does not spread 4 tasks"),
        ({"SLURM_STEP_NODELIST": "n[1-"}, "SLURM_STEP_NODELIST"),
    ],
)
def test_srun_refused(change, words):
    env = {k: v for k, v in dict(SRUN, **change).items() if v is not None}
    with pytest.raises(LauncherError, match=words):
        from_srun(env)


def test_env_launcher(tmp_path):
    hf = tmp_path / "h.json"
    hf.write_text(json.dumps([["10.0.0.1:5000", "10.0.1.1:5001"], ["10.0.0.2:5002"]]))
    got = from_env({"MLX_RANK": "1", "MLX_HOSTFILE": str(hf)})
    assert got.rank == 1 and got.world_size == 2 and got.ring_file == str(hf)
    assert got.hostfile.hosts[0].ips == ("10.0.0.1", "10.0.1.1")
    assert got.control == ("10.0.0.1", 5003)
    hf.write_text(json.dumps([{"ssh": "m1"}]))
    with pytest.raises(LauncherError, match='list per rank of "ip:port"'):
        from_env({"MLX_RANK": "0", "MLX_HOSTFILE": str(hf)})


def test_srun_node_without_address():
    env = dict(SRUN, SLURM_STEP_NODELIST="md-no-such-node.invalid", SLURM_NODEID="0")
    env.update(SLURM_STEP_TASKS_PER_NODE="4", SLURM_PROCID="0")
    with pytest.raises(LauncherError, match="md-no-such-node.invalid"):
        from_srun(env)
