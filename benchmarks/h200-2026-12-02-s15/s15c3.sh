#!/usr/bin/env bash
# Session 15, call 3 (nvidia-h200): round 3 of the row corrections, then the col grid.
#  1. A/B of the candidate tables (.carry6/cand_tables: `python -m tuner.committed_tables --confirm-row-rounds 3`,
#     i.e. the committed tables with call 2's row grid's corrections) against the committed ones, on every changed
#     entry (row3_changed_<acc>_row.txt: 11 f32, 34 f16), both roles, B row-major;
#  2. the col grid, shuffled (session 11's order), f32 then f16, with the TN baselines (cuBLAS-tn,
#     cuBLASLt-auto-tuning-tn): the col figures of the committed tables and the data for a round 3 of the col
#     corrections.
set -u
source scripts/device_prologue.sh
S=benchmarks/h200-2026-12-02-s15
python3 -m kernels.build --tables committed,.carry6/cand_tables --dry-run 2>&1 | tail -1 > $OUT/build_dry_run.txt
echo "unpacked at $(el)s: $(cat $OUT/build_dry_run.txt)" >> $OUT/rc.txt
OUT=$OUT/ab_row CAND=.carry6/cand_tables SHAPES_fp32=$S/row3_changed_f32_row.txt SHAPES_fp16=$S/row3_changed_f16_row.txt \
  B_LAYOUT=row DEADLINE=${AB_DEADLINE:-60} BENCH_S=0.2 SKIP_ENV=1 bash scripts/h200_ab.sh > /tmp/ab_console.txt 2>&1
echo "ab row rc=$? at $(el)s" >> $OUT/rc.txt
DL=$(( (565 - $(el)) / 2 - 15 ))
OUT=$OUT/grid_col GRID=tuner/grids/grid_1000.txt SHUFFLE=1 B_LAYOUT=col DEADLINE=$DL WARMUP_S=0.05 BENCH_S=0.2 \
  BASELINES=torch.matmul,cuBLAS-tn,cuBLASLt-auto-tuning-tn STATE=/tmp/s15c3 SKIP_ENV=1 \
  bash scripts/h200_eval.sh > /tmp/eval_console.txt 2>&1
echo "grid col (deadline $DL s each) rc=$? at $(el)s" >> $OUT/rc.txt
cat $OUT/env.txt $OUT/rc.txt; cat $OUT/ab_row/summary.txt
grep -E "==|torch.matmul|cuBLAS|kernel timing|call timing" $OUT/grid_col/summary.txt | head -40
