#!/usr/bin/env bash
# Session 12, call 6 (nvidia-h200): the A/B of round 2 of the row entries' benchmark corrections (CAND=.carry/cand_row_r2
# = `python -m tuner.committed_tables --confirm-row-rounds 2`, from call 4's row grid) on the entries it changes
# (row_r2_changed_<acc>.txt: 13 f32 / 30 f16), both roles, B row-major.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-01-s12
OUT=$OUT/ab_row_r2 CAND=.carry/cand_row_r2 SHAPES_fp32=$S/row_r2_changed_fp32.txt SHAPES_fp16=$S/row_r2_changed_fp16.txt \
  B_LAYOUT=row DEADLINE=${AB_DEADLINE:-35} BENCH_S=0.15 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "row ab rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/ab_row_r2/summary.txt
