#!/usr/bin/env bash
# Session 18, call 3 (nvidia-h200, carry .whl + .carry1 (tables pack) + .carry2 (tables_row pack)), at the commit
# that turns round 4 (call 2's twin sweep) on:
#  1. the f16 row entries where the committed tables differ from call 2's A/B candidate (call3_f16_borrow.txt, 42):
#     `tuner.committed_tables` lets f16 take the f32 sweep's fp32-accumulating arms (_grid_round), which call 2's
#     candidate (tuner.confirm on the f16 run alone) did not; the committed tables against that candidate, both roles;
#  2. the row grid of the committed tables, shuffled (session 11's order), f32 then f16, against torch.matmul and
#     cuBLAS NN, deadlines from the time left (END).
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-03-s18; B=/tmp/s18_call2_cand; mkdir -p $B
for a in f32 f16; do gunzip -c $S/call2/cand_tables/sm90_$a.json.gz > $B/sm90_$a.json; done
python3 -m kernels.build --tables committed --dry-run 2>&1 | tail -1 >> $OUT/rc.txt
OUT=$OUT/ab_borrow CAND=kernels/tables BASE=$B SHAPES_fp16=$S/call3_f16_borrow.txt ACCS=fp16 B_LAYOUT=row \
  DEADLINE=${AB_DEADLINE:-60} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab borrow rc=$? at $(el)s" >> $OUT/rc.txt
DL=$(( (${END:-560} - $(el)) / 2 - 12 ))
OUT=$OUT/grid_row GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=row DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-nn STATE=/tmp/s18c3_row SKIP_ENV=1 bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid row (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; grep -v " rc=" $OUT/ab_borrow/summary.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_row/summary.txt | head -40
pack_out call3
