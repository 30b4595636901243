#!/usr/bin/env bash
# Session 22, call 2 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack and the 8 variants
# the candidate runs beyond the tables, built on the CPU box) + .carry3/candLG = `python -m tuner.committed_tables
# --out-dir .carry3/candLG --loop-guard`): the loop guard (tuner/objective.py, off since session 15) against the
# committed tables. It moves eager choices only (no graph choice): 193 f32 / 65 f16 col and 276 / 125 row entries,
# among them the host-bound shapes whose eager choice is cuBLAS / cuBLASLt because no arm of ours was within the
# kernel floor (0.8), where session 21's grids measured ~10 µs more per call than on our kernels. A/B on 60 sampled
# changed entries per accumulator and layout (lg_sample_<acc>_<layout>.txt, seed 22), both roles.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s22; C=$PWD/.carry3/candLG
python3 -m kernels.build --tables committed,$C --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
for layout in col row; do
  OUT=$OUT/ab_$layout CAND=$C SHAPES_fp32=$S/lg_sample_f32_$layout.txt SHAPES_fp16=$S/lg_sample_f16_$layout.txt \
    B_LAYOUT=$layout DEADLINE=${AB_DL:-45} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_${layout}_console.txt 2>&1
  echo "ab $layout rc=$? at $(el)s" >> $OUT/rc.txt
done
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_col/summary.txt $OUT/ab_row/summary.txt
pack_out call2
