#!/bin/bash
# usage: run.sh before|after LOG ; the same files, same conditions, one after the other
FILES="tests/netns/test_fleet.py tests/slurm tests/cli/test_probe.py tests/cli/test_launch.py"
PY=/work/wt/iso/.venv/bin/python
case $1 in
  before) cd /tmp/iso-base && args="-p no:xdist" ;;
  after)  cd /work/wt/iso && args="-n 3" ;;
esac
t0=$(date +%s.%N)
$PY -m pytest -q -p no:cacheprovider $args --durations=0 $FILES > "$2" 2>&1
rc=$?
t1=$(date +%s.%N)
echo "$1 rc=$rc wall=$(echo "$t1 - $t0" | bc) load=$(cut -d' ' -f1-3 /proc/loadavg) at=$(date -u +%H:%M:%S)" | tee -a /tmp/iso-bench/summary.txt
