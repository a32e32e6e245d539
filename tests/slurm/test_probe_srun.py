"""``srun -n 3 meshdoctor probe --launcher srun`` on the real Slurm bed: three tasks of one job
step are the ranks (SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST expanded and resolved for
the ring), over loopback; rank 0 prints the verdict, the others their part."""

from __future__ import annotations

import json
import sys

from tests.cli.test_probe_launcher import BOUND_S, free_run
from tests.helpers import validate


def srun_probe(bed, clean_env, *args, **extra):
    env = dict(clean_env, SLURM_CONF=bed.env["SLURM_CONF"], **extra)
    argv = ["srun", "-n", "3", "--kill-on-bad-exit=0", sys.executable, "-m", "meshdoctor"]
    argv += ["probe", "--launcher", "srun", "--port", str(free_run(4)), *args]
    return bed.sh(*argv, timeout=BOUND_S, env=env)


def test_srun_three_ranks_go(bed, clean_env):
    p = srun_probe(bed, clean_env, "--size", "1MiB", "--json")
    assert p.returncode == 0, p.stdout + p.stderr + bed.logs()
    doc = json.loads(p.stdout)  # rank 0's document only: the others write their part on stderr
    validate(doc)
    assert doc["verdict"] == "go" and doc["probe"]["world_size"] == 3, doc["probe"]
    for r in (1, 2):
        assert f"meshdoctor probe: rank {r} of 3 ({bed.node}): done" in p.stderr, p.stderr


def test_srun_dead_rank_named(bed, clean_env):
    p = srun_probe(
        bed, clean_env, "--size", "1MiB", "--op", "all_sum", MESHDOCTOR_PROBE_FAULT="kill:2:5"
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert "MD502" in p.stdout and f"rank 2 ({bed.node}" in p.stdout, p.stdout
    assert f"rank 2 of 3 ({bed.node}): ended by signal 9" in p.stdout, p.stdout
