#!/usr/bin/env bash
# Quick verification of a meshdoctor wheel on a GPU host (see run_all.sh for the full set):
# check, probe -n 2 --size 256MiB, an op-only probe, an NCCL init failure, the fault benchmark,
# the GPU-side tests. Expects .gpu/wheels (meshdoctor and its dependencies as wheels) and
# MLX's CUDA build in /tmp/site; writes under $OUT.
set -u
export NCCL_NVLS_ENABLE=0
export PYTHONPATH=/tmp/site
repo=$PWD
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$repo"/.gpu/wheels/*.whl > $OUT/install.txt 2>&1; echo "install rc=$?"
cd /tmp
timeout 120 python3 -m meshdoctor check > $OUT/check.txt 2>&1; echo "check rc=$?"; tail -3 $OUT/check.txt
t0=$(date +%s.%N); timeout 120 python3 -m meshdoctor probe -n 2 --size 256MiB > $OUT/probe256.txt 2>&1; rc=$?; t1=$(date +%s.%N)
echo "probe default 256MiB rc=$rc wall=$(python3 -c "print(round($t1-$t0,2))")"; tail -14 $OUT/probe256.txt
timeout 120 python3 -m meshdoctor probe -n 2 --op sum_scatter --size 16MiB --json > $OUT/probe-ss.json 2>&1; echo "probe sum_scatter only rc=$?"
(NCCL_SOCKET_IFNAME=nosuchif0 NCCL_DEBUG=WARN timeout 120 python3 -m meshdoctor probe --backend nccl -n 2 --op all_sum --size 1MiB > $OUT/probe-nccl-error.txt 2>&1; echo "nccl init failure rc=$?"; grep -E "MD50|MD6" $OUT/probe-nccl-error.txt | head -5)
timeout 150 python3 "$repo/benchmarks/gpu/nccl_faults.py" --timeout 5 --json $OUT/faults.json > $OUT/faults.txt 2>&1; echo "faults rc=$?"; tail -8 $OUT/faults.txt
nvidia-smi --query-gpu=index,memory.used --format=csv
rm -rf /tmp/t && mkdir -p /tmp/t && cp -r "$repo/tests" /tmp/t/
(cd /tmp/t && timeout 300 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu tests/checks/test_gpu_*.py tests/checks/test_nccl_environment.py tests/unit/facts/test_nvml.py tests/unit/probe/test_nccl.py tests/cli/test_probe_nccl.py tests/unit/probe/test_schema.py tests/unit/probe/test_figures.py tests/unit/probe/test_culprits.py) > $OUT/pytest-gpu.txt 2>&1; echo "pytest rc=$?"; tail -4 $OUT/pytest-gpu.txt
