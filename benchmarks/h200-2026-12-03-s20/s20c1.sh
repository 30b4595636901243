#!/usr/bin/env bash
# Session 20, call 1 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack) + .carry3/cand20 =
# `python -m tuner.committed_tables --confirm-rounds 5 --confirm-row-rounds 8 --out-dir .carry3/cand20`: col round 5
# (session 17's col grid) and row rounds 7-8 (session 18's row grid, session 19's row sample) on the committed tables):
#  1. the per-shape-variant GPU test, both accumulators (c427508 made it one parametrized test; its fp16 case's meta
#     assertion had not run on the H200);
#  2. cand20 against the committed tables on every entry it changes, both roles: col f16 (43), row f32 (1) and f16 (35).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s20; C=$PWD/.carry3/cand20
python3 -m kernels.build --tables committed,$C --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
python3 -m pytest -q -m gpu tests/tuner/test_gpu_eval.py -k per_shape_variant > $OUT/pytest_gpu_eval.txt 2>&1
echo "pytest per-shape variant rc=$? at $(el)s: $(tail -1 $OUT/pytest_gpu_eval.txt)" >> $OUT/rc.txt
OUT=$OUT/ab_col CAND=$C SHAPES_fp16=$S/ab_f16_col.txt ACCS=fp16 DEADLINE=${AB_DL:-60} BENCH_S=0.2 SKIP_ENV=1 \
  bash scripts/h200_ab.sh > /tmp/ab_col_console.txt 2>&1
echo "ab col rc=$? at $(el)s" >> $OUT/rc.txt
OUT=$OUT/ab_row CAND=$C SHAPES_fp32=$S/ab_f32_row.txt SHAPES_fp16=$S/ab_f16_row.txt B_LAYOUT=row DEADLINE=${AB_DL:-60} \
  BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_row_console.txt 2>&1
echo "ab row rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
pack_out call1
