"""contrib/slurm: the scripts pass shellcheck with its optional checks (every variable quoted;
bash -n where it is not installed); the HealthCheckProgram drains and resumes the real bed's
node, also when slurmd itself runs it; the Prolog refuses a node with a leftover rank; the Epilog
writes the triage JSON beside a failed job's output, also in a folder whose name has a space,
and for a root job in a shared folder it replaces links another user planted there, never
writing through them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import slurm
from tests.fixes.test_stale_ranks import SLEEP, Procs
from tests.helpers import private_pids_prefix

CONTRIB = Path(__file__).resolve().parents[2] / "contrib" / "slurm"
SCRIPTS = ("meshdoctor-healthcheck", "meshdoctor-prolog", "meshdoctor-epilog")
BOUND_S = 120  # for slurmd to act at all; never a latency budget
MESHDOCTOR = f"{shlex.quote(sys.executable)} -m meshdoctor"


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_lints(name):
    path = CONTRIB / name
    tool = shutil.which("shellcheck")
    argv = [tool, "--shell=bash", "--enable=all", str(path)] if tool else ["bash", "-n", str(path)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def wait_for(cond, what: str, bed) -> None:
    deadline = time.monotonic() + BOUND_S
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen: {bed.node_info()}\n{bed.logs()}")
        time.sleep(0.2)


def wrapper(bed, script: str, **env: str) -> Path:
    """What an operator puts in slurm.conf: the contrib script with its settings (here: this
    checkout's meshdoctor, only the rank check, the bed's SLURM_CONF)."""
    path = bed.dir / f"run-{script}"
    assign = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    path.write_text(f"#!/bin/sh\nexport {assign}\nexec {shlex.quote(str(CONTRIB / script))}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def procs(clean_env, bed):
    p = Procs(dict(clean_env, SLURM_CONF=bed.env["SLURM_CONF"]))
    yield p
    p.close()


def run_script(name: str, env, private: bool = False) -> subprocess.CompletedProcess:
    prefix = list(private_pids_prefix()) if private else []
    return subprocess.run(
        prefix + [str(CONTRIB / name)], env=env, capture_output=True, text=True, timeout=BOUND_S
    )


def test_healthcheck_drains_then_resumes(bed, procs):
    bed.resume()
    env = dict(procs.env, MESHDOCTOR=MESHDOCTOR, MESHDOCTOR_CHECK_ARGS="--only MD301")
    procs.orphan(SLEEP, MLX_RANK="1")
    p = run_script("meshdoctor-healthcheck", env)
    assert p.returncode == 0, p.stdout + p.stderr
    info = bed.node_info()
    assert "DRAIN" in info["State"] and info["Reason"].startswith("meshdoctor: MD301"), info
    procs.close()
    p = run_script("meshdoctor-healthcheck", env, private=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "DRAIN" not in bed.node_info()["State"]


def test_prolog_refuses_a_leftover_rank(bed, procs):
    env = dict(procs.env, MESHDOCTOR=MESHDOCTOR, MESHDOCTOR_PROLOG_CHECKS="MD301")
    procs.orphan(SLEEP, MLX_RANK="0")
    p = run_script("meshdoctor-prolog", env)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "meshdoctor:" in p.stderr and "MD301" in p.stderr
    procs.close()
    assert run_script("meshdoctor-prolog", env, private=True).returncode == 0


def configured_bed(key: str, script: str, more: str = "", **env: str) -> "slurm.SlurmBed":
    """A bed (not started yet) whose slurm.conf runs ``script`` as ``key`` through its wrapper."""
    why = slurm.unavailable()
    if why:
        pytest.skip(why)
    b = slurm.SlurmBed()
    run = wrapper(b, script, MESHDOCTOR=MESHDOCTOR, SLURM_CONF=str(b.conf), **env)
    b.extra_conf = f"{key}={run}\n{more}"
    return b


def test_slurmd_runs_the_healthcheck(procs):
    """slurmd runs the HealthCheckProgram itself (at start and every interval): a leftover rank
    drains the node with meshdoctor's reason."""
    procs.orphan(SLEEP, MLX_RANK="1")
    with configured_bed(
        "HealthCheckProgram",
        "meshdoctor-healthcheck",
        "HealthCheckInterval=2\nHealthCheckNodeState=ANY\n",
        MESHDOCTOR_CHECK_ARGS="--only MD301",
    ) as bed:
        wait_for(
            lambda: (bed.node_info().get("Reason") or "").startswith("meshdoctor: MD301"),
            "the drain by slurmd's HealthCheckProgram",
            bed,
        )


