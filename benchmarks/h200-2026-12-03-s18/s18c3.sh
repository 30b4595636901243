#!/usr/bin/env bash
# Session 18, call 3 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack)): the candidate
# with call 2's twin sweep as round 4 of the row corrections (benchmarks/h200-2026-12-03-s18/cand_tables, built by
# `python -m tuner.committed_tables --out-dir … --confirm-row-rounds 4`) against the committed tables, both roles,
# B row-major, on every row entry the round changed (tuner.table_diff: ab_row_<acc>_row.txt).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s18
python3 -m kernels.build --tables committed,$S/cand_tables --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT/ab_row CAND=$S/cand_tables SHAPES_fp32=$S/ab_row_f32_row.txt SHAPES_fp16=$S/ab_row_f16_row.txt \
  B_LAYOUT=row DEADLINE=${AB_DEADLINE:-100} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab row rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_row/summary.txt
pack_out call3
