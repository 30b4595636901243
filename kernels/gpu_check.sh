#!/usr/bin/env bash
# One GPU session on the H200 host: build (cache hits for what was carried), test, time, pack the cache.
#   bash kernels/gpu_check.sh [BUILD_SETS] [BUILD_DEADLINE_S] [BENCH_SET]
#   e.g. bash kernels/gpu_check.sh smoke,default 280 default
# Writes logs, bench JSON and the packed cache (per family, <= 16 MB each) to $OUT (default ./gpu_out).
# Needs python3 with CUDA torch, nvcc, and the CUTLASS wheel importable (see docs/kernels.md).
set -uo pipefail
SETS=${1:-smoke}; DEADLINE=${2:-400}; BENCH_SET=${3:-smoke}
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
export PYTHONUNBUFFERED=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' | tee -a "$OUT/gpu.txt"
nvcc --version | tail -2 | tee -a "$OUT/gpu.txt"

echo "== build $SETS (deadline ${DEADLINE}s)  (t=$(el)s)"
python3 -m kernels.build --set "$SETS" --jobs "$(nproc)" --deadline "$DEADLINE" > "$OUT/build.log" 2>&1
grep -v "^ \|^$\|^---\|^/" "$OUT/build.log" | grep -E "^(sm|set|total)" | tail -n 50

for SET in ${SETS//,/ }; do
  echo "== gpu tests on the built variants of $SET  (t=$(el)s)"
  HGEMM_TEST_SET=$SET timeout ${TEST_TIMEOUT:-110} python3 -m pytest tests/kernels/test_gpu_kernels.py -m gpu -q -o timeout=60 -p no:cacheprovider 2>&1 \
    > "$OUT/test_${SET}.log"
  grep -E "passed|failed|^FAILED|^ERROR|Error" "$OUT/test_${SET}.log" | tail -n 25
done

echo "== bench $BENCH_SET  (t=$(el)s)"
timeout ${BENCH_TIMEOUT:-110} python3 -m kernels.bench --set "$BENCH_SET" ${BENCH_ARGS:-} --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
echo "== pack  (t=$(el)s)"
(cd .cache/hgemm && tar czf "$OUT/cache_sm90.tar.gz" lib/sm90_* ; tar czf "$OUT/cache_sm80.tar.gz" lib/sm80_*)
ls -la "$OUT" | tail -n +2
echo "done in $(el)s"
tail -n 16 "$OUT/bench.log"
