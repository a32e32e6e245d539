#!/usr/bin/env bash
# Everything the NCCL work measures on a GPU host, in one go; outputs packed into
# $OUT/results.tgz (default ./out).
#
# Expects MLX's CUDA build importable (PYTHONPATH) and meshdoctor's wheels in .gpu/wheels
# (click, rich, psutil, nvidia-ml-py, ..., and meshdoctor itself: `pip wheel --no-deps -w
# .gpu/wheels .`). Steps: install; `meshdoctor check` with real NVML; `probe --backend nccl -n 2`
# every op at 1 MiB, 16 MiB, 256 MiB, 1 GiB; the default backend and the wall time of
# `probe -n 2 --size 256MiB`; --pairs (a skip on nccl); an NCCL init failure (a bad
# NCCL_SOCKET_IFNAME) classified from stderr; SIGKILL and SIGSTOP of one rank mid all_sum;
# benchmarks/nccl_speed.py (probe vs bare MLX vs PyTorch); the GPU-marked tests.
set -u
FINAL=${OUT:-$PWD/out}
OUT=$FINAL/r                         # everything here, packed into $FINAL/results.tgz at exit
mkdir -p "$OUT"
repo=$PWD
trap 'tar czf "$FINAL/results.tgz" -C "$OUT" . && rm -rf "$OUT"' EXIT
export NCCL_NVLS_ENABLE=0            # NVLink multicast stays off on this machine
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/steps.log"; }
md() { (cd /tmp && python3 -m meshdoctor "$@"); }

log install
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$repo"/.gpu/wheels/*.whl \
  >"$OUT/install.txt" 2>&1 || { log "install failed"; cat "$OUT/install.txt"; }
{
  date -u; uname -a; python3 --version
  python3 -c 'import mlx.core as mx; print("mlx", mx.__version__, "cuda", mx.cuda.is_available(), "nccl", mx.distributed.is_available("nccl"))'
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
  nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s | head -40
} >"$OUT/env.txt" 2>&1
log "mlx: $(grep '^mlx' "$OUT/env.txt")"

log check
(cd /tmp && timeout 120 python3 -m meshdoctor check --json) >"$OUT/check.json" 2>"$OUT/check.err"
echo "rc=$?" >>"$OUT/check.err"
(cd /tmp && timeout 120 python3 -m meshdoctor check) >"$OUT/check.txt" 2>&1

for size in 1MiB 16MiB 256MiB 1GiB; do
  log "probe nccl $size"
  (cd /tmp && timeout 180 python3 -m meshdoctor probe --backend nccl -n 2 --size $size \
     --iters 10 --warmup 2 --json) >"$OUT/probe-$size.json" 2>"$OUT/probe-$size.err"
  echo "rc=$?" >>"$OUT/probe-$size.err"
done

log "probe default backend, wall time, 256MiB"
t0=$(date +%s.%N)
(cd /tmp && timeout 120 python3 -m meshdoctor probe -n 2 --size 256MiB --json) \
  >"$OUT/probe-default-256MiB.json" 2>"$OUT/probe-default-256MiB.err"
rc=$?; t1=$(date +%s.%N)
echo "rc=$rc wall_s=$(python3 -c "print(round($t1-$t0,3))")" | tee "$OUT/wall.txt"
t0=$(date +%s.%N)
(cd /tmp && timeout 120 python3 -m meshdoctor probe -n 2 --size 256MiB) >"$OUT/probe-default-256MiB.txt" 2>&1
rc=$?; t1=$(date +%s.%N)
echo "human rc=$rc wall_s=$(python3 -c "print(round($t1-$t0,3))")" | tee -a "$OUT/wall.txt"

log "probe --pairs"
(cd /tmp && timeout 120 python3 -m meshdoctor probe --backend nccl -n 2 --pairs --op all_sum \
   --size 1MiB --json) >"$OUT/probe-pairs.json" 2>&1

log "NCCL init failure (NCCL_SOCKET_IFNAME=nosuchif0)"
(cd /tmp && NCCL_SOCKET_IFNAME=nosuchif0 NCCL_DEBUG=WARN timeout 120 python3 -m meshdoctor \
   probe --backend nccl -n 2 --op all_sum --size 1MiB --json) >"$OUT/probe-nccl-error.json" 2>&1

log faults
(cd /tmp && timeout 150 python3 "$repo/benchmarks/gpu/nccl_faults.py" --timeout 5 \
   --json "$OUT/faults.json") >"$OUT/faults.txt" 2>&1
echo "rc=$?" >>"$OUT/faults.txt"
nvidia-smi --query-gpu=index,memory.used --format=csv >>"$OUT/faults.txt" 2>&1

log speed
(cd /tmp && timeout 240 python3 "$repo/benchmarks/nccl_speed.py" -n 2 --iters 10 --rounds 2 \
   --json "$OUT/nccl_speed.json") >"$OUT/nccl_speed.txt" 2>&1
echo "rc=$?" >>"$OUT/nccl_speed.txt"

log "gpu tests"
rm -rf /tmp/t && mkdir -p /tmp/t && cp -r "$repo/tests" /tmp/t/
(cd /tmp/t && timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_gpu_nccl.py) \
  >"$OUT/pytest-gpu.txt" 2>&1
echo "rc=$?" >>"$OUT/pytest-gpu.txt"
nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv >"$OUT/gpu-end.txt" 2>&1
log done
cat "$OUT/wall.txt" "$OUT/faults.txt" "$OUT/nccl_speed.txt"; tail -3 "$OUT/pytest-gpu.txt"
