#!/usr/bin/env bash
# Session 19, call 4 (nvidia-h200, carry .whl + .carry1 + .carry2 + .carry4/cand7), at the commit that turns on col
# round 4 and row rounds 5-6 with calls 1-3's verdicts:
#  1. the committed build lets f16 col entries also take the f32 col sweep's fp32-accumulating arms, which call 3's
#     candidate (cand7: tuner.confirm on each run alone) did not: the committed tables against cand7 on the 30 f16 col
#     entries where they differ (ab_s19c4_f16_col.txt), both roles;
#  2. the row grid of the committed tables, shuffled (session 11's order, so its first shapes are session 18's),
#     f32 then f16, against torch.matmul and cuBLAS NN, deadlines from the time left (END).
set -u
source scripts/device_prologue.sh
S=${S:-benchmarks/h200-2026-12-03-s19}
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT/ab_f16col CAND=kernels/tables BASE=$PWD/.carry4/cand7 SHAPES_fp16=$S/ab_s19c4_f16_col.txt ACCS=fp16 \
  DEADLINE=40 BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab f16 col rc=$? at $(el)s" >> $OUT/rc.txt
DL=$(( (${END:-320} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=row DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn STATE=/tmp/s19c4_row SKIP_ENV=1 bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid row (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_f16col/summary.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_row/summary.txt | head -40
pack_out call4
