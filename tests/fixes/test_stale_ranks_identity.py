"""`meshdoctor fix stale-ranks --yes` in a private PID namespace (`unshare --pid --fork
--mount-proc`): a rank is a process that is one. Readers, pagers and editors naming mlx.launch's
script text are never touched; a wrapper goes with the rank it runs, in one plan; a
MESHDOCTOR_PARENT_PID that does not prove meshdoctor started a process hides nothing.

Each test runs one bash script as pid 1 of a new namespace: it starts the processes (orphaned:
re-parented to that pid 1), runs the fix, then prints which of them are still alive.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from tests.helpers import private_pids_prefix

SLEEP = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(300)'"


def _in_namespace(tmp_path, setup: str, names, extra_env: str = ""):
    """Run ``setup`` (bash that starts processes and writes ``NAME=$!`` lines to $PIDS), then
    the fix; returns (verdict document, {name: alive})."""
    prefix = private_pids_prefix()
    if not prefix or "--pid" not in prefix:
        pytest.skip("no private PID namespace here")
    script = f"""
set -u
PIDS={tmp_path}/pids; : > $PIDS
{setup}
sleep 0.5
env -u MLX_RANK -u JACCL_RANK MESHDOCTOR_STATE_DIR={tmp_path}/state {extra_env} \
  {shlex.quote(sys.executable)} -m meshdoctor fix stale-ranks --yes --json > {tmp_path}/out.json
while IFS='=' read -r n p; do
  if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' /proc/$p/status; then
    echo "$n=alive"; else echo "$n=gone"; fi
done < $PIDS > {tmp_path}/alive
"""
    p = subprocess.run(
        list(prefix) + ["bash", "-c", script], capture_output=True, text=True, timeout=180
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    alive = dict(line.split("=", 1) for line in (tmp_path / "alive").read_text().split())
    assert set(alive) == set(names), alive
    return doc, {n: v == "alive" for n, v in alive.items()}


def test_readers_pagers_and_editors_naming_the_rank_script_are_never_touched(tmp_path):
    text = 'pidfile=$(mktemp); export MLX_RANK=0; cmd=(python train.py); exec "${cmd[@]}"'
    named = tmp_path / f"log {text}"
    named.write_text(text + "\n")
    fifo = tmp_path / "fifo"
    q = shlex.quote
    setup = f"""
mkfifo {q(str(fifo))}
( tail -f {q(str(named))} >/dev/null 2>&1 & echo tail=$! >> $PIDS )
( grep -F 'export MLX_RANK=' {q(str(fifo))} >/dev/null 2>&1 & echo grep=$! >> $PIDS )
( sleep 300 | TERM=xterm script -qc {q("less " + q(str(named)))} /dev/null >/dev/null 2>&1 & )
( sleep 300 | TERM=xterm script -qc {q("vim -n " + q(str(named)))} /dev/null >/dev/null 2>&1 & )
( MLX_RANK=1 {SLEEP} & echo rank=$! >> $PIDS )
sleep 0.5
for c in /proc/[0-9]*; do  # less and vim themselves (script's children on a terminal)
  case "$(tr '\\0' ' ' < $c/cmdline 2>/dev/null)" in
    "less "*) echo less=${{c#/proc/}} >> $PIDS ;;
    "vim -n "*) echo vim=${{c#/proc/}} >> $PIDS ;;
  esac
done
"""
    doc, alive = _in_namespace(tmp_path, setup, {"tail", "grep", "less", "vim", "rank"})
    assert alive == {"tail": True, "grep": True, "less": True, "vim": True, "rank": False}, doc
    stopped = [a for a in doc["actions"] if a["mutates"]]
    assert len(stopped) == 1 and "rank 1" in stopped[0]["step"], stopped
    assert doc["exit_code"] == 0


def test_an_orphaned_wrapper_is_stopped_with_its_rank_child_in_one_plan(tmp_path):
    setup = f"""
( MLX_RANK=0 bash -c "{SLEEP}; echo done" & echo wrapper=$! >> $PIDS )
sleep 0.3
for c in /proc/[0-9]*; do
  if grep -q 'time.sleep' $c/cmdline 2>/dev/null && \
     [ "$(awk '/^PPid:/{{print $2}}' $c/status)" = "$(cat $PIDS | cut -d= -f2)" ]; then
    echo child=${{c#/proc/}} >> $PIDS
  fi
done
"""
    doc, alive = _in_namespace(tmp_path, setup, {"wrapper", "child"})
    assert alive == {"wrapper": False, "child": False}, doc
    assert doc["needs_reboot"] == [] and doc["exit_code"] == 0, doc["results"]
    steps = [a["step"] for a in doc["actions"] if a["mutates"]]
    assert len(steps) == 2 and any("runs under rank pid" in s for s in steps), steps


def test_a_forged_parent_marker_hides_no_stale_rank(tmp_path):
    # pid 1 of the namespace (this script's bash) is live and older: once, that hid the rank
    setup = f"""
( MLX_RANK=0 MESHDOCTOR_PARENT_PID=1 {SLEEP} & echo forged1=$! >> $PIDS )
( MLX_RANK=1 MESHDOCTOR_PARENT_PID=$$ {SLEEP} & echo forged_self=$! >> $PIDS )
"""
    doc, alive = _in_namespace(tmp_path, setup, {"forged1", "forged_self"})
    assert alive == {"forged1": False, "forged_self": False}, doc
    assert doc["exit_code"] == 0
