"""``meshdoctor triage``'s first cause does not follow the order of its inputs: per-rank logs
without timestamps, given in every order, name the same first cause(s); an echo (a reset or
peer-closed socket, NCCL's remote error) never outranks an original fault; a rank whose log
ends without an error while its peers lost it is named the suspect (MD691). Lines as MLX,
NCCL and mlx.launch print them (the sources are in each signature)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Dict, List

import pytest

from tests.helpers import run_cli

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/train.py", line 41, in <module>\n'
    "    mx.eval(mx.distributed.all_sum(grads))\n"
)

# ring (MLX 0.32.0): rank 1 sends one 2 GiB transfer and fails with EINVAL; its peers see the
# socket reset and the peer gone
RING = {
    "rank0.log": "rank 0 step 12 loss 1.93\n"
    "[ring] Receiving from socket 4 failed with errno 104\n"
    "[ring] Too many send/recv errors. Failing pending tasks...\n"
    + TRACEBACK
    + "RuntimeError: [ring] connection to a peer was lost\n",
    "rank1.log": "rank 1 step 12 loss 1.93\n[ring] Sending to socket 5 failed with errno 22\n",
    "rank2.log": "rank 2 step 12 loss 1.93\n"
    "[ring] Sending to socket 7 failed with errno 32\n"
    "[ring] Socket 7 was closed by the peer\n",
}

# nccl: rank 2 cannot create its shared memory segment; the others get ncclRemoteError and a
# socket the peer closed or reset
NCCL = {
    "rank0.log": "gpu-node-1:4101:4180 [0] NCCL WARN socketProgress: Connection closed by "
    "remote peer gpu-node-3<52314>\n"
    "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there was a "
    "network error'\n",
    "rank1.log": "gpu-node-2:4102:4181 [0] NCCL WARN ncclOsSocketProgressOpt: Call to send to "
    "10.0.0.3<40123> failed : Connection reset by peer\n"
    "NCCL error /mlx/distributed/nccl/nccl.cpp:240 'remote process exited or there was a "
    "network error'\n",
    "rank2.log": "gpu-node-3:4103:4182 [0] NCCL WARN Error while creating shared memory segment "
    "/dev/shm/nccl-2bX0 (size 9637888)\n",
}

# two ranks fail on their own in init (jaccl), the third only sees the side channel close
TWO_CAUSES = {
    "rank0.log": "RuntimeError: [jaccl] Couldn't allocate protection domain\n",
    "rank1.log": "RuntimeError: [jaccl] Register memory region failed\n",
    "rank2.log": "RuntimeError: [jaccl] Recv failed with errno=2\n",
}

# ring: rank 1 was killed without a word (SIGKILL); its peers lost it
SILENT = {
    "rank0.log": "rank 0 step 40 loss 1.41\n"
    "[ring] Socket 4 was closed by the peer\n"
    + TRACEBACK
    + "RuntimeError: [ring] connection to a peer was lost\n",
    "rank1.log": "rank 1 step 39 loss 1.42\nrank 1 step 40 loss 1.41\n",
    "rank2.log": "rank 2 step 40 loss 1.41\n"
    "[ring] Receiving from socket 7 failed with errno 104\n"
    "[ring] Too many send/recv errors. Failing pending tasks...\n",
}


# mlx.launch's own lines for those jobs (launch.py log_warning): the survivors that raised
# exit 1, the ranks it stopped were killed
LAUNCH = {
    "ring": "\x1b[33m[WARN] Node with rank 0 exited with code 1\x1b[0m\n"
    "\x1b[33m[WARN] Node with rank 2 was killed\x1b[0m\n",
    "nccl": "[WARN] Node with rank 0 exited with code 1\n"
    "[WARN] Node with rank 1 exited with code 1\n"
    "[WARN] Node with rank 2 exited with code 1\n",
}


# three ranks' loggers, two with milliseconds, one to the second only: rank 2's identical
# failure 380 ms after rank 1's is its echo; rank 0's second holds both
STAMPED = {
    "rank0.log": "2026-01-05 10:00:04 RuntimeError: [jaccl] Couldn't allocate protection domain\n",
    "rank1.log": "2026-01-05 10:00:04,120 RuntimeError: [jaccl] Register memory region failed\n",
    "rank2.log": "2026-01-05 10:00:04,500 RuntimeError: [jaccl] Register memory region failed\n",
}


def _write(d: Path, files: Dict[str, str]) -> List[str]:
    for name, text in files.items():
        (d / name).write_text(text)
    return [str(d / n) for n in files]


def _answer(doc) -> tuple:
    """What triage concluded, by content (ids follow the timeline): the first causes, and what
    every other finding is a consequence of."""
    fs = {f["id"]: f for f in doc["triage"]["findings"]}

    def what(f):
        return (f["code"], f["rank"], Path(f["source"]).name, f["line_number"])

    firsts = sorted(what(fs[i]) for i in doc["triage"]["first_cause"])
    rel = sorted(
        (what(f), what(fs[f["consequence_of"]]) if f["consequence_of"] else None)
        for f in fs.values()
        if not f["first_cause"]
    )
    return firsts, rel


@pytest.mark.parametrize(
    "files,firsts",
    [
        (RING, [("MD615", 1, "rank1.log", 2)]),
        (NCCL, [("MD653", 2, "rank2.log", 1)]),
        (TWO_CAUSES, [("MD604", 0, "rank0.log", 1), ("MD605", 1, "rank1.log", 1)]),
        (SILENT, [("MD691", 1, "rank1.log", 2)]),
        (STAMPED, [("MD604", 0, "rank0.log", 1), ("MD605", 1, "rank1.log", 1)]),
    ],
    ids=["ring-errno-22", "nccl-shm", "two-causes", "silent-rank", "stamped"],
)
def test_the_first_cause_is_the_same_in_every_order_of_the_files(tmp_path, files, firsts):
    paths = _write(tmp_path, files)
    answers = set()
    for perm in itertools.permutations(paths):
        r = run_cli("triage", *perm, "--json")
        assert r.rc == 1, r.outcome()
        answer = _answer(r.doc)
        assert answer[0] == firsts, (perm, r.outcome())
        answers.add(repr(answer))
    assert len(answers) == 1, answers


@pytest.mark.parametrize(
    "files,firsts",
    [
        (dict(SILENT, **{"launch.log": LAUNCH["ring"]}), [("MD691", 1, "rank1.log", 2)]),
        (dict(NCCL, **{"launch.log": LAUNCH["nccl"]}), [("MD653", 2, "rank2.log", 1)]),
    ],
    ids=["silent-rank", "nccl-shm"],
)
def test_a_survivors_exit_1_beside_its_lost_peer_traceback_is_no_first_cause(
    tmp_path, files, firsts
):
    paths = _write(tmp_path, files)
    for perm in (paths, paths[::-1]):
        r = run_cli("triage", *perm, "--json")
        assert _answer(r.doc)[0] == firsts, r.outcome()
        exits = [f for f in r.doc["triage"]["findings"] if f["code"] == "MD657"]
        assert exits and all(not f["first_cause"] for f in exits)


def test_the_silent_rank_is_named_with_what_to_look_for(tmp_path):
    paths = _write(tmp_path, SILENT)
    r = run_cli("triage", *paths, "--json")
    first = r.results("MD691")
    assert len(first) == 1 and "FIRST CAUSE" in first[0]["summary"], r.outcome()
    ev = first[0]["evidence"]
    assert ev["rank"] == 1 and ev["role"] == "cause" and ev["name"] == "triage.silent-rank"
    assert "rank 1's log ends after 2 line(s) with no error" in ev["meaning"]
    assert "rank 0, rank 2 lost a peer" in ev["meaning"]
    assert "--crash-reports" in ev["remedy"] and "dmesg" in ev["remedy"]
    others = [f for f in r.doc["triage"]["findings"] if f["code"] != "MD691"]
    assert others and all(f["consequence_of"] == ev["id"] for f in others)
    human = run_cli("triage", *paths)
    assert human.rc == 1 and "triage silent rank" in human.out and "FIRST CAUSE" in human.out


@pytest.mark.parametrize(
    "change",
    [
        # a rank printed a cause of its own: it is the first cause, nobody is a suspect
        {
            "rank1.log": "rank 1 step 40\nRuntimeError: [malloc] Unable to allocate 17179869184 "
            "bytes.\n"
        },
        # mlx.launch says how rank 1 ended: that says it, no suspect is needed
        {"launch.log": "\x1b[33m[WARN] Node with rank 1 exited with code -9\x1b[0m\n"},
        # only one rank's log: nothing to compare it with
        None,
    ],
    ids=["a-cause-printed", "exit-status-known", "one-log"],
)
def test_no_suspect_when_the_logs_say_more(tmp_path, change):
    files = dict(SILENT, **change) if change else {"rank0.log": SILENT["rank0.log"]}
    r = run_cli("triage", *_write(tmp_path, files), "--json")
    assert r.rc == 1 and not r.results("MD691"), r.outcome()


def test_the_jobs_exit_status_never_outranks_a_ranks_own_finding(tmp_path):
    paths = _write(tmp_path, SILENT)
    r = run_cli("triage", *paths, "--exit-code", "137", "--json")
    fs = {f["id"]: f for f in r.doc["triage"]["findings"]}
    assert [fs[i]["code"] for i in r.doc["triage"]["first_cause"]] == ["MD691"], r.outcome()


def test_two_untimed_logs_of_one_rank_are_two_failures_not_one_chain(tmp_path):
    """mlx #3755: the same rank's jaccl run and ring run, pasted as two logs without times,
    failed to connect each on its own; neither is named the consequence of the other."""
    files = {
        "rank2-jaccl.log": "[jaccl] Couldn't connect (error: 60)\n",
        "rank2-ring.log": "[ring] Couldn't connect (error: 65)\n",
    }
    for order in itertools.permutations(_write(tmp_path, files)):
        doc = run_cli("triage", *order, "--json").doc
        found = {f["code"]: f for f in doc["triage"]["findings"]}
        assert found["MD637"]["first_cause"] and found["MD621"]["consequence_of"] is None
