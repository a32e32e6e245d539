"""The Slurm bed itself: a job step of 3 tasks runs on its one node, with Slurm's environment."""

from __future__ import annotations


def test_srun_three_tasks(bed):
    p = bed.sh(
        "srun", "-n", "3", "bash", "-c", 'echo "$SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_NODELIST"'
    )
    assert p.returncode == 0, p.stderr + bed.logs()
    assert sorted(p.stdout.split("\n")[:3]) == [f"{r} 3 {bed.node}" for r in range(3)]
