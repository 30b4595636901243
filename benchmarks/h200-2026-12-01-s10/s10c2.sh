#!/usr/bin/env bash
# Session 10, call 2: the capture fix on the GPU (fast path + dispatch GPU tests), tuner.follow live test,
# host time with the capture query, round-2 A/B again (the first one had the capture bug in both roles).
set -u
rm -rf .whl; ln -s .whl_s .whl
source scripts/device_env.sh
export HGEMM_COMMIT=${HGEMM_COMMIT:-unknown}
mkdir -p .cache/hgemm && tar xzf .carry/kernel_cache_tables.tar.gz -C .cache/hgemm && mv .carry/kernel_cache_tables.tar.gz /tmp/
HGEMM_TEST_SET=tables timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=150 \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? at ${SECONDS}s: $(tail -1 $OUT/gpu_tests.txt)" >> $OUT/rc.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/ops/test_follow_live_gpu.py > $OUT/follow_test.txt 2>&1
echo "follow rc=$? at ${SECONDS}s: $(tail -1 $OUT/follow_test.txt)" >> $OUT/rc.txt
for r in 1 64; do
  echo "== 64x4096x64 f32 rotate $r" >> $OUT/overhead.txt
  timeout 60 python3 -m kernels.overhead --shape 64x4096x64 --acc f32 --rotate $r --calls 2000 >> $OUT/overhead.txt 2>&1
done
echo "overhead at ${SECONDS}s" >> $OUT/rc.txt
OUT=$OUT/ab CAND=.carry/cand2 SHAPES_fp32=.carry/r2_changed_fp32.txt SHAPES_fp16=.carry/r2_changed_fp16.txt DEADLINE=120 SKIP_ENV=1 \
  bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab rc=$? at ${SECONDS}s" >> $OUT/rc.txt
cat $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_tests.txt | head; tail -5 $OUT/follow_test.txt; cat $OUT/ab/summary.txt; cat $OUT/overhead.txt
