"""``meshdoctor triage``: a Python traceback whose every line carries a launcher or rank
prefix (``[rank 1] ``, a timestamp and rank): the record is read as one traceback, so the
specific signature on its last line names it, not a generic Python exception; and sub-second
timestamps deciding the first cause whatever the order of the files."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli

BODY = [
    "Traceback (most recent call last):",
    '  File "/srv/serve.py", line 40, in <module>',
    "    group = mx.distributed.init(backend='jaccl')",
    "RuntimeError: [jaccl] Couldn't allocate protection domain",
]


@pytest.mark.parametrize(
    "prefix",
    [
        lambda i: "[rank 1] ",
        lambda i: f"2026-01-05 10:00:0{i},{100 + 7 * i} rank1: ",
        lambda i: "[1,0]<stderr>:",
    ],
    ids=["rank", "timestamp-and-rank", "mpirun"],
)
def test_a_prefixed_traceback_is_named_by_its_last_line(tmp_path, prefix):
    log = tmp_path / "rank1.log"
    log.write_text("".join(prefix(i) + line + "\n" for i, line in enumerate(BODY)))
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1, r.err
    codes = [f["code"] for f in r.doc["triage"]["findings"]]
    assert codes == ["MD604"], codes
    (f,) = r.doc["triage"]["findings"]
    assert any("serve.py" in c for c in f["context"])


@pytest.mark.parametrize("reverse", [False, True], ids=["files-in-order", "files-reversed"])
def test_sub_second_timestamps_decide_the_first_cause_whatever_the_file_order(tmp_path, reverse):
    (tmp_path / "rank0.log").write_text(
        "2026-01-05 10:00:04,910 RuntimeError: [jaccl] Couldn't allocate protection domain\n"
    )
    (tmp_path / "rank1.log").write_text(
        "2026-01-05 10:00:04,120 RuntimeError: [jaccl] Register memory region failed\n"
    )
    files = sorted(str(p) for p in tmp_path.iterdir())
    r = run_cli("triage", *(files[::-1] if reverse else files), "--json")
    fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
    (first,) = r.doc["triage"]["first_cause"]
    assert fs[first]["code"] == "MD605" and fs[first]["rank"] == 1
    other = next(f for f in fs.values() if f["id"] != first)
    assert other["consequence_of"] == first


# https://github.com/ml-explore/mlx-examples/issues/1296 (mpirun, a Metal kernel missing on one
# node, the peer losing it), as mpirun --tag-output and PRRTE's prterun print the lines
# (Open MPI mpirun(1) --tag-output: "[jobid,rank]<stream>:"; openpmix/prrte #1405)
@pytest.mark.parametrize(
    "tag",
    [lambda r: f"[1,{r}]<stderr>:", lambda r: f"[prterun-node01-62282@1,{r}]<stderr>: "],
    ids=["mpirun", "prterun"],
)
def test_the_rank_of_a_finding_is_read_from_the_mpi_output_tag(tmp_path, tag):
    log = tmp_path / "mpirun.log"
    log.write_text(
        tag(1) + "Terminating due to uncaught exception: [metal::Device] Unable to load kernel "
        "input_coherent\n" + tag(0) + "[ring] Socket 4 was closed by the peer\n"
    )
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1, r.err
    by_code = {f["code"]: f for f in r.doc["triage"]["findings"]}
    assert by_code["MD698"]["rank"] == 1 and by_code["MD698"]["first_cause"]
    assert by_code["MD613"]["rank"] == 0
    assert by_code["MD613"]["consequence_of"] == by_code["MD698"]["id"]
    first = next(x for x in r.doc["results"] if x["code"] == "MD698")
    assert "rank 1" in first["summary"]


# https://github.com/ml-explore/mlx/issues/3467: the exo runner aborts on ConnectToGroup with the
# RTR error wrapped in libc++abi's uncaught-exception line (MLX <= 0.32.0 aborts on it)
def test_a_line_that_wraps_a_specific_error_is_that_error_first(tmp_path):
    log = tmp_path / "runner.log"
    log.write_text(
        "[1,1]<stderr>:libc++abi: terminating due to uncaught exception of type "
        "std::runtime_error: [jaccl] Changing queue pair to RTR failed with errno 22\n"
        "[1,0]<stderr>:[jaccl] Recv failed with errno=2\n"
    )
    r = run_cli("triage", str(log), "--json")
    assert r.rc == 1, r.err
    by_code = {f["code"]: f for f in r.doc["triage"]["findings"]}
    assert by_code["MD601"]["first_cause"] and by_code["MD601"]["rank"] == 1
    assert r.doc["triage"]["first_cause"] == [by_code["MD601"]["id"]]
    # the wrapper (the abort) and the peer's lost connection follow from it
    assert by_code["MD617"]["consequence_of"] == by_code["MD601"]["id"]
    assert by_code["MD606"]["consequence_of"] == by_code["MD601"]["id"]
