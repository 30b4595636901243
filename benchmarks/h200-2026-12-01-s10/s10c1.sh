#!/usr/bin/env bash
# Session 10, call 1: launch-cache miss cost, round-2 A/B, tuner.follow live test.
set -u
rm -rf .whl; ln -s .whl_s .whl
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
mkdir -p .cache/hgemm && tar xzf .carry/kernel_cache_tables.tar.gz -C .cache/hgemm && mv .carry/kernel_cache_tables.tar.gz /tmp/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/env.txt
for spec in "64x4096x64 f32" "64x4096x64 f16" "256x1024x512 f32" "1024x1024x1024 f16"; do
  set -- $spec
  for r in 1 64; do
    echo "== $1 $2 rotate $r" >> $OUT/overhead.txt
    timeout 120 python3 -m kernels.overhead --shape $1 --acc $2 --rotate $r --calls 2000 >> $OUT/overhead.txt 2>&1
  done
done
echo "overhead done at ${SECONDS}s" >> $OUT/rc.txt
OUT=$OUT/ab CAND=.carry/cand2 SHAPES_fp32=.carry/r2_changed_fp32.txt SHAPES_fp16=.carry/r2_changed_fp16.txt DEADLINE=120 SKIP_ENV=1 \
  bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab rc=$? at ${SECONDS}s" >> $OUT/rc.txt
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider tests/ops/test_follow_live_gpu.py > $OUT/follow_test.txt 2>&1
echo "follow rc=$? at ${SECONDS}s" >> $OUT/rc.txt
cat $OUT/rc.txt; tail -3 $OUT/follow_test.txt; cat $OUT/ab/summary.txt; grep -E "==|kernels.gemm \(|fast path|torch" $OUT/overhead.txt
