#!/usr/bin/env bash
# Session 12, call 1 (nvidia-h200): the kernel GPU suite at the current code over the variants carried (SETS), the
# fast-path / dispatch / cuBLAS suites, host time per cached call, and the A/B of round 1 of the row entries'
# benchmark corrections (CAND=.carry/cand_row, both roles, B row-major, NN baselines).
set -u
source scripts/device_prologue.sh
SETS=${SETS:-tables}
python3 -m kernels.build --set $SETS --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=$SETS timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=190 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite ($SETS) at $(el)s: $(tail -1 $OUT/gpu_kernels.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 80 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=75 \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
for spec in "64x4096x64 f32 col" "256x1024x512 f16 row"; do
  set -- $spec
  for rotate in 1 64 1; do
    echo "== $1 $2 $3 rotate=$rotate" >> $OUT/overhead.txt
    timeout 25 python3 -m kernels.overhead --set tables --shape $1 --acc $2 --b-layout $3 --rotate $rotate \
      --calls 1500 >> $OUT/overhead.txt 2>&1
  done
done
echo "overhead at $(el)s" >> $OUT/rc.txt
S=benchmarks/h200-2026-12-01-s11
OUT=$OUT/ab_row CAND=.carry/cand_row SHAPES_fp32=$S/row_r1_changed_fp32.txt SHAPES_fp16=$S/row_r1_changed_fp16.txt \
  B_LAYOUT=row DEADLINE=${AB_DEADLINE:-95} BENCH_S=0.15 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "row ab rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
grep -E "^==|C fast path|torch.matmul" $OUT/overhead.txt
cat $OUT/ab_row/summary.txt
