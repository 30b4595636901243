#!/usr/bin/env bash
# Session 12, call 3 (nvidia-h200): the kernel GPU suite over every variant the image builds (default, wide_pdl_mid,
# tables_row: 161), the fast-path / dispatch / cuBLAS suites, and the A/B of the row entries rebuilt with this
# session's row records (the committed tables) against those before (BASE=.carry/base_row1: the tables of a062b0c) on
# every changed row entry and 25 of the newly tuned shapes per accumulator, both roles, B row-major.
set -u
source scripts/device_prologue.sh
SETS=${SETS:-default,wide_pdl_mid,tables_row}
python3 -m kernels.build --set $SETS --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=$SETS timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=230 \
  tests/kernels/test_gpu_kernels.py > $OUT/gpu_kernels.txt 2>&1
echo "kernel suite ($SETS) at $(el)s: $(tail -1 $OUT/gpu_kernels.txt)" >> $OUT/rc.txt
HGEMM_TEST_SET=tables timeout 80 python3 -m pytest -m gpu -q -p no:cacheprovider -o timeout=75 \
  tests/kernels/test_fastpath.py tests/kernels/test_dispatch.py tests/kernels/test_gpu_cublas.py > $OUT/gpu_dispatch.txt 2>&1
echo "dispatch suites at $(el)s: $(tail -1 $OUT/gpu_dispatch.txt)" >> $OUT/rc.txt
S=benchmarks/h200-2026-12-01-s12
OUT=$OUT/ab_row2 CAND=kernels/tables BASE=.carry/base_row1 SHAPES_fp32=$S/row2_ab_fp32.txt SHAPES_fp16=$S/row2_ab_fp16.txt \
  B_LAYOUT=row DEADLINE=${AB_DEADLINE:-100} BENCH_S=0.15 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "row ab rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -E "^(FAILED|ERROR)" $OUT/gpu_*.txt | head -20
cat $OUT/ab_row2/summary.txt