def test_epilog_writes_triage_beside_the_job(tmp_path):
    """A batch job that fails: slurmd's Epilog leaves meshdoctor-triage-<id>.json beside its
    output, the triage verdict of its output and exit status."""
    with configured_bed("Epilog", "meshdoctor-epilog") as bed:
        out = tmp_path / "job.out"
        p = bed.sh(
            "sbatch",
            "--parsable",
            "-o",
            str(out),
            "--wrap",
            "echo 'RuntimeError: [ring] Connection refused'; exit 3",
        )
        assert p.returncode == 0, p.stderr + bed.logs()
        job = p.stdout.strip().split(";")[0]
        triage = tmp_path / f"meshdoctor-triage-{job}.json"
        wait_for(triage.exists, f"{triage} from the Epilog", bed)
        doc = json.loads(triage.read_text())
        assert doc["command"] == "triage" and doc["verdict"] == "no-go", doc
        assert any(r["status"] == "fail" for r in doc["results"]), doc  # the ring's refusal


def submit_held(bed, out: Path, wrap: str) -> str:
    """A batch job writing to ``out``, held: its id is known before it runs."""
    p = bed.sh("sbatch", "--parsable", "--hold", "-o", str(out), "--wrap", wrap)
    assert p.returncode == 0, p.stderr + bed.logs()
    return p.stdout.strip().split(";")[0]


def wait_until_done(bed, job: str) -> None:
    """Until slurmd has run the job's Epilog (the job leaves COMPLETING)."""

    def done() -> bool:
        info = bed.sh("scontrol", "show", "job", job).stdout
        state = info.split("JobState=", 1)[-1].split()[0] if "JobState=" in info else ""
        return state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL")

    wait_for(done, f"job {job}'s end and Epilog", bed)


FAILING_JOB = "echo 'RuntimeError: [ring] Connection refused'; exit 3"


def assert_triage_of_the_failed_job(triage: Path) -> None:
    assert triage.is_file() and not triage.is_symlink(), sorted(triage.parent.iterdir())
    doc = json.loads(triage.read_text())
    assert doc["command"] == "triage" and doc["verdict"] == "no-go", doc
    assert any(r["status"] == "fail" for r in doc["results"]), doc  # the log was read


def test_epilog_of_a_root_job_never_writes_through_a_planted_link(tmp_path):
    """A root job's output in a shared folder (mode 0777) where another user (nobody) planted
    links under the names the Epilog writes, the result and its old fixed temporary name, both
    to a file of root's: root's files are unchanged, and the links are neither written through
    nor replaced (a target that is not a regular file of ours is refused: the Epilog logs that
    nothing was written)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    victims = [private / "a", private / "b"]
    for v in victims:
        v.write_text("root's own file\n")
    with configured_bed("Epilog", "meshdoctor-epilog") as bed:
        job = submit_held(bed, shared / "job.out", FAILING_JOB)
        triage = shared / f"meshdoctor-triage-{job}.json"
        for link, victim in zip((triage, shared / f"{triage.name}.tmp"), victims):
            link.symlink_to(victim)
            os.lchown(link, 65534, 65534)  # nobody's link
        assert bed.sh("scontrol", "release", job).returncode == 0
        wait_until_done(bed, job)
        assert [v.read_text() for v in victims] == ["root's own file\n"] * 2
        links = (triage, shared / f"{triage.name}.tmp")
        assert [os.readlink(p) for p in links] == [str(v) for v in victims]
        left = sorted(p.name for p in shared.iterdir() if p.name.startswith("meshdoctor-"))
        assert left == sorted(p.name for p in links), left  # no other file of ours beside them


def test_epilog_reads_and_writes_in_a_folder_with_a_space(tmp_path):
    """The job's output folder has a space in its name (and so has the log's name): the triage
    JSON is in that folder, made from that log, and nothing is written into its parent."""
    folder = tmp_path / "run 1"
    folder.mkdir()
    with configured_bed("Epilog", "meshdoctor-epilog") as bed:
        job = submit_held(bed, folder / "job %j.out", FAILING_JOB)
        assert bed.sh("scontrol", "release", job).returncode == 0
        wait_until_done(bed, job)
        assert_triage_of_the_failed_job(folder / f"meshdoctor-triage-{job}.json")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run 1"]
